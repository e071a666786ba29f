// Sampling candidates on the host, fast: what top_candidates_ref computes
// (arc/kernels/candidates.h), in time linear in the vocabulary with a small constant. The CPU
// backend runs it after every step, serially, over a 152k vocabulary: the reference's nth_element
// with a key per comparison and its libm exp per token took 1 ms (greedy) to 5 ms (k = 1024 with
// mass and logprobs) a row.
//   - selection: one pass keeps the k best in a min-heap of (order key, id) pairs; a token below
//     the heap's smallest logit is rejected by one float compare, which is almost every token;
//   - sums: exp in double through a range reduction and polynomial, 16 (AVX-512) or 4 (AVX2)
//     values at a time (cpu/exp_sum.h). The ids and values equal the reference's exactly; the
//     sums differ from its sequential libm sums by rounding only (a few ulp of the total).
#include <algorithm>
#include <bit>
#include <cmath>
#include <vector>

#include "arc/kernels/candidates.h"
#include "arc/kernels/cpu_dispatch.h"
#include "cpu/exp_sum.h"

namespace arc::kernels {
namespace {

// Larger logit -> larger key; -0 and +0 equal; NaN as -inf (the reference's order).
uint32_t order_key(float x) {
  if (std::isnan(x)) x = -INFINITY;
  uint32_t u = std::bit_cast<uint32_t>(x);
  if (u == 0x80000000u) u = 0;
  return (u & 0x80000000u) != 0 ? ~u : (u | 0x80000000u);
}

// Key and lower-id-first tie break in one integer: larger is better.
uint64_t rank_key(float x, int32_t id) {
  return (uint64_t{order_key(x)} << 32) | (0xFFFFFFFFu - static_cast<uint32_t>(id));
}

// sum_i exp(double(l[i] - mx)) (the log-sum-exp's sum, difference in float as the reference).
double sum_exp_diff(cpu::IsaLevel level, const float* l, int64_t n, float mx) {
#if defined(ARC_KERNELS_X86)
  if (cpu::has_avx512(level)) return cpu::avx512::sum_exp_diff(l, n, mx);
  if (level == cpu::IsaLevel::kAvx2) return cpu::avx2::sum_exp_diff(l, n, mx);
#endif
  double sum = 0.0;
  for (int64_t i = 0; i < n; ++i) sum += cpu::exp_nonpositive(static_cast<double>(l[i] - mx));
  return sum;
}

// sum_i exp((l[i] - mx) / temperature) in double (the tempered mass).
double sum_exp_tempered(cpu::IsaLevel level, const float* l, int64_t n, double mx,
                        double temperature) {
#if defined(ARC_KERNELS_X86)
  if (cpu::has_avx512(level)) return cpu::avx512::sum_exp_tempered(l, n, mx, temperature);
  if (level == cpu::IsaLevel::kAvx2) return cpu::avx2::sum_exp_tempered(l, n, mx, temperature);
#endif
  double sum = 0.0;
  for (int64_t i = 0; i < n; ++i) sum += cpu::exp_nonpositive((l[i] - mx) / temperature);
  return sum;
}

// Largest logit with NaN as -inf (-inf when every value is -inf or NaN).
float max_logit(const float* l, int64_t n) {
  float m[8];
  std::fill(m, m + 8, -INFINITY);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    for (int j = 0; j < 8; ++j) m[j] = l[i + j] > m[j] ? l[i + j] : m[j];  // NaN: not greater
  }
  for (; i < n; ++i) m[0] = l[i] > m[0] ? l[i] : m[0];
  return *std::max_element(m, m + 8);
}

// Replaces the smallest key of a min-heap with `key` (larger) and sifts it down: one pass instead
// of pop_heap + push_heap.
void replace_min(std::vector<uint64_t>& heap, uint64_t key) {
  const size_t n = heap.size();
  size_t at = 0;
  for (;;) {
    size_t child = 2 * at + 1;
    if (child >= n) break;
    if (child + 1 < n && heap[child + 1] < heap[child]) ++child;
    if (heap[child] >= key) break;
    heap[at] = heap[child];
    at = child;
  }
  heap[at] = key;
}

// The k best of l (k <= n) as rank keys, best first.
void select_top(const float* l, int64_t n, int64_t k, std::vector<uint64_t>& heap) {
  heap.clear();
  auto worse = [](uint64_t a, uint64_t b) { return a > b; };  // min-heap on the key
  int64_t i = 0;
  for (; i < k; ++i) heap.push_back(rank_key(l[i], static_cast<int32_t>(i)));
  std::make_heap(heap.begin(), heap.end(), worse);
  // The heap's smallest key as a logit: anything strictly below it cannot enter. NaN keys sit
  // with -inf, so while the floor is -inf every token takes the exact key comparison.
  auto floor_of = [&] {
    const uint32_t key = static_cast<uint32_t>(heap.front() >> 32);
    const uint32_t u = (key & 0x80000000u) != 0 ? (key & 0x7FFFFFFFu) : ~key;
    const float f = std::bit_cast<float>(u);
    return std::isnan(f) || f == -INFINITY ? -INFINITY : f;
  };
  float floor = floor_of();
  for (; i < n; ++i) {
    if (l[i] < floor) continue;
    const uint64_t key = rank_key(l[i], static_cast<int32_t>(i));
    if (key <= heap.front()) continue;
    replace_min(heap, key);
    floor = floor_of();
  }
  std::sort(heap.begin(), heap.end(), [](uint64_t a, uint64_t b) { return a > b; });
}

// The best token: the first index holding the largest logit (NaN as -inf, -0 == +0).
int32_t argmax(const float* l, int64_t n) {
  const float mx = max_logit(l, n);
  for (int64_t i = 0; i < n; ++i) {
    if (l[i] == mx || (mx == -INFINITY && std::isnan(l[i]))) return static_cast<int32_t>(i);
  }
  return 0;
}

}  // namespace

