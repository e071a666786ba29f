// Paged attention against a naive dense attention written here (double precision, contiguous K/V
// per sequence): several sequences of different lengths in one flattened batch (full prefill,
// chunked prefill and decode tokens mixed), random non-contiguous block tables, GQA, sliding
// windows, F32 / F16 / Q8_0 caches, both cache layouts. Then every ISA variant against the same
// oracle, and thread count independence (bitwise).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>
#include <random>
#include <utility>
#include <vector>

#include "arc/kernels/attention.h"
#include "arc/kernels/fp16.h"
#include "arc/kernels/ops_isa.h"
#include "arc/thread_pool.h"

namespace k = arc::kernels;
using arc::DType;

namespace {

struct Case {
  int64_t head_dim, n_kv_head, n_rep, block_size, window;
  DType kv_type;
  float scale = 0.0f;
  bool long_decode = false;  // decode tokens only, over long histories (the split-KV path)
  k::KvLayout layout = k::KvLayout::kTokenRows;
  bool one_sequence = false;  // one decode token over 700 keys (every item equally long)
  bool sinks = false;         // per-head sink logits in the softmax denominator (gpt-oss)
};

std::string name(const Case& c) {
  return "d=" + std::to_string(c.head_dim) + " kv=" + std::to_string(c.n_kv_head) +
         " rep=" + std::to_string(c.n_rep) + " bs=" + std::to_string(c.block_size) +
         " win=" + std::to_string(c.window) +
         " type=" + std::to_string(static_cast<int>(c.kv_type)) +
         (c.long_decode ? " long-decode" : "") + (c.sinks ? " sinks" : "") +
         (c.layout == k::KvLayout::kHeadBlocks ? " head-blocks" : " token-rows");
}

// What a cache of `t` holds after storing x: [n], written out from the format's definition
// (Q8_0: per 32 values, d = max|x| / 127 kept as fp16, q = round(x / d), value = fp16(d) * q).
std::vector<float> as_stored(DType t, const std::vector<float>& x) {
  std::vector<float> y(x.size());
  if (t == DType::F32) return x;
  if (t == DType::F16) {
    for (size_t i = 0; i < x.size(); ++i) y[i] = k::fp16_to_fp32(k::fp32_to_fp16(x[i]));
    return y;
  }
  for (size_t b = 0; b < x.size(); b += 32) {
    float amax = 0;
    for (size_t j = 0; j < 32; ++j) amax = std::max(amax, std::fabs(x[b + j]));
    const float d = amax / 127.0f;
    const float dh = k::fp16_to_fp32(k::fp32_to_fp16(d));
    for (size_t j = 0; j < 32; ++j) {
      y[b + j] = d == 0.0f ? 0.0f : dh * std::round(x[b + j] * (1.0f / d));
    }
  }
  return y;
}

size_t row_bytes(DType t, int64_t d) {
  return t == DType::F32 ? d * 4 : t == DType::F16 ? d * 2 : d / 32 * 34;
}

// A batch: per sequence, its full K/V history and which trailing positions are queried now.
struct Batch {
  Case c;
  int64_t n_head = 0, n_tokens = 0, max_blocks = 0, n_blocks = 0;
  std::vector<int64_t> lens, n_new;
  std::vector<std::vector<float>> k, v;  // per seq: [len, n_kv_head, head_dim], as stored
  std::vector<float> q;                  // [n_tokens, n_head, head_dim]
  std::vector<float> sinks;              // [n_head] when c.sinks
  std::vector<int32_t> token_seq, token_pos, tables;
  std::vector<uint8_t> k_cache, v_cache;

