// Which vision projector (mmproj GGUF) goes with a vision model: the one made for it, not any
// projector that happens to sit in the same folder.
#pragma once

#include <string>
#include <vector>

#include "arc/model_config.h"

namespace arc {

struct MmprojCandidate {
  std::string path;
  bool fits = false;      // its output matches the model (hidden size, deepstack layers)
  std::string why_not;    // when it does not fit: what differs, for the log and the error
  size_t name_match = 0;  // characters of the model's base name it shares (see mmproj_base_name)
};

// The part of a file name that names the model: lower case, without ".gguf", a leading "mmproj"
// and separators, split-file and quantization suffixes ("-Q4_K_M", "-F16", "-00001-of-00003").
std::string mmproj_base_name(const std::string& file_name);

// Every mmproj*.gguf beside `model_path` (or general.architecture "clip"), judged for `cfg`.
std::vector<MmprojCandidate> mmproj_candidates(const std::string& model_path,
                                               const ModelConfig& cfg);

// The projector to pair automatically: among those that fit, the one whose name shares the most
// with the model's; "" when none fits (the candidates' why_not say why, and are logged).
std::string find_paired_mmproj(const std::string& model_path, const ModelConfig& cfg);

}  // namespace arc
