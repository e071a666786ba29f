// Images through the scheduler: a request with an image, alone or batched with text requests,
// generates what a plain prefill + decode loop over the same inputs generates; a repeated image
// reuses its prefix blocks, another image in the same place does not.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <iterator>

#include "arc/vision_encoder.h"
#include "model/test_util.h"
#include "sched/image_inputs.h"
#include "sched/scheduler.h"
#include "vision/test_mmproj.h"

namespace arc::testing {
namespace {

constexpr int32_t kPad = 261;

std::vector<uint8_t> image_file(const std::string& name) {
  std::ifstream f(std::string(ARC_TEST_DATA_DIR) + "/vision/" + name, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), {}};
}

struct Fixture {
  Engine e;
  std::vector<uint8_t> mmproj;  // the projector's GGUF image (the encoder reads it in place)
  std::unique_ptr<vision::VisionEncoder> enc;
  ImageEmbeddingCache cache;
};

std::unique_ptr<Fixture> make_fixture() {
  auto fx = std::make_unique<Fixture>();
  TestModelOptions o;
  o.family = Family::kQwen3VlMoe;
  o.n_layer = 3;
  o.n_deepstack = 2;
  o.seed = 9;
  auto e = make_engine(o, 2);
  if (!e.ok()) return nullptr;
  fx->e = std::move(*e);
  vision::TestMmprojOptions vo;
  vo.proj_dim = o.n_embd;
  vo.deepstack_layers = {0, 1};
  auto bytes = vision::build_test_mmproj(vo);
  if (!bytes.ok()) return nullptr;
  fx->mmproj = std::move(*bytes);
  auto f = gguf::File::parse(fx->mmproj, "mmproj");
  if (!f.ok()) return nullptr;
  auto enc = vision::VisionEncoder::from_file(std::move(*f), 1);
  if (!enc.ok()) return nullptr;
  fx->enc = std::move(*enc);
  return fx;
}

SequenceRequest image_request(Fixture& fx, const std::string& image) {
  const std::vector<int32_t> ids = {256, 72, 259, kPad, 260, 104, 105};
  std::vector<ImageInput> imgs(1);
  imgs[0].bytes = image_file(image);
  auto ip = expand_image_prompt(ids, kPad, imgs, *fx.enc, fx.cache, fx.e.model->config());
  EXPECT_TRUE(ip.ok()) << ip.status().to_string();
  SequenceRequest r;
  r.prompt = ip->tokens;
  r.rope_positions = ip->rope_positions;
  r.rope_next = ip->rope_next;
  r.embd_rows = ip->embd_rows;
  r.embd = ip->embd;
  r.embd_width = 3 * fx.e.model->config().n_embd;
  r.cache_keys = ip->cache_keys;
  r.max_new_tokens = 6;
  r.top_logprobs = 0;  // report the chosen token's logprob
  r.sampling.temperature = 0.0f;
  r.sampling.ignore_eos = true;
  return r;
}

struct Gen {
  std::vector<int32_t> tokens;
  std::vector<double> logprobs;
};

void expect_same(const Gen& got, const Gen& want) {
  EXPECT_EQ(got.tokens, want.tokens);
  ASSERT_EQ(got.logprobs.size(), want.logprobs.size());
  for (size_t i = 0; i < want.logprobs.size(); ++i) {
    EXPECT_NEAR(got.logprobs[i], want.logprobs[i], 1e-3) << "step " << i;
  }
}

// Greedy generation with the plain forward loop (the oracle).
Gen plain_loop(Fixture& fx, const SequenceRequest& r) {
  Engine& e = fx.e;
  const int64_t n = static_cast<int64_t>(r.prompt.size());
  const int32_t seq = e.kv->add_sequence();
  EXPECT_TRUE(e.kv->reserve(seq, n + r.max_new_tokens).ok());
  std::vector<int32_t> pos(n), seqs(n, seq);
  for (int64_t i = 0; i < n; ++i) pos[i] = static_cast<int32_t>(i);
  ForwardBatch b{r.prompt, pos, seqs, {}};
  b.rope_positions = r.rope_positions;
  b.embd_rows = r.embd_rows;
  b.embd = *r.embd;
  auto logits = e.exec->run(b);
  Gen out;
  for (int64_t i = 0; i < r.max_new_tokens && logits.ok(); ++i) {
    const int32_t id =
        static_cast<int32_t>(std::max_element(logits->begin(), logits->end()) - logits->begin());
    double z = 0.0;
    for (float l : *logits) z += std::exp(static_cast<double>(l - (*logits)[id]));
    out.tokens.push_back(id);
    out.logprobs.push_back(-std::log(z));
    const int32_t p = static_cast<int32_t>(n + i), rp = static_cast<int32_t>(r.rope_next + i);
    const int32_t rope[3] = {rp, rp, rp};
    ForwardBatch d{std::span(&id, 1), std::span(&p, 1), std::span(&seq, 1), {}};
    d.rope_positions = std::span(rope, 3);
    logits = e.exec->run(d);
  }
  e.kv->free_sequence(seq);
  return out;
}

Gen collect(const std::shared_ptr<RequestHandle>& h) {
  Gen out;
  std::vector<TokenOutput> outs;
  while (h->next(outs, std::chrono::milliseconds(100)) || !outs.empty()) {
    for (const TokenOutput& o : outs) {
      EXPECT_TRUE(o.error.ok()) << o.error.to_string();
      if (!o.is_prompt && (!o.finished || o.finish_reason == "length")) {
        out.tokens.push_back(o.token);
        out.logprobs.push_back(o.logprob);
      }
    }
    outs.clear();
  }
  return out;
}

TEST(VisionScheduler, BatchedWithTextMatchesThePlainLoopAndReusesTheImagePrefix) {
  auto fx = make_fixture();
  ASSERT_NE(fx, nullptr);
  const SequenceRequest a = image_request(*fx, "rgb8.png");
  const SequenceRequest b = image_request(*fx, "quad.jpg");
  EXPECT_EQ(fx->cache.hits(), 0u);
  const Gen want_a = plain_loop(*fx, a);
  const Gen want_b = plain_loop(*fx, b);
  SequenceRequest text;
  text.prompt = {256, 10, 20, 30, 40, 50};
  text.max_new_tokens = 6;
  text.sampling.ignore_eos = true;

  SchedulerOptions so;
  so.max_batch_tokens = 64;  // the image prompt is prefilled in chunks
  so.ctx_size = 512;
  Scheduler sched(*fx->e.exec, *fx->e.kv, fx->e.model->config().n_vocab, so);
  auto ht = sched.submit(text);
  auto ha = sched.submit(a);
  auto hb = sched.submit(b);
  expect_same(collect(ha), want_a);
  expect_same(collect(hb), want_b);
  // Only 3 tokens precede the image: no full block of b is shared with a.
  EXPECT_EQ(hb->timing().cached_tokens, 0);
  EXPECT_EQ(collect(ht).tokens.size(), 6u);
  // The same image again: its blocks come from the prefix cache, the answer is the same.
  auto ha2 = sched.submit(image_request(*fx, "rgb8.png"));
  expect_same(collect(ha2), want_a);
  EXPECT_GE(ha2->timing().cached_tokens, 48);
  EXPECT_EQ(fx->cache.hits(), 1u);  // and it was not encoded again
  auto hb2 = sched.submit(image_request(*fx, "quad.jpg"));
  expect_same(collect(hb2), want_b);
  EXPECT_GE(hb2->timing().cached_tokens, 48);
  // The images matter: the two answers' scores differ.
  double diff = 0.0;
  for (size_t i = 0; i < want_a.logprobs.size(); ++i) {
    diff = std::max(diff, std::fabs(want_a.logprobs[i] - want_b.logprobs[i]));
  }
  EXPECT_GT(diff, 1e-2);
}

}  // namespace
}  // namespace arc::testing
