// MoE routing and expert FFNs on the CPU. The tokens routed to each expert are grouped so each
// expert's weights stream once per step (decode reads only the k selected experts), and all
// experts' rows run in one parallel loop per layer in decode, one per projection in prefill (see
// moe_ffn_at).
#include "arc/kernels/moe.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <numeric>
#include <thread>
#include <vector>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

#include "arc/kernels/cpu_dispatch.h"
#include "arc/kernels/matmul.h"
#include "arc/kernels/ops.h"
#include "arc/kernels/quant.h"
#include "cpu/matmul_kernels.h"

namespace arc::kernels {

namespace {

// Group-limited selection (RouterArgs::n_group): a group scores the sum of its two best
// selection scores; the experts of all but the n_group_used best groups (lower index on ties)
// get -inf. `order` is scratch of n_expert entries (n_group <= n_expert).
void mask_groups(const RouterArgs& a, float* select, int32_t* order) {
  const int64_t per = a.n_expert / a.n_group;
  float gs[512];  // n_group <= n_expert <= 512 on this path; larger counts use the heap below
  std::vector<float> heap;
  float* g_score = gs;
  if (a.n_group > 512) {
    heap.resize(static_cast<size_t>(a.n_group));
    g_score = heap.data();
  }
  for (int64_t g = 0; g < a.n_group; ++g) {
    float b0 = -INFINITY, b1 = -INFINITY;
    for (int64_t e = g * per; e < (g + 1) * per; ++e) {
      const float v = select[e];
      if (v > b0) {
        b1 = b0;
        b0 = v;
      } else if (v > b1) {
        b1 = v;
      }
    }
    g_score[g] = per > 1 ? b0 + b1 : b0;
  }
  std::iota(order, order + a.n_group, 0);
  std::stable_sort(order, order + a.n_group,
                   [&](int32_t x, int32_t y) { return g_score[x] > g_score[y]; });
  for (int64_t j = a.n_group_used; j < a.n_group; ++j) {
    for (int64_t e = order[j] * per; e < (order[j] + 1) * per; ++e) select[e] = -INFINITY;
  }
}

// Expert parallelism: expert e relative to the rank's first, -1 when another rank holds it.
int32_t local_id(const RouterArgs& a, int32_t e) {
  if (a.n_local <= 0) return e;
  const int64_t l = e - a.expert_begin;
  return l >= 0 && l < a.n_local ? static_cast<int32_t>(l) : -1;
}

}  // namespace

void moe_route(const RouterArgs& a) {
  // Scratch on the stack for every expert count in use (up to 512): a decode step routes once
  // per layer, and three heap vectors per call cost about a seventh of this op's time.
  constexpr int64_t kStackExperts = 512;
  float stack_prob[kStackExperts], stack_select[kStackExperts];
  int32_t stack_order[kStackExperts];
  std::vector<float> heap_f;
  std::vector<int32_t> heap_i;
  float* prob = stack_prob;      // [n_expert]
  float* select = stack_select;  // [n_expert]
  int32_t* order = stack_order;  // [n_expert]
  if (a.n_expert > kStackExperts) {
    heap_f.resize(static_cast<size_t>(2 * a.n_expert));
    heap_i.resize(static_cast<size_t>(a.n_expert));
    prob = heap_f.data();
    select = prob + a.n_expert;
    order = heap_i.data();
  }
  const int64_t k = std::min(a.k, a.n_expert);
  for (int64_t t = 0; t < a.n_tokens; ++t) {
    const float* logit = a.logits + t * a.n_expert;  // [n_expert]
    if (a.scoring == RouterScoring::kSoftmax) {
      // The vector softmax of ops.h rather than a libm exp per expert.
      std::copy(logit, logit + a.n_expert, prob);
      softmax_rows(prob, 1, a.n_expert);
      std::copy(prob, prob + a.n_expert, select);
    } else {
      for (int64_t e = 0; e < a.n_expert; ++e) {
        prob[e] = 1.0f / (1.0f + std::exp(-logit[e]));
        select[e] = prob[e] + (a.bias ? a.bias[e] : 0.0f);
      }
    }
    if (a.n_group > 1 && a.n_group_used < a.n_group) mask_groups(a, select, order);
    std::iota(order, order + a.n_expert, 0);
    std::partial_sort(order, order + k, order + a.n_expert, [&](int32_t x, int32_t y) {
      return select[x] > select[y] || (select[x] == select[y] && x < y);
    });
    float wsum = 0;
    for (int64_t j = 0; j < k; ++j) wsum += prob[order[j]];
    for (int64_t j = 0; j < k; ++j) {
      float w = prob[order[j]];
      if (a.normalize && wsum > 0) w /= wsum;
      a.ids[t * a.k + j] = local_id(a, order[j]);
      a.weights[t * a.k + j] = w * a.weight_scale;
    }
  }
}

}  // namespace arc::kernels

