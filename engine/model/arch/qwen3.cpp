// qwen3 (dense Qwen3): GQA attention with per-head q/k RMS norms and NeoX RoPE, SwiGLU FFN.
#include "model/arch/families.h"
#include "model/arch/tensor_specs.h"

namespace arc::arch {
namespace {

using namespace spec;
constexpr TensorSpec kTensors[] = {
    kTokEmbd, kOutputNorm, kOutput,    kAttnNorm, kAttnQ,   kAttnK, kAttnV,
    kAttnOut, kAttnQNorm,  kAttnKNorm, kFfnNorm,  kFfnGate, kFfnUp, kFfnDown,
};

Status read_config(const gguf::File& f, ModelConfig& cfg) {
  cfg.ffn = FfnKind::kDense;
  cfg.qk_norm = true;
  cfg.rope_layout = kernels::RopeLayout::kSplitHalf;
  return read_int(f, "qwen3", "feed_forward_length", true, cfg.n_ff);
}

void layer(LayerContext& c) {
  attention_block(c);
  dense_ffn_block(c);
}

}  // namespace

const FamilyDef& qwen3_family() {
  static const FamilyDef def{{Family::kQwen3, "qwen3", kTensors}, read_config, layer};
  return def;
}

}  // namespace arc::arch