void top_candidates(const TopCandidatesArgs& a) {
  cpu::top_candidates_at(cpu::best_isa(), a);
}

bool cpu::top_candidates_at(IsaLevel level, const TopCandidatesArgs& a) {
  if (!isa_available(level)) return false;
  const int64_t n_vocab = a.n_vocab;
  if (n_vocab <= 0) return true;
  std::vector<float> local;
  std::vector<uint64_t> heap;
  for (int64_t r = 0; r < a.n_rows; ++r) {
    const CandidateRow& row = a.rows[r];
    if (row.k < 1 || row.k > kMaxCandidates) continue;
    const float* raw = a.logits + r * n_vocab;  // [n_vocab]
    double* stats = a.stats + 3 * r;
    stats[0] = stats[1] = stats[2] = 0.0;
    if ((row.flags & kCandidateLse) != 0) {
      // As the reference: std::max_element's maximum (a NaN in front stays), the difference in
      // float, its exp in double.
      const float mx = std::isnan(raw[0]) ? raw[0] : max_logit(raw, n_vocab);
      if (std::isfinite(mx)) {
        stats[0] = mx + std::log(sum_exp_diff(level, raw, n_vocab, mx));
      } else {
        // Every value -inf or NaN, or a +inf: the reference's arithmetic on those, term by term.
        double sum = 0.0;
        for (int64_t i = 0; i < n_vocab; ++i) sum += std::exp(static_cast<double>(raw[i] - mx));
        stats[0] = mx + std::log(sum);
      }
    }

    // The penalties are the reference's own code: the selection below is what is fast.
    const float* l = penalised_row(a, r, local);  // [n_vocab]

    const int64_t k = std::min<int64_t>(row.k, n_vocab);
    int32_t* ids = a.ids + r * a.k_stride;
    float* values = a.values + r * a.k_stride;
    if (k == 1) {
      ids[0] = argmax(l, n_vocab);
    } else {
      select_top(l, n_vocab, k, heap);
      for (int64_t i = 0; i < k; ++i) {
        ids[i] = static_cast<int32_t>(0xFFFFFFFFu - static_cast<uint32_t>(heap[i]));
      }
    }
    for (int64_t i = 0; i < k; ++i) values[i] = l[ids[i]];
    stats[1] = values[0];
    if ((row.flags & kCandidateMass) != 0 && row.temperature > 0.0f) {
      const double mx = values[0];
      const double temp = row.temperature;
      if (std::isfinite(mx)) {
        stats[2] = sum_exp_tempered(level, l, n_vocab, mx, temp);
      } else {
        double sum = 0.0;
        for (int64_t i = 0; i < n_vocab; ++i) sum += std::exp((l[i] - mx) / temp);
        stats[2] = sum;
      }
    }
  }
  return true;
}

}  // namespace arc::kernels
