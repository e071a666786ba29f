// The registry of families: each arch/<family>.cpp defines one FamilyDef.
#pragma once

#include "arc/gguf.h"
#include "arc/model_arch.h"
#include "arc/model_config.h"
#include "model/blocks.h"

namespace arc::arch {

struct FamilyDef {
  FamilySpec spec;
  // Reads the family's own metadata keys and flags into cfg (common keys are already read).
  Status (*read_config)(const gguf::File& file, ModelConfig& cfg);
  // Enqueues one layer.
  void (*layer)(LayerContext& c);
};

const FamilyDef& llama_family();
const FamilyDef& qwen3_family();
const FamilyDef& qwen2moe_family();
const FamilyDef& qwen3moe_family();
const FamilyDef& qwen3vlmoe_family();
const FamilyDef& glm4moe_family();
const FamilyDef& minimax_m2_family();
const FamilyDef& gpt_oss_family();
const FamilyDef& deepseek2_family();
const FamilyDef& qwen3next_family();

const FamilyDef& family_def(Family f);

// Shared metadata helpers for the family files: "<arch>.<suffix>".
Status read_int(const gguf::File& f, std::string_view arch, std::string_view suffix, bool required,
                int64_t& out);
bool file_has_tensor(const gguf::File& f, std::string_view name);
// "<arch>.<suffix>" as a number or bool (out unchanged when absent).
Status read_float(const gguf::File& f, std::string_view arch, std::string_view suffix, float& out);
Status read_bool(const gguf::File& f, std::string_view arch, std::string_view suffix, bool& out);
// Sigmoid routing from "<arch>.expert_gating_func" (llama.cpp: 1 softmax, 2 sigmoid); absent
// keeps `fallback`. Other functions are refused.
Status read_gating(const gguf::File& f, std::string_view arch, bool fallback, bool& sigmoid);

}  // namespace arc::arch
