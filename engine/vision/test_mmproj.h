// Tiny random Qwen3-VL vision projectors (mmproj GGUF) for tests and `make-test-model --mmproj`:
// the layout llama.cpp's converter writes (mmproj_arch.h), fixed-seed weights scaled so every
// stage keeps unit-order activations.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "arc/status.h"

namespace arc::vision {

struct TestMmprojOptions {
  int64_t n_embd = 32;  // encoder width
  int64_t n_ff = 64;
  int64_t n_layer = 3;
  int64_t n_head = 2;  // head dim n_embd / n_head, a multiple of 4
  int64_t patch_size = 4;
  int64_t merge_size = 2;
  int64_t pos_side = 6;                            // learned position grid pos_side x pos_side
  int64_t proj_dim = 64;                           // the language model's hidden size
  std::vector<int64_t> deepstack_layers = {0, 1};  // must match the LM's n_deepstack_layers count
  std::string type = "F32";                        // matrices: F32, F16, Q8_0 (rows permitting)
  uint64_t seed = 1;
};

Status write_test_mmproj(const TestMmprojOptions& opt, const std::string& path);
Result<std::vector<uint8_t>> build_test_mmproj(const TestMmprojOptions& opt);

}  // namespace arc::vision
