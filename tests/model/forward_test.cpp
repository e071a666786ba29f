// Engine logits against the double-precision reference forward, on tiny models of every family,
// F32 and quantized weights, prefill and decode after prefill; greedy determinism across thread
// counts and batch compositions.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "model/reference_check.h"
#include "model/reference_forward.h"
#include "model/test_util.h"
#include "sched/sampler.h"

namespace arc::testing {
namespace {

class ForwardVsReference : public ::testing::TestWithParam<ModelCase> {};

TEST_P(ForwardVsReference, PrefillAndDecodeMatch) {
  const ModelCase c = GetParam();
  const TestModelOptions o = tiny_model(c);
  auto e = make_engine(o, 2);
  ASSERT_TRUE(e.ok()) << e.status().to_string();
  auto f = gguf::File::parse(e->bytes, "ref");
  ASSERT_TRUE(f.ok());
  ReferenceModel ref(*f);

  // F32 weights: only float rounding differs. Quantized: the kernels may quantize activations.
  const double tol = std::string(c.type) == "F32" ? 2e-3 : 0.08;
  expect_prefill_and_decode_match(*e, ref, c.name, tol);
}

INSTANTIATE_TEST_SUITE_P(Families, ForwardVsReference,
                         ::testing::Values(ModelCase{"qwen3moe_f32", Family::kQwen3Moe, 8, "F32"},
                                           ModelCase{"qwen3moe_q8", Family::kQwen3Moe, 8, "Q8_0"},
                                           ModelCase{"qwen3moe_q4km", Family::kQwen3Moe, 8,
                                                     "Q4_K_M"},
                                           ModelCase{"qwen2moe_f32", Family::kQwen2Moe, 4, "F32"},
                                           ModelCase{"qwen2moe_q8", Family::kQwen2Moe, 4, "Q8_0"},
                                           ModelCase{"llama_f32", Family::kLlama, 0, "F32"},
                                           ModelCase{"llama_q4km", Family::kLlama, 0, "Q4_K_M"},
                                           ModelCase{"mixtral_f32", Family::kLlama, 4, "F32"},
                                           ModelCase{"mixtral_q8", Family::kLlama, 4, "Q8_0"},
                                           ModelCase{"qwen3_f32", Family::kQwen3, 0, "F32"},
                                           ModelCase{"qwen3_f16", Family::kQwen3, 0, "F16"},
                                           ModelCase{"gptoss_f32", Family::kGptOss, 8, "F32"},
                                           ModelCase{"gptoss_q8", Family::kGptOss, 8, "Q8_0"},
                                           ModelCase{"gptoss_mxfp4", Family::kGptOss, 8, "MXFP4"},
                                           ModelCase{"gptoss_q4km", Family::kGptOss, 8, "Q4_K_M"}),
                         [](const auto& info) { return std::string(info.param.name); });

// Greedy decoding of several prompts; `together` decodes them in one batch per step.
std::vector<std::vector<int32_t>> greedy(Engine& e,
                                         const std::vector<std::vector<int32_t>>& prompts,
                                         int n_new, bool together) {
  std::vector<std::vector<int32_t>> out(prompts.size());
  std::vector<int32_t> ids;
  for (const auto& p : prompts) {
    ids.push_back(e.kv->add_sequence());
    EXPECT_TRUE(e.kv->reserve(ids.back(), static_cast<int64_t>(p.size()) + n_new).ok());
  }
  std::vector<int32_t> next(prompts.size()), len(prompts.size());
  auto step = [&](const std::vector<size_t>& which, bool prefill) {
    std::vector<int32_t> toks, pos, seqs;
    for (size_t s : which) {
      if (prefill) {
        for (size_t i = 0; i < prompts[s].size(); ++i) {
          toks.push_back(prompts[s][i]);
          pos.push_back(static_cast<int32_t>(i));
          seqs.push_back(ids[s]);
        }
        len[s] = static_cast<int32_t>(prompts[s].size());
      } else {
        toks.push_back(next[s]);
        pos.push_back(len[s]++);
        seqs.push_back(ids[s]);
      }
    }
    auto logits = e.exec->run({toks, pos, seqs, {}});
    EXPECT_TRUE(logits.ok()) << logits.status().to_string();
    const int64_t v = e.model->config().n_vocab;
    for (size_t j = 0; j < which.size(); ++j) {
      next[which[j]] = argmax(std::span(logits->data() + j * v, static_cast<size_t>(v)));
      out[which[j]].push_back(next[which[j]]);
    }
  };
  if (together) {
    std::vector<size_t> all(prompts.size());
    for (size_t s = 0; s < all.size(); ++s) all[s] = s;
    step(all, true);
    for (int i = 1; i < n_new; ++i) step(all, false);
  } else {
    for (size_t s = 0; s < prompts.size(); ++s) {
      step({s}, true);
      for (int i = 1; i < n_new; ++i) step({s}, false);
    }
  }
  for (int32_t id : ids) e.kv->free_sequence(id);
  return out;
}

TEST(Forward, GreedyIsIdenticalAcrossThreadsAndBatches) {
  TestModelOptions o = tiny_model({"", Family::kQwen3Moe, 8, "Q8_0"});
  const std::vector<std::vector<int32_t>> prompts = {
      {5, 17, 99, 3, 250},
      {200, 1, 1, 40, 41, 42, 43, 44, 45, 46, 47, 48, 49, 50, 51, 52, 53, 54},
      {7}};
  auto e1 = make_engine(o, 1, DType::F16, 4);
  auto e2 = make_engine(o, 2, DType::F16, 4);
  ASSERT_TRUE(e1.ok() && e2.ok());
  const auto alone1 = greedy(*e1, prompts, 12, false);
  const auto alone2 = greedy(*e2, prompts, 12, false);
  const auto batch2 = greedy(*e2, prompts, 12, true);
  const auto batch1 = greedy(*e1, prompts, 12, true);
  EXPECT_EQ(alone1, alone2);
  EXPECT_EQ(alone1, batch2);
  EXPECT_EQ(alone1, batch1);
}

// The generator's weights give clear greedy margins (the point of its scaling).
TEST(TestModel, GreedyStepsHaveClearMargins) {
  for (Family fam :
       {Family::kQwen3Moe, Family::kQwen2Moe, Family::kLlama, Family::kQwen3, Family::kGptOss}) {
    TestModelOptions o =
        tiny_model({"", fam, fam == Family::kLlama || fam == Family::kQwen3 ? 0 : 4, "F32"});
    auto bytes = build_test_model(o);
    ASSERT_TRUE(bytes.ok());
    auto f = gguf::File::parse(*bytes, "margins");
    ASSERT_TRUE(f.ok());
    ReferenceModel ref(*f);
    std::vector<int32_t> toks = {10, 20, 30};
    double min_margin = 1e9;
    for (int step = 0; step < 8; ++step) {
      const auto logits = ref.forward(toks).back();
      std::vector<double> s = logits;
      std::partial_sort(s.begin(), s.begin() + 2, s.end(), std::greater<>());
      min_margin = std::min(min_margin, s[0] - s[1]);
      toks.push_back(
          static_cast<int32_t>(std::max_element(logits.begin(), logits.end()) - logits.begin()));
    }
    EXPECT_GT(min_margin, 0.05) << family_name(fam);
  }
}

}  // namespace
}  // namespace arc::testing
