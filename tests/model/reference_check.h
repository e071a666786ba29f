// The engine's logits against the double-precision reference forward: a prompt's prefill (every
// position) and one decode step after it (which reads the cached K/V), each logit within
// tol * max(1, largest |reference logit| of its row).
#pragma once

#include <algorithm>
#include <cmath>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "reference_forward.h"
#include "test_util.h"

namespace arc::testing {

inline double max_abs_logit(const std::vector<double>& v) {
  double m = 0;
  for (double x : v) m = std::max(m, std::abs(x));
  return m;
}

inline void expect_prefill_and_decode_match(Engine& e, const ReferenceModel& ref,
                                            const std::string& name, double tol) {
  const std::vector<int32_t> prompt = {1, 72, 101, 108, 108, 111, 44, 32, 119, 111, 114};
  std::vector<int32_t> all = prompt;
  all.push_back(33);
  const auto want = ref.forward(all);  // [n_tokens][n_vocab]
  const int64_t n_vocab = ref.n_vocab();
  const int32_t seq = e.kv->add_sequence();
  ASSERT_TRUE(e.kv->reserve(seq, static_cast<int64_t>(all.size())).ok());
  std::vector<int32_t> pos(prompt.size()), seqs(prompt.size(), seq), rows(prompt.size());
  for (size_t i = 0; i < pos.size(); ++i) pos[i] = rows[i] = static_cast<int32_t>(i);
  auto got = e.exec->run({prompt, pos, seqs, rows});
  ASSERT_TRUE(got.ok()) << got.status().to_string();
  ASSERT_EQ(got->size(), prompt.size() * n_vocab);
  for (size_t i = 0; i < prompt.size(); ++i) {
    const double scale = std::max(1.0, max_abs_logit(want[i]));
    for (int64_t v = 0; v < n_vocab; ++v) {
      ASSERT_NEAR((*got)[i * n_vocab + v], want[i][v], tol * scale)
          << name << " prefill token " << i << " logit " << v;
    }
  }
  const int32_t tok = all.back(), p = static_cast<int32_t>(prompt.size());
  auto dec = e.exec->run({std::span(&tok, 1), std::span(&p, 1), std::span(&seq, 1), {}});
  ASSERT_TRUE(dec.ok()) << dec.status().to_string();
  const double scale = std::max(1.0, max_abs_logit(want.back()));
  for (int64_t v = 0; v < n_vocab; ++v) {
    ASSERT_NEAR((*dec)[v], want.back()[v], tol * scale) << name << " decode logit " << v;
  }
}

// Prefill of `prompt` in two chunks, split at every position, each split on a fresh sequence:
// every token's logits against the reference's (chunking must not change a token's result).
inline void expect_chunked_prefill_matches(Engine& e, const ReferenceModel& ref,
                                           const std::vector<int32_t>& prompt,
                                           const std::string& name, double tol) {
  const auto want = ref.forward(prompt);
  const int64_t v = ref.n_vocab(), n = static_cast<int64_t>(prompt.size());
  for (int64_t split = 1; split < n; ++split) {
    const int32_t seq = e.kv->add_sequence();
    ASSERT_TRUE(e.kv->reserve(seq, n).ok());
    for (auto [b, end] : {std::pair<int64_t, int64_t>{0, split}, {split, n}}) {
      std::vector<int32_t> toks(prompt.begin() + b, prompt.begin() + end), pos, seqs, rows;
      for (int64_t i = b; i < end; ++i) {
        pos.push_back(static_cast<int32_t>(i));
        seqs.push_back(seq);
        rows.push_back(static_cast<int32_t>(i - b));
      }
      auto got = e.exec->run({toks, pos, seqs, rows});
      ASSERT_TRUE(got.ok()) << got.status().to_string();
      for (int64_t i = b; i < end; ++i) {
        const double scale = std::max(1.0, max_abs_logit(want[i]));
        for (int64_t t = 0; t < v; ++t) {
          ASSERT_NEAR((*got)[(i - b) * v + t], want[i][t], tol * scale)
              << name << " split " << split << " token " << i << " logit " << t;
        }
      }
    }
    e.kv->free_sequence(seq);
  }
}

}  // namespace arc::testing
