// Gated DeltaNet layer (qwen3next's linear attention) on the Backend interface. The input
// projections come as llama.cpp's converter writes them: attn_qkv (the conv input, q | k | v),
// attn_gate (z) and ssm_ba, whose rows are grouped per k head ([b (r) | a (r)] for each of the
// ssm_k_heads, r = v heads per k head): a gather splits them into the beta and alpha rows the
// delta rule reads. The recurrent state lives in the KV cache (arc/recurrent_state.h).
#include <cmath>

#include "model/blocks.h"

namespace arc {

void delta_net_block(LayerContext& c) {
  const ModelConfig& cfg = c.cfg();
  Backend& be = c.be;
  StepBuffers& b = c.buf;
  const int64_t t = c.n_tokens;
  const int64_t hk = cfg.ssm_k_heads, hv = cfg.ssm_v_heads;
  const int64_t dk = cfg.ssm_head_k_dim, dv = cfg.ssm_head_v_dim;
  const int64_t channels = cfg.ssm_conv_channels(), inner = cfg.ssm_inner();

  be.rms_norm(b.x, c.w(TensorRole::kAttnNorm).f32(), b.xn, t, cfg.n_embd, cfg.rms_eps);
  {
    const kernels::MatmulArgs mm[3] = {
        linear_args(c.w(TensorRole::kSsmQkv), b.xn, t, b.ssm_mix),  // [t, channels]
        linear_args(c.w(TensorRole::kSsmGate), b.xn, t, b.ssm_z),   // [t, inner]
        linear_args(c.w(TensorRole::kSsmBa), b.xn, t, b.ssm_ba)};   // [t, hk, 2, hv / hk]
    be.matmul_multi(mm);
  }
  // ssm_ba as rows of hv / hk values: even rows are beta inputs, odd rows alpha inputs; each
  // gather gives [t, hv] in v-head order.
  const int64_t r = hv / hk;
  be.gather(b.ssm_ba, b.even_rows, t * hk, r, b.ssm_ab);
  be.gather(b.ssm_ba, b.odd_rows, t * hk, r, b.ssm_ab + t * hv);

  kernels::DeltaConvArgs cv;
  cv.x = b.ssm_mix;
  cv.y = b.ssm_conv;
  cv.weight = c.w(TensorRole::kSsmConv).f32();
  cv.conv_states = c.kv.conv_states(c.layer);
  cv.token_state = b.token_state;
  cv.token_snapshot = b.token_snapshot;
  cv.n_tokens = t;
  cv.channels = channels;
  cv.kernel = cfg.ssm_conv_kernel;
  be.delta_net_conv(cv);

  kernels::GatedDeltaRuleArgs g;
  g.q = b.ssm_conv;
  g.k = b.ssm_conv + hk * dk;
  g.v = b.ssm_conv + 2 * hk * dk;
  g.qkv_stride = channels;
  g.b = b.ssm_ab;
  g.a = b.ssm_ab + t * hv;
  g.ab_stride = hv;
  g.a_log = c.w(TensorRole::kSsmA).f32();  // A_log (the loader took the log of -A)
  g.dt_bias = c.w(TensorRole::kSsmDtBias).f32();
  g.out = b.ssm_o;
  g.delta_states = c.kv.delta_states(c.layer);
  g.token_state = b.token_state;
  g.token_snapshot = b.token_snapshot;
  g.n_tokens = t;
  g.n_k_heads = hk;
  g.n_v_heads = hv;
  g.head_k_dim = dk;
  g.head_v_dim = dv;
  g.scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(dk)));
  g.l2_eps = cfg.rms_eps;
  be.gated_delta_rule(g);

  kernels::GatedRmsNormArgs n;
  n.x = b.ssm_o;
  n.w = c.w(TensorRole::kSsmNorm).f32();
  n.z = b.ssm_z;
  n.z_token_stride = inner;
  n.heads_per_token = hv;
  n.y = b.ssm_o;
  n.n_rows = t * hv;
  n.d = dv;
  n.eps = cfg.rms_eps;
  be.gated_rms_norm(n);

  linear(be, c.w(TensorRole::kSsmOut), b.ssm_o, t, block_output(c), /*accumulate=*/!c.tp);
  reduce_block_output(c);
}

}  // namespace arc
