// libFuzzer target: File::parse must return (ok or an error) for any bytes, never crash, read out
// of bounds or allocate without bound. Build with clang (see tests/fuzz/CMakeLists.txt).
#include <cstddef>
#include <cstdint>

#include "arc/gguf.h"
#include "arc/gguf_summary.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto r = arc::gguf::File::parse(std::span<const uint8_t>(data, size), "fuzz.gguf");
  if (r.ok()) {
    // Touch everything a valid file exposes, as inspect and the loader would.
    for (const auto& t : r->tensors()) {
      auto bytes = r->tensor_data(t);
      volatile uint8_t sink = bytes.empty() ? 0 : bytes[bytes.size() - 1];
      (void)sink;
    }
    (void)arc::gguf::to_json(arc::gguf::summarize(*r)).dump();
  }
  return 0;
}
