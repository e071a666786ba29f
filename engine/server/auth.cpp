#include "auth.h"

#include <openssl/crypto.h>
#include <openssl/sha.h>

#include <array>

namespace arc::server {
namespace {

std::array<unsigned char, SHA256_DIGEST_LENGTH> sha256(std::string_view s) {
  std::array<unsigned char, SHA256_DIGEST_LENGTH> d{};
  SHA256(reinterpret_cast<const unsigned char*>(s.data()), s.size(), d.data());
  return d;
}

char lower(char c) {
  return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
}

}  // namespace

std::optional<std::string_view> bearer_token(std::string_view authorization) {
  constexpr std::string_view kScheme = "bearer";
  if (authorization.size() <= kScheme.size()) return std::nullopt;
  for (size_t i = 0; i < kScheme.size(); ++i) {
    if (lower(authorization[i]) != kScheme[i]) return std::nullopt;
  }
  std::string_view rest = authorization.substr(kScheme.size());
  if (rest.front() != ' ' && rest.front() != '\t') return std::nullopt;
  while (!rest.empty() && (rest.front() == ' ' || rest.front() == '\t')) rest.remove_prefix(1);
  while (!rest.empty() && (rest.back() == ' ' || rest.back() == '\t')) rest.remove_suffix(1);
  if (rest.empty()) return std::nullopt;
  return rest;
}

bool api_key_matches(std::string_view supplied, std::string_view key) {
  const auto a = sha256(supplied);
  const auto b = sha256(key);
  const bool same = CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
  return same && !supplied.empty();
}

bool request_has_api_key(std::string_view authorization, std::string_view x_api_key,
                         std::string_view key) {
  // Both checks always run, so the time does not tell which header was looked at.
  const auto token = bearer_token(authorization);
  const bool by_bearer = api_key_matches(token.value_or(std::string_view{}), key);
  const bool by_header = api_key_matches(x_api_key, key);
  return by_bearer || by_header;
}

}  // namespace arc::server
