// libFuzzer target: request bodies of both dialects, parsed and rendered with real chat
// templates (see chat_request_fuzz.h and tests/fuzz/CMakeLists.txt for how to run it).
#include <cstddef>
#include <cstdint>

#include "chat_request_fuzz.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  arc::fuzz::run_chat_request_input(std::string_view(reinterpret_cast<const char*>(data), size));
  return 0;
}