namespace arc::kernels::cpu {
namespace {

// Weight rows per work item. Small enough that a decode step (8 experts of 512-1024 rows) gives
// each thread several items to balance, large enough that an item's call overhead is noise.
constexpr int64_t kItemRows = 32;

// An expert with at least one routed slot: its slots sit at [begin, begin + n) in expert order.
struct Group {
  int32_t expert;
  int64_t begin, n;
};

// Prepared activations of the slots in expert order: [n_slots] rows of `stride` bytes.
struct Act {
  const uint8_t* rows = nullptr;
  size_t stride = 0;
};

// Spins until `count` (another thread's atomic decrements) reaches 0.
inline void wait_until_zero(int64_t& count) {
  std::atomic_ref<int64_t> c(count);
  for (int spins = 0; c.load(std::memory_order_acquire) != 0;) {
    if (spins == 4096) {  // a long wait (the other thread descheduled): give the core away
      std::this_thread::yield();
      continue;
    }
    ++spins;
#if defined(__x86_64__) || defined(__i386__)
    _mm_pause();
#elif defined(__aarch64__)
    asm volatile("yield");
#endif
  }
}

// One expert's matrix (experts `expert_stride` bytes apart from `w`) against the prepared
// activations of its group's slots; y: [n_slots, y_stride] in expert order.
inline RowsArgs expert_rows(const void* w, size_t expert_stride, size_t row_bytes, const Group& gr,
                            const Act& x, int64_t n_in, float* y, int64_t y_stride) {
  RowsArgs r;
  r.n_in = n_in;
  r.n_tokens = gr.n;
  r.y_stride = y_stride;
  r.w = static_cast<const uint8_t*>(w) + static_cast<size_t>(gr.expert) * expert_stride;
  r.w_row_bytes = row_bytes;
  r.w_end = r.w + expert_stride;  // this expert's matrix ends where the next one starts
  r.xa = x.rows + gr.begin * x.stride;
  r.xa_stride = x.stride;
  r.y = y + gr.begin * y_stride;
  return r;
}

// x: [n_tokens, n_in] -> the activation rows `fmt` wants, one per slot in expert order. Each
// token is quantized once, then copied to its slots (decode: one quantization for all k experts).
bool prepare(IsaLevel level, ActFormat fmt, const float* x, int64_t n_tokens, int64_t n_in,
             const int64_t* slot_token, int64_t n_slots, Workspace::Slot q_slot,
             Workspace::Slot s_slot, Workspace* ws, Parallel* pool, Act* out) {
  const DType at = act_dtype(fmt);
  const auto row = dtype_row_bytes(at, static_cast<uint64_t>(n_in));
  if (!row) return false;  // n_in not a multiple of the activation block
  const size_t stride = static_cast<size_t>(*row);
  const uint8_t* per_token = reinterpret_cast<const uint8_t*>(x);
  if (fmt != ActFormat::kF32) {
    auto* q = ws->get<uint8_t>(q_slot, stride * static_cast<size_t>(n_tokens));
    if (q == nullptr) return false;
    parallel_for(pool, n_tokens, 16, [&](int64_t t0, int64_t t1) {
      for (int64_t t = t0; t < t1; ++t) quantize_act(level, at, x + t * n_in, q + t * stride, n_in);
    });
    per_token = q;
  }
  auto* s = ws->get<uint8_t>(s_slot, stride * static_cast<size_t>(n_slots));
  if (s == nullptr) return false;
  for (int64_t p = 0; p < n_slots; ++p) {
    std::memcpy(s + p * stride, per_token + slot_token[p] * stride, stride);
  }
  *out = {s, stride};
  return true;
}

}  // namespace

bool moe_ffn_at(IsaLevel level, const MoeFfnArgs& a, Parallel* pool) {
  Workspace ws;
  return moe_ffn_at(level, a, pool, &ws);
}

// Every routed slot (token, j) is placed in expert order; then all experts' gate and up rows run
// as ONE parallel loop over (expert, row block) items with the SwiGLU fused in, and all down rows
// as a second loop; a decode token's experts run gate/up then down in a single loop. A decode
// step thus costs one thread-pool dispatch per layer instead of three matmuls (each with its own
// dispatch and activation quantization) per selected expert.
// Each output value depends only on its weight row and its token's activations, never on how the
// items are split, so results do not depend on the thread count.
bool moe_ffn_at(IsaLevel level, const MoeFfnArgs& a, Parallel* pool, Workspace* ws) {
  if (!isa_available(level)) return false;
  const auto gate_row = dtype_row_bytes(a.gate_type, static_cast<uint64_t>(a.n_embd));
  const auto up_row = dtype_row_bytes(a.up_type, static_cast<uint64_t>(a.n_embd));
  const auto down_row = dtype_row_bytes(a.down_type, static_cast<uint64_t>(a.n_ff));
  const RowsKernel kg = rows_kernel_at(level, a.gate_type);
  const RowsKernel ku = rows_kernel_at(level, a.up_type);
  const RowsKernel kd = rows_kernel_at(level, a.down_type);
  if (!gate_row || !up_row || !down_row || a.n_tokens < 0 || a.k < 0 || a.n_expert < 0) {
    return false;
  }
  if (kg.fn == nullptr || ku.fn == nullptr || kd.fn == nullptr) return false;
  const int64_t n_slots = a.n_tokens * a.k;
  // Slots whose expert another rank holds (ids outside [0, n_expert)) are left out.
  auto held = [&](int64_t i) { return a.ids[i] >= 0 && a.ids[i] < a.n_expert; };
  int64_t n_held = 0;
  for (int64_t i = 0; i < n_slots; ++i) n_held += held(i) ? 1 : 0;
  const size_t gate_stride = a.gate_expert_bytes ? a.gate_expert_bytes : *gate_row * a.n_ff;
  const size_t up_stride = a.up_expert_bytes ? a.up_expert_bytes : *up_row * a.n_ff;
  const size_t down_stride = a.down_expert_bytes ? a.down_expert_bytes : *down_row * a.n_embd;
  const int64_t n_embd = a.n_embd, n_ff = a.n_ff;
  if (n_held == 0) {
    if (!a.accumulate) std::fill(a.y, a.y + a.n_tokens * n_embd, 0.0f);
    return true;
  }

  // The SwiGLU output as the down kernel wants it: F32, or rows of activation blocks of
  // h_block values (h_block_bytes each).
  const bool h_quantized = kd.act != ActFormat::kF32;
  const DType h_type = act_dtype(kd.act);
  const DTypeInfo* h_info = dtype_info(h_type);
  const auto h_row = dtype_row_bytes(h_type, static_cast<uint64_t>(n_ff));
  if (h_quantized && (h_info == nullptr || !h_row)) return false;
  const int64_t h_block = h_quantized ? static_cast<int64_t>(h_info->block_elems) : 1;
  const int64_t h_blocks = h_quantized ? n_ff / h_block : 0;  // per slot row

  // Bookkeeping, all in one workspace slot: count [n_expert + 1], slot_at [n_slots] (slot at
  // each expert-order position), pos_of [n_slots] (inverse), slot_token [n_slots], groups
  // [n_slots], pending [n_slots * h_blocks] (gate/up items of a block not finished yet), ready
  // [n_slots] (decode: per group, what its down rows still wait for).
  const size_t n_meta = static_cast<size_t>(a.n_expert + 1 + 3 * n_slots) +
                        (sizeof(Group) / sizeof(int64_t) + 1) * static_cast<size_t>(n_slots) +
                        static_cast<size_t>(n_slots * h_blocks + n_slots);
  auto* meta = ws->get<int64_t>(Workspace::kMoeMeta, n_meta);
  if (meta == nullptr) return false;
  int64_t* count = meta;
  int64_t* slot_at = count + a.n_expert + 1;
  int64_t* pos_of = slot_at + n_slots;
  int64_t* slot_token = pos_of + n_slots;
  auto* groups = reinterpret_cast<Group*>(slot_token + n_slots);
  int64_t* pending = reinterpret_cast<int64_t*>(groups + n_slots);
  std::fill(count, count + a.n_expert + 1, 0);
  for (int64_t i = 0; i < n_slots; ++i) {
    if (held(i)) ++count[a.ids[i] + 1];
  }
  std::partial_sum(count, count + a.n_expert + 1, count);
  int64_t n_groups = 0;
  for (int32_t e = 0; e < a.n_expert; ++e) {
    if (count[e + 1] > count[e]) groups[n_groups++] = {e, count[e], count[e + 1] - count[e]};
  }
  // Stable: within an expert, slots keep token order (count[] becomes each expert's end).
  for (int64_t i = 0; i < n_slots; ++i) {
    if (!held(i)) {
      pos_of[i] = -1;  // never the next position in the combine below
      continue;
    }
    const int64_t p = count[a.ids[i]]++;
    slot_at[p] = i;
    pos_of[i] = p;
  }
  for (int64_t p = 0; p < n_held; ++p) slot_token[p] = slot_at[p] / a.k;

  Act xg, xu;
  if (!prepare(level, kg.act, a.x, a.n_tokens, n_embd, slot_token, n_held, Workspace::kMoeXq,
               Workspace::kMoeXs, ws, pool, &xg)) {
    return false;
  }
  if (ku.act == kg.act) {
    xu = xg;
  } else if (!prepare(level, ku.act, a.x, a.n_tokens, n_embd, slot_token, n_held, Workspace::kMoeXq,
                      Workspace::kMoeXs2, ws, pool, &xu)) {
    return false;
  }
  float* g = ws->get<float>(Workspace::kMoeGate, static_cast<size_t>(n_slots * n_ff));
  float* u = ws->get<float>(Workspace::kMoeUp, static_cast<size_t>(n_slots * n_ff));
  float* out = ws->get<float>(Workspace::kMoeOut, static_cast<size_t>(n_slots * n_embd));
  if (g == nullptr || u == nullptr || out == nullptr) return false;
  Act h{reinterpret_cast<const uint8_t*>(g), static_cast<size_t>(n_ff) * sizeof(float)};
  uint8_t* hq = nullptr;
  if (h_quantized) {
    h.stride = static_cast<size_t>(*h_row);
    hq = ws->get<uint8_t>(Workspace::kMoeHq, h.stride * static_cast<size_t>(n_slots));
    if (hq == nullptr) return false;
    h.rows = hq;
  }

  // Gate and up rows of every expert, SwiGLU fused: g = silu(g) * u on the item's rows.
  // g, u: [n_slots, n_ff] in expert order.
  const int64_t ff_blocks = (n_ff + kItemRows - 1) / kItemRows;
  // Items of each (group, activation block); the item that finishes a block last quantizes it
  // for the down kernel, so the quantization runs spread over the threads inside this loop
  // instead of serially between the two loops (block by block equals the whole row: each block
  // has its own scale). Its acquire sees the other items' SwiGLU values.
  if (h_quantized) {
    for (int64_t gi = 0; gi < n_groups; ++gi) {
      for (int64_t qb = 0; qb < h_blocks; ++qb) {
        const int64_t first = qb * h_block / kItemRows;
        const int64_t last = ((qb + 1) * h_block - 1) / kItemRows;
        pending[gi * h_blocks + qb] = last - first + 1;
      }
    }
  }
  // Gate and up rows of items [j0, j1) of group gi (kItemRows rows each), SwiGLU fused. With
  // `ready`, the group's count of what its down rows wait for goes down as parts finish.
  auto gate_up = [&](int64_t gi, int64_t j0, int64_t j1, int64_t* ready) {
    const Group& gr = groups[gi];
    const int64_t o0 = j0 * kItemRows, o1 = std::min(n_ff, j1 * kItemRows);
    kg.fn(expert_rows(a.gate, gate_stride, *gate_row, gr, xg, n_embd, g, n_ff), o0, o1);
    ku.fn(expert_rows(a.up, up_stride, *up_row, gr, xu, n_embd, u, n_ff), o0, o1);
    // The vector SwiGLU of ops.h (a scalar expf per value cost about 3% of a decode step).
    for (int64_t t = gr.begin; t < gr.begin + gr.n; ++t) {
      float* gt = g + t * n_ff + o0;  // [o1 - o0]
      float* ut = u + t * n_ff + o0;
      if (a.gate_bias != nullptr) add(gt, a.gate_bias + gr.expert * n_ff + o0, gt, o1 - o0);
      if (a.up_bias != nullptr) add(ut, a.up_bias + gr.expert * n_ff + o0, ut, o1 - o0);
      if (a.act == MoeActivation::kSwiGluOai) {
        swiglu_oai(gt, ut, gt, o1 - o0, a.alpha, a.limit);
      } else {
        swiglu(gt, ut, gt, o1 - o0);
      }
    }
    if (!h_quantized) {
      if (ready) std::atomic_ref<int64_t>(ready[gi]).fetch_sub(j1 - j0, std::memory_order_acq_rel);
      return;
    }
    for (int64_t j = j0; j < j1; ++j) {  // each item's share of its activation blocks
      const int64_t q0 = j * kItemRows;
      const int64_t q1 = std::min(n_ff, q0 + kItemRows);
      for (int64_t qb = q0 / h_block; qb <= (q1 - 1) / h_block; ++qb) {
        std::atomic_ref<int64_t> left(pending[gi * h_blocks + qb]);
        if (left.fetch_sub(1, std::memory_order_acq_rel) != 1) continue;
        const size_t off = static_cast<size_t>(qb) * h_info->block_bytes;
        for (int64_t t = gr.begin; t < gr.begin + gr.n; ++t) {
          quantize_act(level, h_type, g + t * n_ff + qb * h_block, hq + t * h.stride + off,
                       h_block);
        }
        if (ready) std::atomic_ref<int64_t>(ready[gi]).fetch_sub(1, std::memory_order_acq_rel);
      }
    }
  };
  // Down rows of items [j0, j1) of group gi. out: [n_slots, n_embd] in expert order.
  const int64_t embd_blocks = (n_embd + kItemRows - 1) / kItemRows;
  auto down = [&](int64_t gi, int64_t j0, int64_t j1) {
    kd.fn(expert_rows(a.down, down_stride, *down_row, groups[gi], h, n_ff, out, n_embd),
          j0 * kItemRows, std::min(n_embd, j1 * kItemRows));
  };
  const size_t gate_up_bytes = static_cast<size_t>(n_groups) * (gate_stride + up_stride);
  const size_t down_bytes = static_cast<size_t>(n_groups) * down_stride;

  if (a.n_tokens == 1) {
    // Decode: ONE loop over the experts' gate/up items and down items, as per-thread shares
    // (parallel_items), so a layer pays one dispatch, cold start and tail instead of two. The
    // experts are cut into one part per thread, matching the shares, and each part lists its
    // experts' gate/up items, then their down items: a thread runs its experts' three matrices
    // one after another, and a thief that takes the back of a slower thread's share finds down
    // rows whose activations are mostly done (with each expert's down items right after its
    // gate/up, a thief waited for them in a third of the engine's MoE steps, 43 us on average).
    // An expert's down items wait until its activations are complete (ready[gi] reaches 0).
    // They come after all of those in the order, and every thread runs its claimed items in
    // order, so the lowest unfinished item always runs on a thread that waits for nothing: no
    // wait can last. Each value is computed exactly as in the two loops below.
    int64_t* ready = pending + n_slots * h_blocks;  // [n_groups]
    std::fill(ready, ready + n_groups, h_quantized ? h_blocks : ff_blocks);
    const int64_t per_group = ff_blocks + embd_blocks;
    const int64_t n_parts =
        std::max<int64_t>(1, std::min<int64_t>(n_groups, pool ? pool->num_threads() : 1));
    auto part_group = [&](int64_t p) { return n_groups * p / n_parts; };  // first group of p
    parallel_items(pool, 1, n_groups * per_group, gate_up_bytes + down_bytes, 1,
                   [&](int64_t i0, int64_t i1) {
                     int64_t p = 0;
                     while (part_group(p + 1) * per_group <= i0) ++p;
                     for (int64_t i = i0; i < i1;) {
                       while (part_group(p + 1) * per_group <= i) ++p;
                       const int64_t g0 = part_group(p), base = g0 * per_group;
                       const int64_t gu_end = base + (part_group(p + 1) - g0) * ff_blocks;
                       if (i < gu_end) {  // gate/up item of group g0 + (i - base) / ff_blocks
                         const int64_t gi = g0 + (i - base) / ff_blocks;
                         const int64_t gb = base + (gi - g0) * ff_blocks;  // the group's first item
                         const int64_t end = std::min(i1, gb + ff_blocks);
                         gate_up(gi, i - gb, end - gb, ready);
                         i = end;
                         continue;
                       }
                       const int64_t gi = g0 + (i - gu_end) / embd_blocks;
                       const int64_t gb = gu_end + (gi - g0) * embd_blocks;
                       const int64_t end = std::min(i1, gb + embd_blocks);
                       wait_until_zero(ready[gi]);
                       down(gi, i - gb, end - gb);
                       i = end;
                     }
                   });
  } else {
    // A claimed range of items is run as few kernel calls as possible: consecutive items of one
    // expert are one row range, so the kernel's prefetch streams through it instead of starting
    // cold every kItemRows rows (row results do not depend on how the rows are split).
    parallel_items(pool, a.n_tokens, n_groups * ff_blocks, gate_up_bytes, 1,
                   [&](int64_t i0, int64_t i1) {
                     for (int64_t i = i0; i < i1;) {
                       const int64_t gi = i / ff_blocks;
                       const int64_t end = std::min(i1, (gi + 1) * ff_blocks);
                       gate_up(gi, i - gi * ff_blocks, end - gi * ff_blocks, nullptr);
                       i = end;
                     }
                   });
    parallel_items(pool, a.n_tokens, n_groups * embd_blocks, down_bytes, 1,
                   [&](int64_t i0, int64_t i1) {
                     for (int64_t i = i0; i < i1;) {
                       const int64_t gi = i / embd_blocks;
                       const int64_t end = std::min(i1, (gi + 1) * embd_blocks);
                       down(gi, i - gi * embd_blocks, end - gi * embd_blocks);
                       i = end;
                     }
                   });
  }

  // y[t] (+)= sum_j w[t, j] * out[pos(t, j)], adding the experts in ascending id (expert order),
  // whatever the batch: a token gets the same sums alone or inside a prefill.
  parallel_for(pool, a.n_tokens, 8, [&](int64_t t0, int64_t t1) {
    for (int64_t t = t0; t < t1; ++t) {
      float* y = a.y + t * n_embd;  // [n_embd]
      if (!a.accumulate) std::fill(y, y + n_embd, 0.0f);
      int64_t prev = -1;  // expert-order position added last
      for (int64_t j = 0; j < a.k; ++j) {
        // Next of this token's slots in expert order (k is small: a scan per step).
        int64_t slot = -1;
        for (int64_t jj = 0; jj < a.k; ++jj) {
          const int64_t p = pos_of[t * a.k + jj];
          if (p > prev && (slot < 0 || p < pos_of[slot])) slot = t * a.k + jj;
        }
        if (slot < 0) break;  // the rest of this token's experts are another rank's
        prev = pos_of[slot];
        // out is this call's scratch (each slot is read once): scaled in place, then added, with
        // the best vector ops; this file is built for the baseline ISA.
        float* o = out + prev * n_embd;
        if (a.down_bias != nullptr) kernels::add(o, a.down_bias + a.ids[slot] * n_embd, o, n_embd);
        kernels::scale(o, a.weights[slot], n_embd);
        kernels::add(y, o, y, n_embd);
      }
    }
  });
  return true;
}

}  // namespace arc::kernels::cpu

namespace arc::kernels {

bool moe_ffn(const MoeFfnArgs& args, Parallel* pool) {
  return cpu::moe_ffn_at(cpu::best_isa(), args, pool);
}

bool moe_ffn(const MoeFfnArgs& args, Parallel* pool, Workspace* ws) {
  return cpu::moe_ffn_at(cpu::best_isa(), args, pool, ws);
}

}  // namespace arc::kernels
