// The fit calculator's view of a GGUF file on a web server (a Hugging Face "resolve" URL): only
// the header is read, through HTTP range requests, and gives the same ModelSpec as the local
// file would (arc/fit_gguf.h).
//
// The first request asks for `first_range_bytes`; while the header goes on past what was read
// (vocabularies of 150k tokens make headers of several MB) the range doubles, up to
// `max_header_bytes`. Redirects are followed (the hub answers "resolve" with a redirect to its
// storage, sometimes relative); the token goes only to the origin it was meant for. A split model
// (NAME-00001-of-00003.gguf, any part given) reads every part's header and sums the parts.
#pragma once

#include <cstdint>
#include <string>

#include <optional>

#include "arc/fit.h"
#include "arc/gguf.h"
#include "arc/status.h"

namespace arc::fit {

struct RemoteOptions {
  std::string bearer_token;  // gated repositories: "Authorization: Bearer TOKEN" (same origin)
  uint64_t first_range_bytes = uint64_t{1} << 20;
  uint64_t max_header_bytes = uint64_t{256} << 20;
  int timeout_s = 30;  // per request: connect and each read
};

struct RemoteSpec {
  ModelSpec spec;
  uint64_t file_bytes = 0;  // all parts together
  size_t n_files = 1;
  uint64_t bytes_read = 0;  // header bytes fetched over all parts
  int requests = 0;         // range requests made (redirect hops not counted)
  // The header as read (metadata and tensor infos, no tensor data): what a local file's
  // header gives, e.g. for the tensor-parallel split.
  std::optional<gguf::File> header;
};

Result<RemoteSpec> model_spec_from_gguf_url(const std::string& url,
                                            const RemoteOptions& options = {});

}  // namespace arc::fit