  k::PagedAttentionArgs args(float* out) const {
    k::PagedAttentionArgs a;
    a.q = q.data();
    a.out = out;
    a.n_tokens = n_tokens;
    a.n_head = n_head;
    a.n_kv_head = c.n_kv_head;
    a.head_dim = c.head_dim;
    a.k_cache = k_cache.data();
    a.v_cache = v_cache.data();
    a.kv_type = c.kv_type;
    a.layout = c.layout;
    a.block_size = c.block_size;
    a.n_blocks = n_blocks;
    a.token_seq = token_seq.data();
    a.token_pos = token_pos.data();
    a.block_tables = tables.data();
    a.max_blocks_per_seq = max_blocks;
    a.scale = c.scale;
    a.sliding_window = c.window;
    a.sinks = sinks.empty() ? nullptr : sinks.data();
    return a;
  }
};

Batch make_batch(const Case& c, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  Batch b;
  b.c = c;
  b.n_head = c.n_kv_head * c.n_rep;
  // Full prefill, decode at a block boundary, chunked prefill, a one-token sequence, a decode.
  b.lens = {33, 64, 20, 1, 71};
  b.n_new = {33, 1, 7, 1, 1};
  if (c.one_sequence) {
    b.lens = {700};
    b.n_new = {1};
  } else if (c.long_decode) {
    b.lens = {700, 300, 257};
    b.n_new = {1, 1, 2};
    if (c.head_dim == 64) {  // past 32 x 512 keys the chunks grow; kept to small heads for speed
      b.lens.push_back(17000);
      b.n_new.push_back(1);
    }
  }
  const int64_t d = c.head_dim, row = c.n_kv_head * d;
  int64_t n_blocks = 3;  // a few spare blocks nobody uses
  for (int64_t len : b.lens) {
    b.max_blocks = std::max(b.max_blocks, (len + c.block_size - 1) / c.block_size);
    n_blocks += (len + c.block_size - 1) / c.block_size;
  }
  b.n_blocks = n_blocks;
  std::vector<int32_t> phys(n_blocks);
  std::iota(phys.begin(), phys.end(), 0);
  std::shuffle(phys.begin(), phys.end(), rng);
  b.tables.assign(b.lens.size() * b.max_blocks, -1);
  // Garbage everywhere (NaN for float types) so a wrong slot poisons the result.
  const size_t cache_bytes = n_blocks * c.block_size * c.n_kv_head * row_bytes(c.kv_type, d);
  b.k_cache.assign(cache_bytes, 0xFF);
  b.v_cache.assign(cache_bytes, 0xFF);
  size_t next = 0;
  std::vector<float> k_all, v_all;
  std::vector<int32_t> slots;
  for (size_t s = 0; s < b.lens.size(); ++s) {
    const int64_t len = b.lens[s];
    for (int64_t blk = 0; blk < (len + c.block_size - 1) / c.block_size; ++blk) {
      b.tables[s * b.max_blocks + blk] = phys[next++];
    }
    std::vector<float> ks(len * row), vs(len * row);
    for (float& x : ks) x = u(rng);
    for (float& x : vs) x = u(rng);
    k_all.insert(k_all.end(), ks.begin(), ks.end());
    v_all.insert(v_all.end(), vs.begin(), vs.end());
    for (int64_t p = 0; p < len; ++p) {
      slots.push_back(b.tables[s * b.max_blocks + p / c.block_size] * c.block_size +
                      p % c.block_size);
    }
    b.k.push_back(as_stored(c.kv_type, ks));
    b.v.push_back(as_stored(c.kv_type, vs));
    for (int64_t p = len - b.n_new[s]; p < len; ++p) {
      b.token_seq.push_back(static_cast<int32_t>(s));
      b.token_pos.push_back(static_cast<int32_t>(p));
    }
  }
  // Interleave the tokens of different sequences (the kernel must not assume grouping).
  std::vector<size_t> order(b.token_seq.size());
  std::iota(order.begin(), order.end(), 0);
  std::shuffle(order.begin(), order.end(), rng);
  std::vector<int32_t> ts, tp;
  for (size_t i : order) {
    ts.push_back(b.token_seq[i]);
    tp.push_back(b.token_pos[i]);
  }
  b.token_seq = ts;
  b.token_pos = tp;
  b.n_tokens = static_cast<int64_t>(ts.size());
  b.q.resize(b.n_tokens * b.n_head * d);
  for (float& x : b.q) x = u(rng) * 2.0f;
  if (c.sinks) {  // from well below to well above the scores (which stay within about +-3)
    b.sinks.resize(b.n_head);
    for (float& x : b.sinks) x = 1.0f + 4.0f * u(rng);
  }

  k::KvStoreArgs st;
  st.k = k_all.data();
  st.v = v_all.data();
  st.k_cache = b.k_cache.data();
  st.v_cache = b.v_cache.data();
  st.kv_type = c.kv_type;
  st.layout = c.layout;
  st.block_size = c.block_size;
  st.n_blocks = n_blocks;
  st.slots = slots.data();
  st.n_tokens = static_cast<int64_t>(slots.size());
  st.n_kv_head = c.n_kv_head;
  st.head_dim = d;
  k::kv_store(st);
  return b;
}

// The oracle: softmax(q K^T * scale) V over the visible positions, in double.
std::vector<float> dense_attention(const Batch& b) {
  const int64_t d = b.c.head_dim;
  const double scale = b.c.scale != 0.0f ? b.c.scale : 1.0 / std::sqrt(static_cast<double>(d));
  std::vector<float> out(b.n_tokens * b.n_head * d);
  for (int64_t t = 0; t < b.n_tokens; ++t) {
    const auto& ks = b.k[b.token_seq[t]];
    const auto& vs = b.v[b.token_seq[t]];
    const int64_t pos = b.token_pos[t];
    const int64_t lo = b.c.window > 0 ? std::max<int64_t>(0, pos - b.c.window + 1) : 0;
    for (int64_t h = 0; h < b.n_head; ++h) {
      const int64_t g = h / b.c.n_rep;
      const float* q = b.q.data() + (t * b.n_head + h) * d;
      std::vector<double> w;
      for (int64_t p = lo; p <= pos; ++p) {
        const float* kp = ks.data() + (p * b.c.n_kv_head + g) * d;
        double s = 0;
        for (int64_t i = 0; i < d; ++i) s += static_cast<double>(q[i]) * kp[i];
        w.push_back(s * scale);
      }
      const double mx = *std::max_element(w.begin(), w.end());
      double sum = 0;
      for (double& x : w) sum += (x = std::exp(x - mx));
      if (!b.sinks.empty()) sum += std::exp(static_cast<double>(b.sinks[h]) - mx);
      for (int64_t i = 0; i < d; ++i) {
        double acc = 0;
        for (int64_t p = lo; p <= pos; ++p) {
          acc += w[p - lo] * vs[(p * b.c.n_kv_head + g) * d + i];
        }
        out[(t * b.n_head + h) * d + i] = static_cast<float>(acc / sum);
      }
    }
  }
  return out;
}

std::vector<Case> all_cases() {
  std::vector<Case> cases;
  for (int64_t d : {64, 128, 256}) {
    for (int64_t rep : {1, 4, 8}) {
      for (int64_t bs : {16, 32}) {
        for (int64_t win : {0, 10}) {
          for (DType t : {DType::F32, DType::F16, DType::Q8_0}) {
            cases.push_back({d, rep == 8 ? 1 : 2, rep, bs, win, t});
          }
        }
      }
    }
  }
  cases.push_back({40, 2, 3, 16, 0, DType::F32, 0.3f});  // head dim no vector width divides
  cases.push_back({96, 3, 2, 7, 5, DType::F16, 0.05f});  // odd block size, explicit scale
  // Head dims whose last 16-lane chunks do not fill a group of four (the block-of-16 path's
  // V accumulation in 64-value chunks then 1, 2 or 3 chunks of 16).
  for (int64_t d : {80, 96, 112}) cases.push_back({d, 2, 4, 16, 0, DType::F16});
  cases.push_back({128, 2, 4, 16, 0, DType::F16, 0.0f, true});
  cases.push_back({64, 1, 8, 32, 300, DType::F32, 0.0f, true});
  cases.push_back({128, 2, 1, 16, 0, DType::Q8_0, 0.0f, true});
  cases.push_back({256, 1, 4, 32, 0, DType::F16, 0.0f, true});
  cases.push_back({64, 2, 2, 7, 0, DType::F32, 0.0f, true});
  // The block-of-16 loops with two groups of four heads (head dim 64), and with a head dim that
  // leaves a 16-lane remainder in F32, whose sub-runs are 5 blocks long: the 2-token sequence of
  // 257 keys goes through sub-runs of 5, 5, 5 and 1 blocks (the one-token sequences block by
  // block).
  cases.push_back({64, 1, 8, 16, 0, DType::F16, 0.0f, true});
  cases.push_back({96, 2, 4, 16, 0, DType::F32, 0.0f, true});
  // Attention sinks: whole items and split keys, windows, GQA groups of 1, 4 and 8.
  for (Case c : {Case{64, 2, 4, 16, 0, DType::F16}, Case{64, 2, 4, 16, 10, DType::F32},
                 Case{64, 1, 8, 32, 0, DType::Q8_0}, Case{128, 4, 1, 16, 5, DType::F16},
                 Case{64, 1, 8, 32, 300, DType::F32, 0.0f, true},
                 Case{64, 2, 4, 16, 0, DType::F16, 0.0f, true},
                 Case{64, 8, 1, 16, 0, DType::F16, 0.0f, false, k::KvLayout::kTokenRows, true}}) {
    c.sinks = true;
    cases.push_back(c);
  }
  // The CPU backend's layout, for every case whose type it takes.
  const size_t n_rows = cases.size();
  for (size_t i = 0; i < n_rows; ++i) {
    if (cases[i].kv_type == DType::Q8_0) continue;
    cases.push_back(cases[i]);
    cases.back().layout = k::KvLayout::kHeadBlocks;
  }
  return cases;
}

void expect_close(const std::vector<float>& got, const std::vector<float>& want, float tol) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) ASSERT_NEAR(got[i], want[i], tol) << "index " << i;
}

}  // namespace

