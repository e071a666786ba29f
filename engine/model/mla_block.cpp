// Multi-head latent attention (deepseek2) on the Backend interface. The cache holds per token
// only the normalised latent and the rotated rope key (kernels/mla.h). Two forms:
//  - absorbed (decode, and any step where it is cheaper): each head's query is taken into latent
//    space through k_b, attends over the latents, and its latent-space output leaves through v_b;
//  - plain (long prefill chunks): the context rows' latents are gathered and decompressed once
//    per head into keys k_nope = k_b^T latent and values v = v_b latent, and the tokens run
//    ordinary attention over them (with the shared rope key).
// mla_plain_cheaper() picks by multiply-adds; the executor (MlaPlainPlan) applies it per step.
#include <algorithm>
#include <vector>

#include "model/blocks.h"

namespace arc {

namespace {

// The rows [row0, row0 + n_out) of a 2-D weight as a matmul of x.
kernels::MatmulArgs rows_args(const Weight& w, int64_t row0, int64_t n_out, const float* x,
                              int64_t n_tokens, float* y) {
  kernels::MatmulArgs a = linear_args(w, x, n_tokens, y);
  a.w = static_cast<const uint8_t*>(w.data) + static_cast<size_t>(row0) * w.row_bytes;
  a.n_out = n_out;
  return a;
}

// y[t, h, :] = w[h] x[t, h, :] for every head h of a 3-D per-head weight w (shape [n_in, n_out,
// n_head]); x rows of x_stride floats hold the heads x_head apart, y is [n_tokens, n_head, n_out].
// One batched op: in decode each head's product is a small matrix-vector product.
void per_head_linear(Backend& be, const Weight& w, const float* x, int64_t x_head, int64_t x_stride,
                     int64_t n_tokens, float* y) {
  const int64_t n_head = w.shape[2], n_out = w.shape[1];
  std::vector<kernels::MatmulArgs> args(static_cast<size_t>(n_head));
  for (int64_t h = 0; h < n_head; ++h) {
    kernels::MatmulArgs& a = args[static_cast<size_t>(h)];
    a.w = static_cast<const uint8_t*>(w.data) + static_cast<size_t>(h) * w.slice_bytes;
    a.w_type = w.type;
    a.n_in = w.shape[0];
    a.n_out = n_out;
    a.w_row_bytes = w.row_bytes;
    a.x = x + h * x_head;
    a.x_stride = x_stride;
    a.n_tokens = n_tokens;
    a.y = y + h * n_out;
    a.y_stride = n_head * n_out;
  }
  be.matmul_batch(args);
}

}  // namespace

// Multiply-adds per head of a step of T tokens over P context rows with S (token, visible
// position) pairs, r = kv_lora_rank, n = no-rope dim, e = rope dim, v = value dim:
//   absorbed: T r n (q_lat = k_b q_nope) + S (r + e) (scores) + S r (values) + T r v (v_b)
//   plain:    P r n (keys) + P r v (values, both decompressed once per row) + S (n + e) + S v
// The plain form wins once a chunk's queries share enough rows: with DeepSeek's r 512, n 128,
// e 64, v 128 always for a fresh prompt (P = T), never for a decode token after position 0
// (T = 1, S = P), and after a long prefix once T > r (n + v) / (2r - n - v), about 171.
bool mla_plain_cheaper(const ModelConfig& c, int64_t n_tokens, int64_t n_rows, int64_t n_pairs) {
  const double r = static_cast<double>(c.kv_lora_rank), n = static_cast<double>(c.qk_nope_dim());
  const double e = static_cast<double>(c.rot_dim), v = static_cast<double>(c.v_head_dim);
  const double t = static_cast<double>(n_tokens), p = static_cast<double>(n_rows);
  const double s = static_cast<double>(n_pairs);
  const double absorbed = t * r * n + s * (r + e) + s * r + t * r * v;
  const double plain = p * r * n + p * r * v + s * (n + e) + s * v;
  return plain < absorbed;
}

void mla_attention_block(LayerContext& c) {
  const ModelConfig& cfg = c.cfg();
  Backend& be = c.be;
  StepBuffers& b = c.buf;
  const int64_t t = c.n_tokens;
  const int64_t r = cfg.kv_lora_rank, rot = cfg.rot_dim, nope = cfg.qk_nope_dim();
  const int64_t hd = cfg.head_dim;  // q heads are [nope | rope]
  const Weight& kv_a = c.w(TensorRole::kAttnKvAMqa);

  be.rms_norm(b.x, c.w(TensorRole::kAttnNorm).f32(), b.xn, t, cfg.n_embd, cfg.rms_eps);
  {
    // The products of xn in one dispatch: the q LoRA (or q itself), the latent, the rope key.
    kernels::MatmulArgs mm[3];
    mm[0] = cfg.q_lora_rank > 0 ? linear_args(c.w(TensorRole::kAttnQA), b.xn, t, b.q_a)
                                : linear_args(c.w(TensorRole::kAttnQ), b.xn, t, b.q);
    mm[1] = rows_args(kv_a, 0, r, b.xn, t, b.lat);    // [t, kv_lora_rank]
    mm[2] = rows_args(kv_a, r, rot, b.xn, t, b.kpe);  // [t, rot_dim]
    be.matmul_multi(mm);
  }
  if (cfg.q_lora_rank > 0) {
    be.rms_norm(b.q_a, c.w(TensorRole::kAttnQANorm).f32(), b.q_a, t, cfg.q_lora_rank, cfg.rms_eps);
    linear(be, c.w(TensorRole::kAttnQB), b.q_a, t, b.q);  // [t, n_head, head_dim]
  }
  be.rms_norm(b.lat, c.w(TensorRole::kAttnKvANorm).f32(), b.lat, t, r, cfg.rms_eps);

  // RoPE on the rope part of each q head (a view starting after the no-rope part: the kernel
  // rotates the first rot_dim values of every head_dim-long head) and on the shared rope key.
  kernels::RopeArgs ra;
  ra.n_tokens = t;
  ra.pos = b.pos;
  ra.layout = cfg.rope_layout;
  ra.theta_base = cfg.rope_theta;
  ra.freq_scale = cfg.rope_freq_scale;
  ra.ext_factor = cfg.rope_ext_factor;
  ra.attn_factor = cfg.rope_attn_factor;
  ra.beta_fast = cfg.yarn_beta_fast;
  ra.beta_slow = cfg.yarn_beta_slow;
  ra.n_ctx_orig = cfg.rope_n_ctx_orig;
  ra.x = b.q + nope;
  ra.n_heads = cfg.n_head;
  ra.head_dim = hd;
  ra.rot_dim = rot;
  be.rope(ra);
  ra.x = b.kpe;
  ra.n_heads = 1;
  ra.head_dim = rot;
  be.rope(ra);

  const KvCacheOptions& kvo = c.kv.options();
  kernels::MlaKvStoreArgs s;
  s.latent = b.lat;
  s.kpe = b.kpe;
  s.cache = c.kv.k(c.layer);
  s.kv_type = kvo.type;
  s.slots = b.slots;
  s.n_tokens = t;
  s.kv_lora_rank = r;
  s.rope_dim = rot;
  be.mla_kv_store(s);

  if (b.mla_rows > 0) {
    // Plain form. The context rows [P, r | rot] in F32 (this step's rows are in the cache now).
    const int64_t n_rows = b.mla_rows, w = r + rot;
    be.get_rows(kvo.type, c.kv.k(c.layer), kvo.n_blocks * kvo.block_size, w, b.mla_row_slots,
                n_rows, b.mla_gathered);
    // k_nope[j, h] = k_b[h]^T latent_j: [P, n_head, nope] in q_lat's buffer; v[j, h] =
    // v_b[h] latent_j: [P, n_head, v_head_dim] in o_lat's (MlaPlainPlan sized P to fit both).
    per_head_linear(be, c.model.mla_k_b_t(c.layer), b.mla_gathered, 0, w, n_rows, b.q_lat);
    per_head_linear(be, c.w(TensorRole::kAttnVB), b.mla_gathered, 0, w, n_rows, b.o_lat);
    kernels::MlaPlainAttentionArgs pa;
    pa.q = b.q;
    pa.q_token_stride = cfg.n_head * hd;
    pa.q_head_stride = hd;
    pa.k_nope = b.q_lat;
    pa.kpe = b.mla_gathered + r;
    pa.kpe_stride = w;
    pa.v = b.o_lat;
    pa.out = b.attn;  // [t, n_head, v_head_dim]
    pa.n_tokens = t;
    pa.n_head = cfg.n_head;
    pa.nope_dim = nope;
    pa.rope_dim = rot;
    pa.v_dim = cfg.v_head_dim;
    pa.token_row0 = b.mla_token_row0;
    pa.token_pos = b.pos;
    pa.scale = cfg.attn_scale;
    be.mla_plain_attention(pa);
  } else {
    // q_lat[t, h] = k_b[h] q_nope[t, h]: the no-rope query in latent space.
    per_head_linear(be, c.w(TensorRole::kAttnKB), b.q, hd, cfg.n_head * hd, t, b.q_lat);

    kernels::MlaAttentionArgs a;
    a.q_lat = b.q_lat;
    a.q_pe = b.q + nope;
    a.q_pe_token_stride = cfg.n_head * hd;
    a.q_pe_head_stride = hd;
    a.out = b.o_lat;
    a.n_tokens = t;
    a.n_head = cfg.n_head;
    a.kv_lora_rank = r;
    a.rope_dim = rot;
    a.cache = c.kv.k(c.layer);
    a.kv_type = kvo.type;
    a.block_size = kvo.block_size;
    a.token_seq = b.token_seq;
    a.token_pos = b.pos;
    a.block_tables = b.block_tables;
    a.max_blocks_per_seq = b.max_blocks;
    a.scale = cfg.attn_scale;
    be.mla_attention(a);

    // attn[t, h] = v_b[h] o_lat[t, h]: [t, n_head, v_head_dim].
    per_head_linear(be, c.w(TensorRole::kAttnVB), b.o_lat, r, cfg.n_head * r, t, b.attn);
  }
  // Under tensor parallelism every rank holds some heads (and the whole latent): the output
  // projection's partial sums meet in one all-reduce, as in attention_block.
  linear(be, c.w(TensorRole::kAttnOut), b.attn, t, block_output(c), /*accumulate=*/!c.tp);
  reduce_block_output(c);
}

}  // namespace arc
