// The paged-attention kernel, written once over a small vector-traits type T and compiled in each
// ISA's translation unit (scalar, AVX2, AVX-512, NEON). Everything here has internal linkage (the
// anonymous namespace) so the differently-compiled copies can never be merged by the linker.
//
// Work item = (token, kv head): the n_rep query heads of the group share every K/V load, and F16
// values are widened in registers. Both cache layouts (attention.h): kTokenRows scores a key by a
// dot product and a horizontal sum; kHeadBlocks scores W keys at once, a dimension at a time. Keys
// are visited one cache block at a time with an online softmax (running max m, running sum l,
// rescaled accumulator). Each item is computed by one thread in a fixed order, so results do not
// depend on the thread count.
//
// T provides: W (lanes), R (register), zero(), set1(f), load(const float*),
// load(const uint16_t*) (F16 -> F32), store(float*, R), fma(a, b, c) = a * b + c, add(a, b),
// sub(a, b), mul(a, b), exp(R), hsum(R). head_dim must be a multiple of T::W. A T with 16 lanes
// that also provides the block-of-16 operations (cpu/attention_block16.inc) runs whole 16-key
// blocks through that path.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "arc/kernels/attention.h"
#include "arc/kernels/fp16.h"
#include "cpu/kv_rows.h"

namespace arc::kernels::detail {
namespace {

constexpr int kMaxGroup = 8;  // query heads handled together (accumulators live in registers)

// out[0..3] = the horizontal sums of v[0..3]: T::hsum4 where T has one (one reduction tree for
// four registers: 13 shuffles and adds instead of 32 with AVX-512; decode attention 2-5% faster
// in bench_ops), else four T::hsum.
template <class T>
inline void hsum4(const typename T::R* v, float* out) {
  if constexpr (requires { T::hsum4(v, out); }) {
    T::hsum4(v, out);
  } else {
    for (int r = 0; r < 4; ++r) out[r] = T::hsum(v[r]);
  }
}

// scores[r * ldS + j] = scale * q_r . k_j for j in [0, n); k rows at k + j * k_stride.
template <class T, int G, class KvT>
inline void group_scores(const float* const* q, const KvT* k, int64_t k_stride, int64_t n,
                         int64_t d, float scale, float* scores, int64_t ldS) {
  for (int64_t j = 0; j < n; ++j) {
    const KvT* kj = k + j * k_stride;
    typename T::R acc[G];
    for (int r = 0; r < G; ++r) acc[r] = T::zero();
    for (int64_t c = 0; c < d; c += T::W) {
      const typename T::R kv = T::load(kj + c);
      for (int r = 0; r < G; ++r) acc[r] = T::fma(T::load(q[r] + c), kv, acc[r]);
    }
    int r = 0;
    for (; r + 4 <= G; r += 4) {
      float sums[4];
      hsum4<T>(acc + r, sums);
      for (int i = 0; i < 4; ++i) scores[(r + i) * ldS + j] = sums[i] * scale;
    }
    for (; r < G; ++r) scores[r * ldS + j] = T::hsum(acc[r]) * scale;
  }
}

// acc_r[:] += sum_j p[r * ldP + j] * v_j, the V chunk loaded once for all G heads.
template <class T, int G, class KvT>
inline void group_accumulate(float* const* acc, const KvT* v, int64_t v_stride, int64_t n,
                             int64_t d, const float* p, int64_t ldP) {
  for (int64_t c = 0; c < d; c += T::W) {
    typename T::R a[G];
    for (int r = 0; r < G; ++r) a[r] = T::load(acc[r] + c);
    for (int64_t j = 0; j < n; ++j) {
      const typename T::R vv = T::load(v + j * v_stride + c);
      for (int r = 0; r < G; ++r) a[r] = T::fma(T::set1(p[r * ldP + j]), vv, a[r]);
    }
    for (int r = 0; r < G; ++r) T::store(acc[r] + c, a[r]);
  }
}

inline float kv_value(const float* p) {
  return *p;
}
inline float kv_value(const uint16_t* p) {
  return fp16_to_fp32(*p);
}

// kHeadBlocks: scores[r * ldS + j] = scale * q_r . k_j for the block's keys j in [j0, j0 + n),
// indexed within the block (ldS >= bs); kt: [d, bs], one block of one kv head. Whole vectors of W
// keys when W divides bs: they may cover keys outside the range, whose lanes are written but never
// read.
template <class T, int G, class KvT>
inline void group_scores_cols(const float* const* q, const KvT* kt, int64_t bs, int64_t j0,
                              int64_t n, int64_t d, float scale, float* scores, int64_t ldS) {
  if (bs % T::W == 0) {
    for (int64_t jv = j0 / T::W * T::W; jv < j0 + n; jv += T::W) {
      typename T::R acc[G];
      for (int r = 0; r < G; ++r) acc[r] = T::zero();
      for (int64_t c = 0; c < d; ++c) {
        const typename T::R kv = T::load(kt + c * bs + jv);
        for (int r = 0; r < G; ++r) acc[r] = T::fma(T::set1(q[r][c]), kv, acc[r]);
      }
      for (int r = 0; r < G; ++r) T::store(scores + r * ldS + jv, T::mul(acc[r], T::set1(scale)));
    }
    return;
  }
  for (int64_t j = j0; j < j0 + n; ++j) {
    for (int r = 0; r < G; ++r) {
      float acc = 0.0f;
      for (int64_t c = 0; c < d; ++c) acc += q[r][c] * kv_value(kt + c * bs + j);
      scores[r * ldS + j] = acc * scale;
    }
  }
}

template <class T, class KvT>
using ScoresFn = void (*)(const float* const*, const KvT*, int64_t, int64_t, int64_t, float, float*,
                          int64_t);
template <class T, class KvT>
using ColsScoresFn = void (*)(const float* const*, const KvT*, int64_t, int64_t, int64_t, int64_t,
                              float, float*, int64_t);
template <class T, class KvT>
using AccumulateFn = void (*)(float* const*, const KvT*, int64_t, int64_t, int64_t, const float*,
                              int64_t);

template <class T, class KvT, int... Gs>
constexpr ScoresFn<T, KvT> scores_fn(int g, std::integer_sequence<int, Gs...>) {
  ScoresFn<T, KvT> fns[] = {&group_scores<T, Gs + 1, KvT>...};
  return fns[g - 1];
}
template <class T, class KvT, int... Gs>
constexpr ColsScoresFn<T, KvT> cols_scores_fn(int g, std::integer_sequence<int, Gs...>) {
  ColsScoresFn<T, KvT> fns[] = {&group_scores_cols<T, Gs + 1, KvT>...};
  return fns[g - 1];
}
template <class T, class KvT, int... Gs>
constexpr AccumulateFn<T, KvT> accumulate_fn(int g, std::integer_sequence<int, Gs...>) {
  AccumulateFn<T, KvT> fns[] = {&group_accumulate<T, Gs + 1, KvT>...};
  return fns[g - 1];
}

// s[j] = e^(s[j] - mx) for j in [0, n), returning the sum; vector exp over whole vectors, libm on
// the tail (the split depends only on n, so results stay deterministic).
template <class T>
inline float exp_shift_sum(float* s, int64_t n, float mx) {
  const typename T::R vm = T::set1(mx);
  typename T::R vsum = T::zero();
  int64_t j = 0;
  for (; j + T::W <= n; j += T::W) {
    const typename T::R e = T::exp(T::sub(T::load(s + j), vm));
    T::store(s + j, e);
    vsum = T::add(vsum, e);
  }
  float sum = T::hsum(vsum);
  for (; j < n; ++j) {
    s[j] = std::exp(s[j] - mx);
    sum += s[j];
  }
  return sum;
}

// Asks for the rows of one kv head in one cache block before they are needed: a sequence's blocks
// are scattered, so the hardware prefetcher cannot guess the next one. rows: n rows from `row`
// on, n_kv_head rows apart.
inline void prefetch_block(const void* cache, int64_t row, int64_t n, int64_t n_kv_head,
                           size_t row_bytes) {
  const char* base = static_cast<const char*>(cache);
  for (int64_t j = 0; j < n; ++j) {
    const char* p = base + static_cast<size_t>(row + j * n_kv_head) * row_bytes;
    for (size_t off = 0; off < row_bytes; off += 64) __builtin_prefetch(p + off);
  }
}

inline void prefetch_bytes(const void* p, size_t bytes) {
  const char* c = static_cast<const char*>(p);
  for (size_t off = 0; off < bytes; off += 64) __builtin_prefetch(c + off);
}

// The K and V of cache block `block` (its first n rows) for kv head g, in either layout.
inline void prefetch_kv_block(const PagedAttentionArgs& a, int64_t block, int64_t g, int64_t n) {
  const size_t rb = kv_row_bytes(a.kv_type, a.head_dim);
  if (a.layout == KvLayout::kHeadBlocks) {
    // One contiguous run each: K [head_dim, block_size] (all of it: vectors span the block's
    // width), V [n, head_dim].
    const size_t run =
        static_cast<size_t>(kv_head_block_run(block, g, a.n_blocks) * a.block_size) * rb;
    prefetch_bytes(static_cast<const char*>(a.k_cache) + run, a.block_size * rb);
    prefetch_bytes(static_cast<const char*>(a.v_cache) + run, n * rb);
    return;
  }
  const int64_t row = block * a.block_size * a.n_kv_head + g;
  prefetch_block(a.k_cache, row, n, a.n_kv_head, rb);
  prefetch_block(a.v_cache, row, n, a.n_kv_head, rb);
}

// Scratch for one range of work items: one allocation, viewed as the buffers below. A range is
// often a single job in decode; in the engine a vector per buffer (five allocations per range)
// cost about 5% of a decode attention against a buffer kept per thread, one allocation about 2%.
struct Scratch {
  Scratch() = default;
  Scratch(Scratch&&) = default;  // the vector's storage moves with it: the views stay valid
  Scratch& operator=(Scratch&&) = default;
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;