// Outputs are convex combinations of values in [-1, 1]: absolute tolerances. The reference
// accumulates in double (1e-5 covers the float output); the fast variants accumulate in float.
TEST(PagedAttention, ReferenceAndEveryVariantMatchDenseAttention) {
  arc::ThreadPool pool(2);
  uint32_t seed = 1;
  for (const Case& c : all_cases()) {
    SCOPED_TRACE(name(c));
    const Batch b = make_batch(c, seed++);
    const auto want = dense_attention(b);
    std::vector<float> got(want.size(), NAN);
    k::ref::paged_attention(b.args(got.data()));
    expect_close(got, want, 1e-5f);
    for (k::OpsIsa isa : k::ops_isas_available()) {
      SCOPED_TRACE("isa=" + std::string(k::ops_isa_name(isa)));
      std::fill(got.begin(), got.end(), NAN);
      k::paged_attention_isa(isa, b.args(got.data()), &pool);
      expect_close(got, want, 3e-5f);
    }
  }
}

TEST(PagedAttention, ResultDoesNotDependOnThreadCount) {
  arc::ThreadPool one(1), three(3);
  for (const Case& c :
       {Case{128, 2, 4, 16, 0, DType::F16}, Case{64, 4, 1, 32, 9, DType::F32},
        Case{128, 1, 8, 16, 0, DType::Q8_0}, Case{128, 2, 4, 16, 0, DType::F16, 0.0f, true},
        Case{128, 2, 4, 16, 0, DType::F16, 0.0f, false, k::KvLayout::kHeadBlocks},
        Case{64, 4, 1, 32, 9, DType::F32, 0.0f, false, k::KvLayout::kHeadBlocks},
        Case{64, 4, 4, 16, 0, DType::F16, 0.0f, true, k::KvLayout::kHeadBlocks}}) {
    const Batch b = make_batch(c, 77);
    for (k::OpsIsa isa : k::ops_isas_available()) {
      SCOPED_TRACE(name(c) + " isa=" + std::string(k::ops_isa_name(isa)));
      std::vector<float> a(b.q.size()), z(b.q.size()), s(b.q.size());
      k::paged_attention_isa(isa, b.args(a.data()), &one);
      k::paged_attention_isa(isa, b.args(z.data()), &three);
      k::paged_attention_isa(isa, b.args(s.data()), nullptr);
      EXPECT_EQ(0, std::memcmp(a.data(), z.data(), a.size() * sizeof(float)));
      EXPECT_EQ(0, std::memcmp(a.data(), s.data(), a.size() * sizeof(float)));
    }
  }
  // The entry point is the best variant.
  const Batch b = make_batch({128, 2, 4, 16, 0, DType::F16}, 5);
  std::vector<float> a(b.q.size()), z(b.q.size());
  k::paged_attention(b.args(a.data()), &three);
  k::paged_attention_isa(k::ops_isa_best(), b.args(z.data()), &one);
  EXPECT_EQ(0, std::memcmp(a.data(), z.data(), a.size() * sizeof(float)));
}

