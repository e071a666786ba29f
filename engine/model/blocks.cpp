// Shared transformer blocks on the Backend interface.
#include "model/blocks.h"

namespace arc {

kernels::MatmulArgs linear_args(const Weight& w, const float* x, int64_t n_tokens, float* y,
                                bool accumulate) {
  kernels::MatmulArgs a;
  a.w = w.data;
  a.w_type = w.type;
  a.n_in = w.shape[0];
  a.n_out = w.shape.size() > 1 ? w.shape[1] : 1;
  a.w_row_bytes = w.row_bytes;
  a.x = x;
  a.n_tokens = n_tokens;
  a.y = y;
  a.accumulate = accumulate;
  return a;
}

void linear(Backend& be, const Weight& w, const float* x, int64_t n_tokens, float* y,
            bool accumulate) {
  be.matmul(linear_args(w, x, n_tokens, y, accumulate));
}

namespace {

// Where a block writes its output: x itself, or with tensor parallelism this rank's partial sum.
float* block_target(LayerContext& c) {
  return c.tp ? c.buf.partial : c.buf.x;
}

// Tensor parallelism: p[0, n) summed over the ranks, in place.
void all_reduce(LayerContext& c, float* p, int64_t n) {
  // A host-memory collective (MPI) needs the values computed; one on the backend's stream
  // (NCCL) is ordered after them.
  Status s = c.tp->on_stream() ? ok_status() : c.be.sync();
  if (s.ok()) s = c.tp->all_reduce_sum(p, n);
  if (!s.ok() && c.tp_status.ok()) c.tp_status = s;
}

// Biases of a projection whose output is summed over the ranks: added by rank 0 only.
bool adds_replicated_bias(const LayerContext& c) {
  return c.tp == nullptr || c.tp->rank() == 0;
}

// Tensor parallelism, a rank that holds none of a block's width (fewer quantization blocks than
// ranks, arc/tp_split.h): its share of the block's output is zeros.
void zero_target(LayerContext& c) {
  const int64_t n = c.n_tokens * c.cfg().n_embd;
  c.be.add(c.buf.zeros, c.buf.zeros, block_target(c), n);
}

// Tensor parallelism: x += sum over ranks of the partial outputs.
void reduce_block(LayerContext& c) {
  if (c.tp == nullptr) return;
  const int64_t n = c.n_tokens * c.cfg().n_embd;
  all_reduce(c, c.buf.partial, n);
  c.be.add(c.buf.x, c.buf.partial, c.buf.x, n);
}

// q and k RMS-normed over their whole vectors (minimax-m2). Under tensor parallelism each rank
// holds some heads: the sums of squares of q and k are summed over the ranks (one collective of
// 2 x n_tokens values) before the scaling. A KV head held by several ranks adds its squares once
// per copy and zero heads add none: the plan's widths (tp_norm_*_width) count exactly that.
void full_width_qk_norm(LayerContext& c) {
  const ModelConfig& cfg = c.cfg();
  StepBuffers& b = c.buf;
  const int64_t t = c.n_tokens;
  const float* wq = c.w(TensorRole::kAttnQNorm).f32();
  const float* wk = c.w(TensorRole::kAttnKNorm).f32();
  if (c.tp == nullptr) {
    c.be.rms_norm(b.q, wq, b.q, t, cfg.q_dim(), cfg.rms_eps);
    c.be.rms_norm(b.k, wk, b.k, t, cfg.kv_dim(), cfg.rms_eps);
    return;
  }
  c.be.sum_squares(b.q, b.sumsq, t, cfg.q_dim());
  c.be.sum_squares(b.k, b.sumsq + t, t, cfg.kv_dim());
  all_reduce(c, b.sumsq, 2 * t);
  const int64_t ranks = c.tp->size();
  const int64_t q_total = cfg.tp_norm_q_width > 0 ? cfg.tp_norm_q_width : cfg.q_dim() * ranks;
  const int64_t k_total = cfg.tp_norm_k_width > 0 ? cfg.tp_norm_k_width : cfg.kv_dim() * ranks;
  c.be.rms_norm_sumsq(b.q, wq, b.sumsq, b.q, t, cfg.q_dim(), q_total, cfg.rms_eps);
  c.be.rms_norm_sumsq(b.k, wk, b.sumsq + t, b.k, t, cfg.kv_dim(), k_total, cfg.rms_eps);
}

}  // namespace

float* block_output(LayerContext& c) {
  return block_target(c);
}

void reduce_block_output(LayerContext& c) {
  reduce_block(c);
}

void attention_block(LayerContext& c) {
  const ModelConfig& cfg = c.cfg();
  Backend& be = c.be;
  StepBuffers& b = c.buf;
  const int64_t t = c.n_tokens;

  be.rms_norm(b.x, c.w(TensorRole::kAttnNorm).f32(), b.xn, t, cfg.n_embd, cfg.rms_eps);
  if (cfg.attn_out_gate) {
    // qwen3next: attn_q yields per head [q | gate]; q is gathered out of the even head_dim rows,
    // the gate is read in place (odd rows) by the sigmoid_mul after attention.
    const kernels::MatmulArgs qkv[3] = {linear_args(c.w(TensorRole::kAttnQ), b.xn, t, b.q_gated),
                                        linear_args(c.w(TensorRole::kAttnK), b.xn, t, b.k),
                                        linear_args(c.w(TensorRole::kAttnV), b.xn, t, b.v)};
    be.matmul_multi(qkv);
    be.gather(b.q_gated, b.even_rows, t * cfg.n_head, cfg.head_dim, b.q);
  } else {
    const kernels::MatmulArgs qkv[3] = {linear_args(c.w(TensorRole::kAttnQ), b.xn, t, b.q),
                                        linear_args(c.w(TensorRole::kAttnK), b.xn, t, b.k),
                                        linear_args(c.w(TensorRole::kAttnV), b.xn, t, b.v)};
    be.matmul_multi(qkv);  // one dispatch and one quantization of xn in decode
  }
  if (cfg.qkv_bias) {
    be.add_bias(b.q, c.w(TensorRole::kAttnQBias).f32(), t, cfg.q_dim());
    be.add_bias(b.k, c.w(TensorRole::kAttnKBias).f32(), t, cfg.kv_dim());
    be.add_bias(b.v, c.w(TensorRole::kAttnVBias).f32(), t, cfg.kv_dim());
  }
  if (cfg.qk_norm_full) {
    full_width_qk_norm(c);
  } else if (cfg.qk_norm) {  // per head: q viewed as [t * n_head, head_dim]
    be.rms_norm(b.q, c.w(TensorRole::kAttnQNorm).f32(), b.q, t * cfg.n_head, cfg.head_dim,
                cfg.rms_eps);
    be.rms_norm(b.k, c.w(TensorRole::kAttnKNorm).f32(), b.k, t * cfg.n_kv_head, cfg.head_dim,
                cfg.rms_eps);
  }
  kernels::RopeArgs r;
  r.n_tokens = t;
  r.head_dim = cfg.head_dim;
  r.rot_dim = cfg.rot_dim;
  r.pos = b.pos;
  r.layout = cfg.rope_layout;
  r.theta_base = cfg.rope_theta;
  r.freq_scale = cfg.rope_freq_scale;
  r.ext_factor = cfg.rope_ext_factor;
  r.attn_factor = cfg.rope_attn_factor;
  r.beta_fast = cfg.yarn_beta_fast;
  r.beta_slow = cfg.yarn_beta_slow;
  r.n_ctx_orig = cfg.rope_n_ctx_orig;
  const Weight& ff = c.model.global(TensorRole::kRopeFreqs);
  r.freq_factors = ff.present() ? ff.f32() : nullptr;
  if (b.mrope_pos != nullptr) {
    // Interleaved multi-axis RoPE: one pass per axis over its own pairs (the others masked).
    const int64_t half = (cfg.rot_dim > 0 ? cfg.rot_dim : cfg.head_dim) / 2;
    for (int axis = 0; axis < 3; ++axis) {
      r.pos = b.mrope_pos + axis * t;
      r.freq_factors = b.mrope_factors + axis * half;
      r.x = b.q;
      r.n_heads = cfg.n_head;
      be.rope(r);
      r.x = b.k;
      r.n_heads = cfg.n_kv_head;
      be.rope(r);
    }
  } else {
    r.x = b.q;
    r.n_heads = cfg.n_head;
    be.rope(r);
    r.x = b.k;
    r.n_heads = cfg.n_kv_head;
    be.rope(r);
  }

  const KvCacheOptions& kvo = c.kv.options();
  const bool windowed = c.kv.layer_windowed(c.layer);
  kernels::KvStoreArgs s;
  s.k = b.k;
  s.v = b.v;
  s.k_cache = c.kv.k(c.layer);
  s.v_cache = c.kv.v(c.layer);
  s.kv_type = kvo.type;
  s.block_size = kvo.block_size;
  s.n_blocks = c.kv.layer_blocks(c.layer);
  s.slots = windowed ? b.window_slots : b.slots;
  s.n_tokens = t;
  s.n_kv_head = cfg.n_kv_head;
  s.head_dim = cfg.head_dim;
  be.kv_store(s);

  kernels::PagedAttentionArgs a;
  a.q = b.q;
  a.out = b.attn;
  a.n_tokens = t;
  a.n_head = cfg.n_head;
  a.n_kv_head = cfg.n_kv_head;
  a.head_dim = cfg.head_dim;
  a.k_cache = c.kv.k(c.layer);
  a.v_cache = c.kv.v(c.layer);
  a.kv_type = kvo.type;
  a.block_size = kvo.block_size;
  a.n_blocks = c.kv.layer_blocks(c.layer);
  a.token_seq = b.token_seq;
  a.token_pos = b.pos;
  a.block_tables = windowed ? b.window_tables : b.block_tables;
  a.max_blocks_per_seq = b.max_blocks;
  a.sliding_window = cfg.layer_is_swa(c.layer) ? cfg.sliding_window : 0;
  a.sinks = cfg.attn_sinks ? c.w(TensorRole::kAttnSinks).f32() : nullptr;
  be.paged_attention(a);

  if (cfg.attn_out_gate) {  // attn *= sigmoid(gate), per head
    kernels::SigmoidMulArgs g;
    g.x = b.attn;
    g.g = b.q_gated + cfg.head_dim;
    g.g_stride = 2 * cfg.head_dim;
    g.y = b.attn;
    g.n_rows = t * cfg.n_head;
    g.d = cfg.head_dim;
    be.sigmoid_mul(g);
  }
  linear(be, c.w(TensorRole::kAttnOut), b.attn, t, block_target(c), /*accumulate=*/!c.tp);
  if (cfg.attn_out_bias && adds_replicated_bias(c)) {
    be.add_bias(block_target(c), c.w(TensorRole::kAttnOutBias).f32(), t, cfg.n_embd);
  }
  reduce_block(c);
}

void deepstack_block(LayerContext& c) {
  const ModelConfig& cfg = c.cfg();
  if (c.buf.deepstack == nullptr || c.layer >= cfg.n_deepstack) return;
  const int64_t n = c.n_tokens * cfg.n_embd;
  c.be.add(c.buf.x, c.buf.deepstack + c.layer * n, c.buf.x, n);
}

namespace {

// out += down(silu(gate xn) * up xn) for one dense SwiGLU FFN.
void swiglu_ffn(LayerContext& c, const Weight& gate, const Weight& up, const Weight& down,
                float* out, bool accumulate) {
  StepBuffers& b = c.buf;
  const int64_t t = c.n_tokens;
  const kernels::MatmulArgs gu[2] = {linear_args(gate, b.xn, t, b.gate),
                                     linear_args(up, b.xn, t, b.up)};
  c.be.matmul_multi(gu);  // one dispatch and one quantization of xn in decode
  c.be.swiglu(b.gate, b.up, b.gate, t * gate.shape[1]);
  linear(c.be, down, b.gate, t, out, accumulate);
}

}  // namespace

void dense_ffn_block(LayerContext& c) {
  const ModelConfig& cfg = c.cfg();
  c.be.rms_norm(c.buf.x, c.w(TensorRole::kFfnNorm).f32(), c.buf.xn, c.n_tokens, cfg.n_embd,
                cfg.rms_eps);
  if (cfg.n_ff == 0) {
    zero_target(c);
  } else {
    swiglu_ffn(c, c.w(TensorRole::kFfnGate), c.w(TensorRole::kFfnUp), c.w(TensorRole::kFfnDown),
               block_target(c), /*accumulate=*/!c.tp);
  }
  reduce_block(c);
}

void moe_ffn_block(LayerContext& c) {
  const ModelConfig& cfg = c.cfg();
  Backend& be = c.be;
  StepBuffers& b = c.buf;
  const int64_t t = c.n_tokens;
  be.rms_norm(b.x, c.w(TensorRole::kFfnNorm).f32(), b.xn, t, cfg.n_embd, cfg.rms_eps);

  // The products of xn: the router, and the shared expert's gate and up (and its sigmoid gate)
  // in one dispatch with one activation quantization in decode.
  // A rank may hold none of the shared expert's width (then only its sigmoid gate is unused).
  const bool shared = cfg.ffn == FfnKind::kMoeShared && cfg.n_ff_shexp > 0;
  const Weight& shexp_gate = c.w(TensorRole::kFfnShexpGate);  // qwen2moe only
  kernels::MatmulArgs mm[4];
  size_t n_mm = 0;
  mm[n_mm++] = linear_args(c.w(TensorRole::kFfnRouter), b.xn, t, b.router);  // [t, n_expert]
  if (shared) {
    mm[n_mm++] = linear_args(c.w(TensorRole::kFfnGateShexp), b.xn, t, b.gate);  // [t, ff_shexp]
    mm[n_mm++] = linear_args(c.w(TensorRole::kFfnUpShexp), b.xn, t, b.up);      // [t, ff_shexp]
    if (shexp_gate.present()) mm[n_mm++] = linear_args(shexp_gate, b.xn, t, b.shexp_gate);
  }
  be.matmul_multi({mm, n_mm});

  if (cfg.router_bias)
    be.add_bias(b.router, c.w(TensorRole::kFfnRouterBias).f32(), t, cfg.n_expert);

  kernels::RouterArgs r;
  r.logits = b.router;
  r.n_tokens = t;
  r.n_expert = cfg.n_expert;
  r.k = cfg.n_expert_used;
  r.scoring =
      cfg.router_sigmoid ? kernels::RouterScoring::kSigmoid : kernels::RouterScoring::kSoftmax;
  const Weight& bias = c.w(TensorRole::kFfnExpProbsB);  // [n_expert] or absent
  r.bias = bias.present() ? bias.f32() : nullptr;
  r.normalize = cfg.norm_topk;
  r.weight_scale = cfg.expert_weights_scale;
  r.n_group = cfg.n_expert_group;
  r.n_group_used = cfg.n_expert_group_used;
  // Expert parallelism: ids of the experts this rank holds, -1 for the others' (skipped below).
  const bool ep = cfg.ep_n_expert > 0;
  r.expert_begin = cfg.ep_expert_begin;
  r.n_local = cfg.ep_n_expert;
  r.ids = b.expert_ids;
  r.weights = b.expert_w;
  be.moe_route(r);

  const Weight& g = c.w(TensorRole::kFfnGateExps);
  const Weight& u = c.w(TensorRole::kFfnUpExps);
  const Weight& d = c.w(TensorRole::kFfnDownExps);
  kernels::MoeFfnArgs m;
  m.x = b.xn;
  m.n_tokens = t;
  m.n_embd = cfg.n_embd;
  m.n_ff = cfg.n_ff_exp;
  m.n_expert = ep ? cfg.ep_n_expert : cfg.n_expert;  // the experts g, u, d hold
  m.k = cfg.n_expert_used;
  m.ids = b.expert_ids;
  m.weights = b.expert_w;
  m.gate = g.data;
  m.up = u.data;
  m.down = d.data;
  m.gate_type = g.type;
  m.up_type = u.type;
  m.down_type = d.type;
  m.gate_expert_bytes = g.slice_bytes;
  m.up_expert_bytes = u.slice_bytes;
  m.down_expert_bytes = d.slice_bytes;
  if (cfg.expert_bias) {
    m.gate_bias = c.w(TensorRole::kFfnGateExpsBias).f32();  // [n_expert, n_ff_exp] (this rank's)
    m.up_bias = c.w(TensorRole::kFfnUpExpsBias).f32();
    // Under EP each rank holds its experts' down biases and adds them with those experts.
    m.down_bias = ep || adds_replicated_bias(c) ? c.w(TensorRole::kFfnDownExpsBias).f32() : nullptr;
  }
  if (cfg.swiglu_oai) {
    m.act = kernels::MoeActivation::kSwiGluOai;
    m.alpha = cfg.swiglu_alpha;
    m.limit = cfg.swiglu_limit;
  }
  m.y = block_target(c);
  m.accumulate = !c.tp;
  if (cfg.n_ff_exp == 0) {
    zero_target(c);
  } else {
    be.moe_ffn(m);
  }

  if (shared) {
    const Weight& down = c.w(TensorRole::kFfnDownShexp);
    be.swiglu(b.gate, b.up, b.gate, t * down.shape[0]);
    if (shexp_gate.present()) {  // qwen2moe: scaled by sigmoid(gate_inp_shexp . xn)
      linear(be, down, b.gate, t, b.out);
      be.add_sigmoid_gated(block_target(c), b.out, b.shexp_gate, t, cfg.n_embd);
    } else {  // glm4moe: added as is, straight onto the routed experts' sum
      linear(be, down, b.gate, t, block_target(c), /*accumulate=*/true);
    }
  }
  reduce_block(c);
}

}  // namespace arc
