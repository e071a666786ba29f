// API key checks for every route but /health: the scheme and comparison, apart from the HTTP
// transport so they can be tested and fuzzed alone.
#pragma once

#include <optional>
#include <string_view>

namespace arc::server {

// The token of an "Authorization: Bearer TOKEN" header. The scheme is case-insensitive
// (RFC 9110 section 11.1) and may be followed by any amount of spaces or tabs; nullopt for
// other schemes or a missing token.
std::optional<std::string_view> bearer_token(std::string_view authorization);

// Compares a key sent by a client with the configured one in time that depends on neither's
// content nor the configured key's length: both are hashed (SHA-256) and the fixed-size
// digests compared in constant time. An empty `supplied` never matches.
bool api_key_matches(std::string_view supplied, std::string_view key);

// Whether a request carries `key` in "Authorization: Bearer KEY" or in "x-api-key: KEY".
bool request_has_api_key(std::string_view authorization, std::string_view x_api_key,
                         std::string_view key);

}  // namespace arc::server