// A machine whose thread count the items fill evenly takes them whole instead of in chunks of
// keys: still the oracle's result, still the same for any pool. Chunks merged afterwards round
// differently, so the bits also show which plan ran.
TEST(PagedAttention, ItemsThatFillTheMachineAreAttendedWhole) {
  arc::ThreadPool one(1), three(3);
  for (const Case& c :
       {Case{64, 4, 4, 16, 0, DType::F16, 0.0f, true, k::KvLayout::kHeadBlocks, true},
        Case{128, 2, 4, 16, 0, DType::F32, 0.0f, true, k::KvLayout::kHeadBlocks, true},
        Case{64, 4, 4, 16, 0, DType::F16, 0.0f, true, k::KvLayout::kTokenRows, true}}) {
    const Batch b = make_batch(c, 3);
    const auto want = dense_attention(b);
    for (k::OpsIsa isa : k::ops_isas_available()) {
      SCOPED_TRACE(name(c) + " isa=" + std::string(k::ops_isa_name(isa)));
      std::vector<float> chunked(want.size()), whole(want.size()), whole3(want.size()),
          odd(want.size());
      k::PagedAttentionArgs a = b.args(chunked.data());
      k::paged_attention_isa(isa, a, &three);
      a.split_threads = 2;  // both kv head counts are multiples of 2
      a.out = whole.data();
      k::paged_attention_isa(isa, a, &one);
      a.out = whole3.data();
      k::paged_attention_isa(isa, a, &three);
      a.split_threads = 3;  // 2 or 4 items over 3 threads: chunks, as without a machine width
      a.out = odd.data();
      k::paged_attention_isa(isa, a, &one);
      expect_close(whole, want, 3e-5f);
      EXPECT_EQ(0, std::memcmp(whole.data(), whole3.data(), whole.size() * sizeof(float)));
      EXPECT_NE(0, std::memcmp(whole.data(), chunked.data(), whole.size() * sizeof(float)));
      EXPECT_EQ(0, std::memcmp(odd.data(), chunked.data(), odd.size() * sizeof(float)));
    }
  }
}

