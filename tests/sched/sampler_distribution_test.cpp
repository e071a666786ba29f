// The sampler draws from the distribution its parameters define. The reference here is the
// definition written plainly: penalise, sort the whole row (value desc, id asc), softmax with
// temperature in double (libm), top-k, top-p, min-p, and a draw walking the kept prefix.
//   - small vocabularies: chi-square of many Sampler draws against the reference probabilities;
//   - a 151,936-entry row: with the same seed the Sampler draws the reference's tokens, and its
//     nucleus walk ends on the reference's last kept token with the same mass.
// Fixed seeds throughout; the chi-square bounds sit many standard deviations out.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <unordered_map>
#include <vector>

#include "arc/kernels/sampling.h"
#include "sched/row_walk.h"
#include "sched/sampler.h"

namespace arc {
namespace {

// The kept tokens best first and their probabilities (normalised over the kept set).
struct RefDist {
  std::vector<int32_t> ids;
  std::vector<double> w;  // unnormalised exp((x - max) / T) of ids
  double total = 0.0;     // sum of w
  double nucleus_mass = 0.0;

  int32_t draw(std::mt19937_64& g) const {
    std::uniform_real_distribution<double> u(0.0, total);
    double r = u(g);
    for (size_t i = 0; i < ids.size(); ++i) {
      r -= w[i];
      if (r <= 0.0) return ids[i];
    }
    return ids.back();
  }
};

RefDist reference(const SamplingParams& p, std::vector<float> l,
                  const std::vector<int32_t>& history, size_t n_prompt) {
  // Penalties: repetition over every distinct history token, presence/frequency over the output.
  std::unordered_map<int32_t, int> count;
  for (size_t i = n_prompt; i < history.size(); ++i) count[history[i]]++;
  std::vector<bool> seen(l.size(), false);
  for (int32_t t : history) {
    if (seen[static_cast<size_t>(t)]) continue;
    seen[static_cast<size_t>(t)] = true;
    float& x = l[static_cast<size_t>(t)];
    if (p.repetition_penalty != 1.0f)
      x = x > 0 ? x / p.repetition_penalty : x * p.repetition_penalty;
    const auto it = count.find(t);
    if (it != count.end()) {
      const float f = p.frequency_penalty * static_cast<float>(it->second);
      x -= p.presence_penalty + f;
    }
  }
  std::vector<int32_t> order(l.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(),
            [&](int32_t a, int32_t b) { return l[a] > l[b] || (l[a] == l[b] && a < b); });
  size_t k = l.size();
  if (p.top_k > 0) k = std::min(k, static_cast<size_t>(p.top_k));
  if (p.temperature <= 0.0f) k = 1;
  std::vector<double> w(k);
  double sum = 0.0;
  for (size_t i = 0; i < k; ++i) {
    w[i] = std::exp((l[order[i]] - static_cast<double>(l[order[0]])) / p.temperature);
    sum += w[i];
  }
  size_t keep = k;
  double acc = 0.0;
  for (size_t i = 0; i < k && p.top_p < 1.0f; ++i) {
    acc += w[i] / sum;
    if (acc >= p.top_p) {
      keep = i + 1;
      break;
    }
  }
  if (p.min_p > 0.0f) {
    size_t m = 1;
    while (m < keep && w[m] >= w[0] * p.min_p) ++m;
    keep = m;
  }
  RefDist d;
  d.ids.assign(order.begin(), order.begin() + static_cast<int64_t>(keep));
  d.w.assign(w.begin(), w.begin() + static_cast<int64_t>(keep));
  for (double x : d.w) d.total += x;
  d.nucleus_mass = d.total;
  return d;
}

SamplingParams params(float t, int top_k, float top_p, float min_p, bool penalties) {
  SamplingParams p;
  p.temperature = t;
  p.top_k = top_k;
  p.top_p = top_p;
  p.min_p = min_p;
  if (penalties) {
    p.repetition_penalty = 1.2f;
    p.presence_penalty = 0.4f;
    p.frequency_penalty = 0.3f;
  }
  return p;
}

const SamplingParams kCombos[] = {
    params(1.0f, 0, 1.0f, 0.0f, false),  params(0.6f, 0, 1.0f, 0.0f, false),
    params(1.3f, 0, 1.0f, 0.0f, false),  params(0.8f, 5, 1.0f, 0.0f, false),
    params(0.8f, 0, 0.7f, 0.0f, false),  params(1.0f, 0, 1.0f, 0.08f, false),
    params(0.7f, 8, 0.9f, 0.05f, false), params(0.9f, 0, 0.95f, 0.02f, true),
    params(1.0f, 0, 1.0f, 0.0f, true),   params(1.1f, 12, 0.8f, 0.0f, true),
};

// Chi-square of `draws` Sampler tokens against the reference over bins of reference mass (every
// kept token of a small vocabulary in its own bin); tokens outside the kept set fail at once.
void expect_follows_reference(const SamplingParams& base, const std::vector<float>& l,
                              uint64_t seed, int draws, int max_bins) {
  SamplingParams p = base;
  p.seed = seed;
  std::vector<int32_t> history = {3, 3, 1, 7, 3};  // prompt {3, 3}, output {1, 7, 3}
  for (int32_t& t : history) t %= static_cast<int32_t>(l.size());
  const RefDist ref = reference(p, l, history, 2);
  // Bins: consecutive kept tokens (best first) until each holds about 1/max_bins of the mass.
  std::unordered_map<int32_t, int> bin_of;
  std::vector<double> expect;
  double acc = 0.0;
  for (size_t i = 0; i < ref.ids.size(); ++i) {
    if (expect.empty() || acc >= ref.total / max_bins) {
      expect.push_back(0.0);
      acc = 0.0;
    }
    acc += ref.w[i];
    expect.back() += ref.w[i] / ref.total * draws;
    bin_of[ref.ids[i]] = static_cast<int>(expect.size()) - 1;
  }
  std::vector<double> seen(expect.size(), 0.0);
  Sampler s(p);
  for (int i = 0; i < draws; ++i) {
    const int32_t t = s.sample(l, history, 2);
    const auto it = bin_of.find(t);
    ASSERT_NE(it, bin_of.end()) << "token " << t << " is not in the kept set";
    seen[static_cast<size_t>(it->second)] += 1.0;
  }
  double chi2 = 0.0;
  for (size_t b = 0; b < expect.size(); ++b) {
    chi2 += (seen[b] - expect[b]) * (seen[b] - expect[b]) / expect[b];
  }
  // Mean df, sd sqrt(2 df): 8 sd above the mean plus slack is never reached by a right sampler;
  // a wrong mass on one bin of a few percent is far beyond it at these draw counts.
  const double df = std::max<double>(1.0, static_cast<double>(expect.size()) - 1.0);
  EXPECT_LT(chi2, df + 8.0 * std::sqrt(2.0 * df) + 10.0)
      << "T " << p.temperature << " top_k " << p.top_k << " top_p " << p.top_p << " min_p "
      << p.min_p << " rep " << p.repetition_penalty << " bins " << expect.size();
}

TEST(SamplerDistribution, ChiSquareOnASmallVocabulary) {
  std::mt19937_64 g(2024);
  std::normal_distribution<float> d(0.0f, 1.5f);
  std::vector<float> l(24);
  for (float& x : l) x = d(g);
  l[5] = l[9];  // a tie
  uint64_t seed = 1;
  for (const SamplingParams& p : kCombos) {
    expect_follows_reference(p, l, seed++, 40000, 24);
    if (HasFailure()) return;
  }
}

TEST(SamplerDistribution, ChiSquareOnAFlatRowSplitIntoManyBands) {
  // 6000 tokens within a narrow range: the walks split bands several levels deep.
  std::mt19937_64 g(77);
  std::normal_distribution<float> d(0.0f, 0.4f);
  std::vector<float> l(6000);
  for (float& x : l) x = d(g);
  uint64_t seed = 100;
  for (const SamplingParams& p : kCombos) {
    expect_follows_reference(p, l, seed++, 30000, 30);
    if (HasFailure()) return;
  }
}

// A row like a language model's over Qwen3's vocabulary: a broad normal body, a few dozen
// plausible tokens well above it, one clear favourite.
std::vector<float> lm_row(uint64_t seed, float spread) {
  std::mt19937_64 g(seed);
  std::normal_distribution<float> body(-2.0f, spread);
  std::vector<float> l(151936);
  for (float& x : l) x = body(g);
  std::uniform_int_distribution<int32_t> at(0, 151935);
  for (int i = 0; i < 40; ++i)
    l[static_cast<size_t>(at(g))] = 8.0f + 0.15f * static_cast<float>(i % 17);
  l[static_cast<size_t>(at(g))] = 13.0f;
  return l;
}

TEST(SamplerDistribution, RealVocabularyRowDrawsTheReferenceTokens) {
  for (float spread : {2.5f, 0.5f}) {  // a confident model, and a flat one
    const std::vector<float> l = lm_row(9, spread);
    uint64_t seed = 1000;
    for (const SamplingParams& base : kCombos) {
      SamplingParams p = base;
      p.seed = seed++;
      const std::vector<int32_t> history = {17, 17, 400, 151935, 17};
      const RefDist ref = reference(p, l, history, 2);
      std::mt19937_64 g(*p.seed);
      Sampler s(p);
      for (int i = 0; i < 40; ++i) {
        const int32_t want = ref.draw(g);
        ASSERT_EQ(s.sample(l, history, 2), want)
            << "draw " << i << " spread " << spread << " T " << p.temperature << " top_k "
            << p.top_k << " top_p " << p.top_p << " min_p " << p.min_p;
      }
    }
  }
}

TEST(SamplerDistribution, RealVocabularyRowNucleusEqualsTheReference) {
  for (float spread : {2.5f, 0.5f}) {
    const std::vector<float> l = lm_row(21, spread);
    for (float top_p : {0.5f, 0.9f, 0.95f, 0.999f}) {
      for (float t : {0.6f, 1.0f}) {
        SamplingParams p = params(t, 0, top_p, 0.0f, false);
        const RefDist ref = reference(p, l, {}, 0);
        const float mx = *std::max_element(l.begin(), l.end());
        RowWalk w;
        w.reset(l, mx, 1.0 / t);
        // The whole row's mass, and the nucleus: its last token and its mass.
        double sum = 0.0;
        for (float x : l) sum += std::exp((x - static_cast<double>(mx)) / t);
        EXPECT_NEAR(w.total(), sum, 1e-12 * sum);
        const RowWalk::Stop st = w.walk({static_cast<double>(top_p) * w.total(), -1});
        EXPECT_EQ(st.token, ref.ids.back()) << "top_p " << top_p << " T " << t;
        EXPECT_NEAR(st.mass, ref.total, 1e-12 * ref.total);
        // Every kept token's probability: the walk reaches each prefix mass at that token.
        double prefix = 0.0;
        const size_t step = std::max<size_t>(1, ref.ids.size() / 50);
        for (size_t i = 0; i < ref.ids.size(); ++i) {
          prefix += ref.w[i];
          // Tokens far above the sums' rounding (1e-16 of the total) decide the walk alone.
          if (i % step != 0 || ref.w[i] < 1e-9 * ref.total) continue;
          const double mid = prefix - 0.5 * ref.w[i];  // the middle of token i's interval
          EXPECT_EQ(w.walk({mid, -1}).token, ref.ids[i]) << "rank " << i;
        }
      }
    }
  }
}

}  // namespace
}  // namespace arc
