// The tensor walk over a family's table.
#include "arc/model_arch.h"

#include "model/arch/families.h"

namespace arc {

std::string_view split_name(Split s) {
  switch (s) {
    case Split::kReplicated:
      return "replicated";
    case Split::kRowsByHead:
      return "rows by head";
    case Split::kColsByHead:
      return "columns by head";
    case Split::kRows:
      return "rows";
    case Split::kCols:
      return "columns";
    case Split::kExpertRows:
      return "expert rows";
    case Split::kExpertCols:
      return "expert columns";
    case Split::kVocab:
      return "vocabulary";
    case Split::kHeads:
      return "by head";
    case Split::kHeadSlices:
      return "head slices";
  }
  return "unknown";
}

int64_t resolve_dim(const ModelConfig& c, Dim d) {
  switch (d) {
    case Dim::kEmbd:
      return c.n_embd;
    case Dim::kVocab:
      return c.n_vocab;
    case Dim::kQ:
      return c.q_dim();
    case Dim::kKv:
      return c.kv_dim();
    case Dim::kHeadDim:
      return c.head_dim;
    case Dim::kRotHalf:
      return c.rot_dim / 2;
    case Dim::kFf:
      return c.n_ff;
    case Dim::kExpert:
      return c.n_expert;
    case Dim::kFfExp:
      return c.n_ff_exp;
    case Dim::kFfShexp:
      return c.n_ff_shexp;
    case Dim::kOne:
      return 1;
    case Dim::kEmbd2:
      return 2 * c.n_embd;
    case Dim::kHead:
      return c.n_head;
    case Dim::kQLora:
      return c.q_lora_rank;
    case Dim::kKvLora:
      return c.kv_lora_rank;
    case Dim::kKvLoraRope:
      return c.kv_lora_rank + c.rot_dim;
    case Dim::kQkNope:
      return c.qk_nope_dim();
    case Dim::kVHead:
      return c.v_head_dim;
    case Dim::kQv:
      return c.n_head * c.v_head_dim;
    case Dim::kQGated:
      return 2 * c.q_dim();
    case Dim::kSsmChannels:
      return c.ssm_conv_channels();
    case Dim::kSsmInner:
      return c.ssm_inner();
    case Dim::kSsmVHeads:
      return c.ssm_v_heads;
    case Dim::kSsmBa:
      return 2 * c.ssm_v_heads;
    case Dim::kSsmKernel:
      return c.ssm_conv_kernel;
    case Dim::kSsmHeadV:
      return c.ssm_head_v_dim;
  }
  return 0;
}

namespace {

// Whether a tensor of presence p is in layer `layer` (-1: globals; >= n_layer: an MTP layer).
bool present(const ModelConfig& c, Presence p, int64_t layer) {
  const bool mtp = layer >= c.n_layer;
  switch (p) {
    case Presence::kAlways:
      return true;
    case Presence::kUntied:
      return !c.tied_embeddings;
    case Presence::kRopeFreqs:
      return c.rope_freqs;
    case Presence::kQkvBias:
      return c.qkv_bias;
    case Presence::kQkNorm:
      return c.qk_norm;
    case Presence::kDenseFfn:
      return c.dense_layer(layer);
    case Presence::kMoeFfn:
      return c.is_moe() && !c.dense_layer(layer);
    case Presence::kSharedExpert:
      return c.ffn == FfnKind::kMoeShared && !c.dense_layer(layer);
    case Presence::kNextn:
    case Presence::kNextnOptional:
      return mtp;
    case Presence::kQLora:
      return c.q_lora_rank > 0;
    case Presence::kNoQLora:
      return c.q_lora_rank == 0;
    case Presence::kFullAttn:
      return !c.layer_recurrent(layer);
    case Presence::kRecurrent:
      return c.layer_recurrent(layer);
  }
  return false;
}

}  // namespace

const FamilySpec& family_spec(Family f) {
  return arch::family_def(f).spec;
}

void for_each_tensor(const ModelConfig& cfg, const std::function<void(const TensorRef&)>& fn) {
  const FamilySpec& spec = family_spec(cfg.family);
  auto make = [&](const TensorSpec& t, int layer) {
    TensorRef r;
    r.spec = &t;
    r.layer = layer;
    r.name = layer < 0 ? std::string(t.name)
                       : "blk." + std::to_string(layer) + "." + std::string(t.name);
    for (int i = 0; i < t.n_dims; ++i) r.shape.push_back(resolve_dim(cfg, t.dims[i]));
    return r;
  };
  for (const TensorSpec& t : spec.tensors) {
    if (!t.per_layer && present(cfg, t.presence, -1)) fn(make(t, -1));
  }
  for (int64_t l = 0; l < cfg.n_layer; ++l) {
    for (const TensorSpec& t : spec.tensors) {
      if (t.per_layer && present(cfg, t.presence, l)) fn(make(t, static_cast<int>(l)));
    }
  }
}

void for_each_mtp_tensor(const ModelConfig& cfg, const std::function<void(const TensorRef&)>& fn) {
  const FamilySpec& spec = family_spec(cfg.family);
  for (int64_t l = cfg.n_layer; l < cfg.n_layer + cfg.n_nextn; ++l) {
    for (const TensorSpec& t : spec.tensors) {
      if (!t.per_layer || !present(cfg, t.presence, l)) continue;
      TensorRef r;
      r.spec = &t;
      r.layer = static_cast<int>(l);
      r.name = "blk." + std::to_string(l) + "." + std::string(t.name);
      for (int i = 0; i < t.n_dims; ++i) r.shape.push_back(resolve_dim(cfg, t.dims[i]));
      fn(r);
    }
  }
}

namespace arch {

const FamilyDef& family_def(Family f) {
  switch (f) {
    case Family::kLlama:
      return llama_family();
    case Family::kQwen3:
      return qwen3_family();
    case Family::kQwen2Moe:
      return qwen2moe_family();
    case Family::kQwen3Moe:
      return qwen3moe_family();
    case Family::kQwen3VlMoe:
      return qwen3vlmoe_family();
    case Family::kGlm4Moe:
      return glm4moe_family();
    case Family::kMiniMaxM2:
      return minimax_m2_family();
    case Family::kGptOss:
      return gpt_oss_family();
    case Family::kDeepSeek2:
      return deepseek2_family();
    case Family::kQwen3Next:
      return qwen3next_family();
  }
  return llama_family();
}

}  // namespace arch
}  // namespace arc