TEST(PagedAttention, HandComputedTwoKeys) {
  // One head, d = 2, keys k0 = (1, 0), k1 = (0, 1), q = (ln 3 * sqrt 2, 0): weights 3:1.
  const float q[] = {static_cast<float>(std::log(3.0) * std::sqrt(2.0)), 0.0f};
  const float kc[] = {1, 0, 0, 1};
  const float vc[] = {4, 0, 0, 8};
  const int32_t seq[] = {0}, pos[] = {1}, table[] = {0};
  float out[2];
  k::PagedAttentionArgs a;
  a.q = q;
  a.out = out;
  a.n_tokens = 1;
  a.n_head = 1;
  a.n_kv_head = 1;
  a.head_dim = 2;
  a.k_cache = kc;
  a.v_cache = vc;
  a.kv_type = DType::F32;
  a.block_size = 2;
  a.token_seq = seq;
  a.token_pos = pos;
  a.block_tables = table;
  a.max_blocks_per_seq = 1;
  k::ref::paged_attention(a);
  EXPECT_NEAR(out[0], 3.0, 1e-6);  // 0.75 * 4
  EXPECT_NEAR(out[1], 2.0, 1e-6);  // 0.25 * 8
  k::paged_attention(a, nullptr);
  EXPECT_NEAR(out[0], 3.0, 1e-6);
  EXPECT_NEAR(out[1], 2.0, 1e-6);
}

