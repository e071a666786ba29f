// qwen3vlmoe (Qwen3-VL-30B-A3B, Qwen3-VL-235B-A22B), the language half; the vision half is an
// mmproj file (engine/vision). The layers are qwen3moe's (GQA with q/k RMS norms, NeoX-style
// pairs, softmax top-k MoE), with two additions:
//  - interleaved multi-axis RoPE: image tokens rotate by (t, row, col) positions, text tokens by
//    their position on every axis (rope.dimension_sections, e.g. {24, 20, 20, 0});
//  - deepstack: after layer l < n_deepstack_layers, the image tokens' hidden states get the
//    encoder's l-th deepstack feature added (zero for text tokens).
// Both arrive through the batch (arc/forward.h); a text-only batch runs exactly as qwen3moe.
#include "model/arch/families.h"
#include "model/arch/tensor_specs.h"

namespace arc::arch {
namespace {

using namespace spec;
constexpr TensorSpec kTensors[] = {
    kTokEmbd,   kOutputNorm, kOutput,  kAttnNorm,  kAttnQ,       kAttnK,     kAttnV,       kAttnOut,
    kAttnQNorm, kAttnKNorm,  kFfnNorm, kFfnRouter, kFfnGateExps, kFfnUpExps, kFfnDownExps,
};

// Metadata keys (gguf-py: {arch}.rope.dimension_sections, {arch}.n_deepstack_layers).
constexpr std::string_view kArch = "qwen3vlmoe";
constexpr std::string_view kSections = "rope.dimension_sections";
constexpr std::string_view kDeepstack = "n_deepstack_layers";

Status read_config(const gguf::File& f, ModelConfig& cfg) {
  cfg.ffn = FfnKind::kMoe;
  cfg.qk_norm = true;
  cfg.norm_topk = true;
  cfg.rope_layout = kernels::RopeLayout::kSplitHalf;
  ARC_RETURN_IF_ERROR(read_int(f, kArch, "expert_count", true, cfg.n_expert));
  ARC_RETURN_IF_ERROR(read_int(f, kArch, "expert_used_count", true, cfg.n_expert_used));
  ARC_RETURN_IF_ERROR(read_int(f, kArch, "expert_feed_forward_length", true, cfg.n_ff_exp));
  ARC_RETURN_IF_ERROR(read_int(f, kArch, kDeepstack, false, cfg.n_deepstack));
  const std::string key = std::string(kArch) + "." + std::string(kSections);
  auto sec = f.get_int_array(key);
  if (!sec) return invalid_argument("missing or non-integer metadata array '" + key + "'");
  if (sec->size() < 3 || sec->size() > 4) {
    return invalid_argument("metadata array '" + key + "' must hold 3 or 4 section sizes");
  }
  for (size_t i = 0; i < sec->size(); ++i) {
    if ((*sec)[i] < 0 || (*sec)[i] > 4096) {
      return invalid_argument("metadata array '" + key + "' holds an invalid section size");
    }
    cfg.rope_sections[i] = static_cast<int32_t>((*sec)[i]);
  }
  if (!cfg.mrope()) return invalid_argument("metadata array '" + key + "' is all zero");
  return ok_status();
}

void layer(LayerContext& c) {
  attention_block(c);
  moe_ffn_block(c);
  deepstack_block(c);
}

}  // namespace

const FamilyDef& qwen3vlmoe_family() {
  static const FamilyDef def{{Family::kQwen3VlMoe, kArch, kTensors}, read_config, layer};
  return def;
}

}  // namespace arc::arch