  std::vector<float> buf;
  std::span<float> acc;         // [n_rep, head_dim]
  std::span<float> scores;      // [n_rep, block_size]
  std::span<float> run_scores;  // [n_rep, kBlock16RunKeys], the block-of-16 path's sub-run
  std::span<float> m, l;        // [n_rep]
  std::span<float> k_rows;      // [block_size, head_dim], Q8_0 only: dequantized block
  std::span<float> v_rows;      // [block_size, head_dim], Q8_0 only
};

#include "cpu/attention_block16.inc"

// Runs the online softmax of token t, kv head g over the visible positions [first, last] (may
// be empty), leaving the unnormalised state in s: acc [n_rep, head_dim], running max m and sum l.
// ahead_last (>= last): the last position whose blocks may be asked for ahead of need.
// F16/F32 rows are read in place; Q8_0 blocks are first dequantized into scratch (KvT = float)
// with a row stride of head_dim. kv_shared: other tokens of this call attend to the same sequence
// (a prefill chunk), so its K/V is mostly read from cache.
template <class T, class KvT>
void attend_range(const PagedAttentionArgs& a, int64_t t, int64_t g, int64_t first, int64_t last,
                  int64_t ahead_last, float scale, bool kv_shared, Scratch& s) {
  const int64_t d = a.head_dim;
  const int64_t n_rep = a.n_head / a.n_kv_head;
  const int64_t bs = a.block_size;
  const int32_t* table = a.block_tables + a.token_seq[t] * a.max_blocks_per_seq;
  const bool quantized = a.kv_type == DType::Q8_0;
  const bool head_blocks = a.layout == KvLayout::kHeadBlocks;
  // Elements between the V rows of consecutive positions (and K rows, in kTokenRows).
  const int64_t row_stride = quantized || head_blocks ? d : a.n_kv_head * d;

  std::fill(s.acc.begin(), s.acc.end(), 0.0f);
  std::fill(s.m.begin(), s.m.end(), -INFINITY);
  std::fill(s.l.begin(), s.l.end(), 0.0f);
  const float* q[kMaxGroup];
  float* acc[kMaxGroup];

  if (first > last) return;
  for (int64_t b = first / bs; b <= last / bs; ++b) {
    const int64_t j0 = std::max(first, b * bs);
    const int64_t n = std::min(last, b * bs + bs - 1) - j0 + 1;
    if constexpr (kHasBlock16<T>) {
      if (block16_applies(a, n)) {
        // The run of whole blocks from b on (the last visible block may be partial).
        int64_t b_end = b;
        while (b_end + 1 <= last / bs && (b_end + 2) * bs - 1 <= last) ++b_end;
        // Cache-resident K/V: the sub-runs' fewer loads and rescales (a fifth less time). From
        // DRAM: block by block, K and V asked for as two streams at once. In the engine (both in
        // one process, alternating) the sub-runs took the same time at a decode context of 576
        // and 7-13% more at 2080, where block by block keeps more bytes in flight.
        if (kv_shared) {
          attend_blocks_in_subruns<T, KvT>(a, t, g, b, b_end, last, ahead_last, scale, s);
        } else {
          attend_blocks_interleaved<T, KvT>(a, t, g, b, b_end, last, ahead_last, scale, s);
        }
        b = b_end;
        continue;
      }
    }
    const int64_t slot0 = static_cast<int64_t>(table[b]) * bs + (j0 - b * bs);
    // One block ahead: two to four gained nothing, in bench_ops (attn_decode) nor in the engine.
    if (b + 1 <= last / bs) {
      prefetch_kv_block(a, table[b + 1], g, std::min(bs, last - (b + 1) * bs + 1));
    }
    const KvT* k;
    const KvT* v;
    // kHeadBlocks: scores and weights sit at the keys' places in the block, from `off` on.
    const int64_t off = head_blocks ? j0 - b * bs : 0;
    if (head_blocks) {
      const int64_t run = kv_head_block_run(table[b], g, a.n_blocks);  // [head, block]
      k = static_cast<const KvT*>(a.k_cache) + run * d * bs;           // [d, bs]
      v = static_cast<const KvT*>(a.v_cache) + (run * bs + off) * d;   // [n, d]
    } else if (quantized) {
      for (int64_t j = 0; j < n; ++j) {
        const int64_t row = (slot0 + j) * a.n_kv_head + g;
        kv_load_row(a.kv_type, a.k_cache, row, d, s.k_rows.data() + j * d);
        kv_load_row(a.kv_type, a.v_cache, row, d, s.v_rows.data() + j * d);
      }
      k = reinterpret_cast<const KvT*>(s.k_rows.data());
      v = reinterpret_cast<const KvT*>(s.v_rows.data());
    } else {
      k = static_cast<const KvT*>(a.k_cache) + (slot0 * a.n_kv_head + g) * d;
      v = static_cast<const KvT*>(a.v_cache) + (slot0 * a.n_kv_head + g) * d;
    }
    for (int64_t r0 = 0; r0 < n_rep; r0 += kMaxGroup) {
      const int gsz = static_cast<int>(std::min<int64_t>(kMaxGroup, n_rep - r0));
      for (int r = 0; r < gsz; ++r) q[r] = a.q + (t * a.n_head + g * n_rep + r0 + r) * d;
      float* sc = s.scores.data() + r0 * bs;
      if (head_blocks) {
        cols_scores_fn<T, KvT>(gsz, std::make_integer_sequence<int, kMaxGroup>{})(q, k, bs, off, n,
                                                                                  d, scale, sc, bs);
      } else {
        scores_fn<T, KvT>(gsz, std::make_integer_sequence<int, kMaxGroup>{})(q, k, row_stride, n, d,
                                                                             scale, sc, bs);
      }
      // Online softmax update for each head of the group.
      for (int r = 0; r < gsz; ++r) {
        float* sr = sc + r * bs + off;
        float mx = s.m[r0 + r];
        for (int64_t j = 0; j < n; ++j) mx = std::max(mx, sr[j]);
        // 0 on the first block; exactly 1, without a libm call per head and block, when this
        // block did not raise the maximum (most blocks after the first few).
        const float corr = mx == s.m[r0 + r] ? 1.0f : std::exp(s.m[r0 + r] - mx);
        const float sum = exp_shift_sum<T>(sr, n, mx);
        acc[r] = s.acc.data() + (r0 + r) * d;
        if (corr != 1.0f) {
          for (int64_t i = 0; i < d; ++i) acc[r][i] *= corr;
        }
        s.l[r0 + r] = s.l[r0 + r] * corr + sum;
        s.m[r0 + r] = mx;
      }
      accumulate_fn<T, KvT>(gsz, std::make_integer_sequence<int, kMaxGroup>{})(acc, v, row_stride,
                                                                               n, d, sc + off, bs);
    }
  }
}

// The softmax denominator l (running max m) of query head h with its sink, when the args have
// sinks: e^(sink - m) joins the sum at the same shift (overflow means the keys' weights vanish:
// the output is then 0, its limit). No visible key (l == 0) stays 0: zeros, as without sinks.
inline float with_sink(const PagedAttentionArgs& a, int64_t h, float m, float l) {
  if (a.sinks == nullptr || !(l > 0.0f)) return l;
  return l + std::exp(a.sinks[h] - m);
}

// First visible position of token t (the sliding window's start).
inline int64_t first_visible(const PagedAttentionArgs& a, int64_t pos) {
  return a.sliding_window > 0 ? std::max<int64_t>(0, pos - a.sliding_window + 1) : 0;
}

template <class T>
void attend(const PagedAttentionArgs& a, int64_t t, int64_t g, int64_t lo, int64_t hi,
            int64_t ahead_last, float scale, bool kv_shared, Scratch& s) {
  if (a.kv_type == DType::F16) {
    attend_range<T, uint16_t>(a, t, g, lo, hi, ahead_last, scale, kv_shared, s);
  } else {
    attend_range<T, float>(a, t, g, lo, hi, ahead_last, scale, kv_shared, s);
  }
}

// Per token: whether another token of the call belongs to the same sequence. Depends on the
// batch's make-up, never on the thread count; a decode token is alone in its sequence whether or
// not other sequences share the batch.
inline std::vector<uint8_t> tokens_sharing_kv(const PagedAttentionArgs& a) {
  int32_t n_seq = 0;
  for (int64_t t = 0; t < a.n_tokens; ++t) n_seq = std::max(n_seq, a.token_seq[t] + 1);
  std::vector<int32_t> per_seq(static_cast<size_t>(n_seq), 0);
  for (int64_t t = 0; t < a.n_tokens; ++t) ++per_seq[a.token_seq[t]];
  std::vector<uint8_t> shared(static_cast<size_t>(a.n_tokens));
  for (int64_t t = 0; t < a.n_tokens; ++t) shared[t] = per_seq[a.token_seq[t]] > 1;
  return shared;
}

Scratch make_scratch(const PagedAttentionArgs& a) {
  const int64_t d = a.head_dim;
  const int64_t n_rep = a.n_head / a.n_kv_head;
  const int64_t rows = a.kv_type == DType::Q8_0 ? a.block_size * d : 0;
  const int64_t run = block16_applies(a, a.block_size) ? n_rep * kBlock16RunKeys : 0;
  const int64_t sizes[] = {n_rep * d, n_rep * a.block_size, run, n_rep, n_rep, rows, rows};
  Scratch s;
  int64_t total = 0;
  for (int64_t n : sizes) total += n;
  s.buf.resize(static_cast<size_t>(total));
  float* p = s.buf.data();
  std::span<float>* views[] = {&s.acc, &s.scores, &s.run_scores, &s.m, &s.l, &s.k_rows, &s.v_rows};
  for (int i = 0; i < 7; ++i) {
    *views[i] = std::span<float>(p, static_cast<size_t>(sizes[i]));
    p += sizes[i];
  }
  return s;
}

// Few (token, kv head) items over long contexts (decode) would leave threads idle, so the keys are
// cut into chunks of about kSplitKeys positions at fixed, block-aligned boundaries, attended
// separately and merged in chunk order. The decision and the boundaries depend only on the
// shapes, never on the thread count, so results stay identical for any pool. Each chunk costs a
// cold start, a partial state and its merge: in the engine on 2 cores (4 kv heads, measured as in
// paged_attention_impl) chunks of 512 keys took 3-8% less time than 256 at a context of 576 and
// about 10% at 2048; no split at all (576) 4-14% less, but that leaves threads idle on machines
// with more cores than items.
constexpr int64_t kSplitMaxItems = 32;
constexpr int64_t kSplitKeys = 512;
constexpr int64_t kSplitMaxChunks = 32;  // longer contexts get longer chunks (bounded scratch)

// Whether the items spread evenly over the machine's threads as they are: as many as the
// machine has threads, or a multiple, all over the same number of keys (one sequence's decode
// tokens). Then chunks only add cold starts, partial states and a serial merge: in the engine on
// 2 cores (the 1 GB Q4_K_M bench model, bench -p 512 -n 128, 4 alternating rounds) decode ran
// 0.7-2.4% faster with whole items, and bench_ops attn_decode_f16_in_order at 576 keys took
// 17-21 us against 22-23.
inline bool items_fill_machine(const PagedAttentionArgs& a) {
  if (a.split_threads <= 0 || (a.n_tokens * a.n_kv_head) % a.split_threads != 0) return false;
  const auto keys = [&](int64_t t) { return a.token_pos[t] - first_visible(a, a.token_pos[t]); };
  for (int64_t t = 1; t < a.n_tokens; ++t) {
    if (keys(t) != keys(0)) return false;
  }
  return true;
}

template <class T>
void paged_attention_impl(const PagedAttentionArgs& a, Parallel* pool) {
  const int64_t d = a.head_dim;
  const int64_t n_rep = a.n_head / a.n_kv_head;
  const float scale = a.scale != 0.0f ? a.scale : 1.0f / std::sqrt(static_cast<float>(d));
  const int64_t n_items = a.n_tokens * a.n_kv_head;
  int64_t max_pos = -1;
  for (int64_t t = 0; t < a.n_tokens; ++t) max_pos = std::max<int64_t>(max_pos, a.token_pos[t]);
  const int64_t min_keys = std::max(kSplitKeys, (max_pos + kSplitMaxChunks) / kSplitMaxChunks);
  const int64_t chunk = (min_keys + a.block_size - 1) / a.block_size * a.block_size;
  const int64_t n_chunks = (max_pos + chunk) / chunk;
  const std::vector<uint8_t> kv_shared = tokens_sharing_kv(a);

  if (n_items >= kSplitMaxItems || n_chunks <= 1 || items_fill_machine(a)) {
    parallel_for(pool, n_items, 1, [&](int64_t begin, int64_t end) {
      Scratch s = make_scratch(a);
      for (int64_t item = begin; item < end; ++item) {
        const int64_t t = item / a.n_kv_head;
        const int64_t g = item % a.n_kv_head;
        const int64_t pos = a.token_pos[t];
        float* out = a.out + (t * a.n_head + g * n_rep) * d;  // [n_rep, head_dim]
        attend<T>(a, t, g, first_visible(a, pos), pos, pos, scale, kv_shared[t], s);
        for (int64_t r = 0; r < n_rep; ++r) {
          const float l = with_sink(a, g * n_rep + r, s.m[r], s.l[r]);
          const float inv = l > 0.0f ? 1.0f / l : 0.0f;  // no key visible: zeros
          for (int64_t i = 0; i < d; ++i) out[r * d + i] = s.acc[r * d + i] * inv;
        }
      }
    });
    return;
  }

  // partial: [n_items, n_chunks, n_rep, head_dim + 2] = acc, then m and l.
  const int64_t stride = d + 2;
  std::vector<float> partial(n_items * n_chunks * n_rep * stride);
  // Per-thread shares of consecutive jobs: each thread runs whole items chunk after chunk (with
  // the prefetch below running on into the next chunk), and steals from the back of the others'
  // at the end. In the engine (measured as below) 5% less time than ranges claimed in turn at a
  // context of 576 (median of 8 runs, -10% to +3%), 12-13% at 2048.
  parallel_shares(pool, n_items * n_chunks, 1, [&](int64_t begin, int64_t end) {
    Scratch s = make_scratch(a);
    for (int64_t job = begin; job < end; ++job) {
      const int64_t item = job / n_chunks, c = job % n_chunks;
      const int64_t t = item / a.n_kv_head, g = item % a.n_kv_head;
      const int64_t pos = a.token_pos[t];
      // Blocks asked for ahead up to the item's last position: the next chunk of the item is
      // the next job, which usually runs on the same thread. Against stopping at the chunk's end,
      // in the engine (the 1 GB bench models, both variants in one process, alternating per token):
      // decode attention at a context of 576 took a median of 4.4% less time over 15 runs (-13% to
      // +6%), at 2048 1-17% less in 4 runs.
      attend<T>(a, t, g, std::max(first_visible(a, pos), c * chunk),
                std::min(pos, c * chunk + chunk - 1), pos, scale, kv_shared[t], s);
      float* p = partial.data() + job * n_rep * stride;
      for (int64_t r = 0; r < n_rep; ++r) {
        std::copy(s.acc.begin() + r * d, s.acc.begin() + (r + 1) * d, p + r * stride);
        p[r * stride + d] = s.m[r];
        p[r * stride + d + 1] = s.l[r];
      }
    }
  });
  // The merge is a few hundred flops per item: inline unless there are many items.
  parallel_for(pool, n_items, 64, [&](int64_t begin, int64_t end) {
    for (int64_t item = begin; item < end; ++item) {
      const int64_t t = item / a.n_kv_head, g = item % a.n_kv_head;
      float* out = a.out + (t * a.n_head + g * n_rep) * d;  // [n_rep, head_dim]
      const float* p0 = partial.data() + item * n_chunks * n_rep * stride;
      for (int64_t r = 0; r < n_rep; ++r) {
        float m = -INFINITY;
        for (int64_t c = 0; c < n_chunks; ++c) m = std::max(m, p0[(c * n_rep + r) * stride + d]);
        float l = 0.0f;
        float* o = out + r * d;
        std::fill(o, o + d, 0.0f);
        for (int64_t c = 0; c < n_chunks; ++c) {
          const float* pc = p0 + (c * n_rep + r) * stride;
          if (pc[d + 1] == 0.0f) continue;  // chunk saw no key
          const float w = std::exp(pc[d] - m);
          l += pc[d + 1] * w;
          for (int64_t i = 0; i < d; ++i) o[i] += pc[i] * w;
        }
        l = with_sink(a, g * n_rep + r, m, l);
        const float inv = l > 0.0f ? 1.0f / l : 0.0f;
        for (int64_t i = 0; i < d; ++i) o[i] *= inv;
      }
    }
  });
}

// Arguments every variant can take; the vector variants also need head_dim % W == 0.
inline bool attention_args_ok(const PagedAttentionArgs& a) {
  return a.n_kv_head > 0 && a.n_head > 0 && a.n_head % a.n_kv_head == 0 && a.block_size > 0 &&
         kv_type_ok(a.kv_type, a.head_dim) && kv_layout_supports(a.layout, a.kv_type) &&
         (a.layout != KvLayout::kHeadBlocks || a.n_blocks > 0);
}

}  // namespace
}  // namespace arc::kernels::detail