TEST(KvStore, WritesEachSlotInItsFormatAndSkipsPadding) {
  const int64_t n_kv = 2, d = 64, n_slots = 8;
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> u(-3.0f, 3.0f);
  std::vector<float> kx(3 * n_kv * d), vx(3 * n_kv * d);
  for (float& x : kx) x = u(rng);
  for (float& x : vx) x = u(rng);
  const int32_t slots[] = {5, -1, 2};
  for (DType t : {DType::F32, DType::F16, DType::Q8_0}) {
    const size_t rb = row_bytes(t, d);
    std::vector<uint8_t> kc(n_slots * n_kv * rb, 0xAB), vc(n_slots * n_kv * rb, 0xAB);
    k::KvStoreArgs a;
    a.k = kx.data();
    a.v = vx.data();
    a.k_cache = kc.data();
    a.v_cache = vc.data();
    a.kv_type = t;
    a.slots = slots;
    a.n_tokens = 3;
    a.n_kv_head = n_kv;
    a.head_dim = d;
    k::kv_store(a);
    // Read back through attention over a single visible key: output = that V row as stored.
    for (int tok : {0, 2}) {
      for (int64_t g = 0; g < n_kv; ++g) {
        const std::vector<float> src(vx.begin() + (tok * n_kv + g) * d,
                                     vx.begin() + (tok * n_kv + g + 1) * d);
        const auto want = as_stored(t, src);
        const uint8_t* row = vc.data() + (slots[tok] * n_kv + g) * rb;
        if (t == DType::F32) {
          EXPECT_EQ(0, std::memcmp(row, want.data(), d * 4));
        } else if (t == DType::F16) {
          for (int64_t i = 0; i < d; ++i) {
            uint16_t h;
            std::memcpy(&h, row + 2 * i, 2);
            ASSERT_EQ(k::fp16_to_fp32(h), want[i]);
          }
        } else {
          for (int64_t i = 0; i < d; ++i) {
            uint16_t h;
            std::memcpy(&h, row + (i / 32) * 34, 2);
            const float val =
                k::fp16_to_fp32(h) * static_cast<int8_t>(row[(i / 32) * 34 + 2 + i % 32]);
            ASSERT_EQ(val, want[i]) << i;
          }
        }
      }
    }
    // Slots nobody wrote keep their bytes (slot 0, and the padding token wrote nothing).
    for (size_t i = 0; i < n_kv * rb; ++i) ASSERT_EQ(kc[i], 0xAB);
    EXPECT_TRUE(k::kv_cache_supported(t, d));
  }
  EXPECT_FALSE(k::kv_cache_supported(DType::Q8_0, 48));
  EXPECT_FALSE(k::kv_cache_supported(DType::Q4_K, 64));
}

// kHeadBlocks pools are head-major, so without the pool's block count no K/V can be found:
// every variant and the reference leave the output untouched instead of reading wrong rows.
TEST(PagedAttention, HeadBlocksWithoutBlockCountWriteNothing) {
  const Case c{64, 2, 4, 16, 0, DType::F16, 0.0f, false, k::KvLayout::kHeadBlocks};
  const Batch b = make_batch(c, 7);
  std::vector<float> out(b.q.size(), 123.0f);
  k::PagedAttentionArgs a = b.args(out.data());
  a.n_blocks = 0;
  k::ref::paged_attention(a);
  for (k::OpsIsa isa : k::ops_isas_available()) k::paged_attention_isa(isa, a, nullptr);
  for (float x : out) ASSERT_EQ(x, 123.0f);
  a.n_blocks = b.n_blocks;  // and with it, the oracle's answer
  k::paged_attention(a, nullptr);
  expect_close(out, dense_attention(b), 3e-5f);
}

TEST(PagedAttention, MisalignedBuffers) {
  // q, out and both caches start at odd offsets (4/12 bytes for floats, 2 bytes for F16 rows).
  for (const auto& [t, layout] : {std::pair{DType::F16, k::KvLayout::kTokenRows},
                                  std::pair{DType::F32, k::KvLayout::kTokenRows},
                                  std::pair{DType::F16, k::KvLayout::kHeadBlocks},
                                  std::pair{DType::F32, k::KvLayout::kHeadBlocks}}) {
    const Case c{128, 2, 4, 16, 0, t, 0.0f, false, layout};
    const Batch b = make_batch(c, 31);
    const auto want = dense_attention(b);
    const size_t elem = t == DType::F16 ? 2 : 4;
    std::vector<uint8_t> kc(b.k_cache.size() + elem), vc(b.v_cache.size() + elem);
    std::memcpy(kc.data() + elem, b.k_cache.data(), b.k_cache.size());
    std::memcpy(vc.data() + elem, b.v_cache.data(), b.v_cache.size());
    std::vector<float> q(b.q.size() + 1), out(want.size() + 3);
    std::copy(b.q.begin(), b.q.end(), q.begin() + 1);
    for (k::OpsIsa isa : k::ops_isas_available()) {
      SCOPED_TRACE(name(c) + " isa=" + std::string(k::ops_isa_name(isa)));
      k::PagedAttentionArgs a = b.args(out.data() + 3);
      a.q = q.data() + 1;
      a.k_cache = kc.data() + elem;
      a.v_cache = vc.data() + elem;
      k::paged_attention_isa(isa, a, nullptr);
      expect_close(std::vector<float>(out.begin() + 3, out.end()), want, 3e-5f);
    }
  }
}
