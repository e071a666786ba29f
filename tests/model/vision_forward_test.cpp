// Whole-model logits of a qwen3vlmoe test model with an image against the reference forward: the
// engine's encoder output and multi-axis positions through ForwardExecutor, the reference's own
// encoder output and hand-computed positions through ReferenceModel.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "arc/mrope.h"
#include "arc/vision_encoder.h"
#include "model/reference_forward.h"
#include "model/reference_vision.h"
#include "model/test_util.h"
#include "model/vision_test_util.h"
#include "vision/test_mmproj.h"

namespace arc::testing {
namespace {

constexpr int32_t kVisionStart = 259, kVisionEnd = 260, kImagePad = 261;

TestModelOptions vl_model() {
  TestModelOptions o;
  o.family = Family::kQwen3VlMoe;
  o.n_layer = 3;
  o.n_deepstack = 2;
  o.n_embd = 64;
  o.head_dim = 16;
  o.n_expert = 8;
  o.n_expert_used = 2;
  o.seed = 5;
  return o;
}

vision::PatchGrid grid(int h, int w, int64_t patch) {
  vision::PatchGrid g;
  g.t = 1;
  g.h = h;
  g.w = w;
  g.patch_dim = static_cast<int>(6 * patch * patch);
  g.pixels.resize(static_cast<size_t>(g.n_patches() * g.patch_dim));
  for (size_t i = 0; i < g.pixels.size(); ++i) {
    g.pixels[i] = static_cast<float>(std::sin(0.37 * static_cast<double>(i)));
  }
  return g;
}

TEST(Mrope, PositionsFollowTheQwen3VlRule) {
  // 3 text, <vision_start>, a 2 x 3 image, <vision_end>, 2 text.
  const ImageSpan img{4, 1, 2, 3};
  const RopePositions r = mrope_positions(13, std::span(&img, 1));
  const std::vector<int32_t> t = {0, 1, 2, 3, 4, 4, 4, 4, 4, 4, 7, 8, 9};
  const std::vector<int32_t> h = {0, 1, 2, 3, 4, 4, 4, 5, 5, 5, 7, 8, 9};
  const std::vector<int32_t> w = {0, 1, 2, 3, 4, 5, 6, 4, 5, 6, 7, 8, 9};
  EXPECT_EQ(std::vector<int32_t>(r.pos.begin(), r.pos.begin() + 13), t);
  EXPECT_EQ(std::vector<int32_t>(r.pos.begin() + 13, r.pos.begin() + 26), h);
  EXPECT_EQ(std::vector<int32_t>(r.pos.begin() + 26, r.pos.end()), w);
  EXPECT_EQ(r.next, 10);
  // Two images back to back: the second starts after the first's max side.
  const ImageSpan two[] = {{0, 1, 2, 2}, {4, 1, 4, 2}};
  const RopePositions q = mrope_positions(13, two);
  EXPECT_EQ(q.pos[4], 2);        // t of the second image's first token
  EXPECT_EQ(q.pos[13 + 11], 5);  // h of its last token (row 3)
  EXPECT_EQ(q.pos[12], 6);       // the text after: 2 + max(4, 2)
  EXPECT_EQ(q.next, 7);
}

TEST(VisionForward, LogitsWithAnImageMatchTheReference) {
  const TestModelOptions o = vl_model();
  auto e = make_engine(o, 2);
  ASSERT_TRUE(e.ok()) << e.status().to_string();
  const ModelConfig& cfg = e->model->config();
  ASSERT_EQ(cfg.family, Family::kQwen3VlMoe);
  ASSERT_EQ(cfg.n_deepstack, 2);
  ASSERT_TRUE(cfg.mrope());
  auto lm = gguf::File::parse(e->bytes, "lm");
  ASSERT_TRUE(lm.ok());
  ReferenceModel ref(*lm);

  const vision::TestMmprojOptions vo = vl_projector(o.n_embd);
  std::vector<uint8_t> vbytes;
  auto vf = build_test_projector(vo, &vbytes);
  ASSERT_TRUE(vf.ok()) << vf.status().to_string();
  ReferenceVision vref(*vf);
  auto enc = vision::VisionEncoder::from_file(std::move(*vf), 2);
  ASSERT_TRUE(enc.ok()) << enc.status().to_string();

  const vision::PatchGrid g = grid(4, 6, vo.patch_size);  // merged 2 x 3 = 6 tokens
  auto img = (*enc)->encode(g);
  ASSERT_TRUE(img.ok()) << img.status().to_string();
  const auto want_img = vref.encode(g.pixels, 1, 4, 6);

  std::vector<int32_t> tokens = {256, 72, 105, kVisionStart};
  const int64_t img_begin = static_cast<int64_t>(tokens.size());
  for (int k = 0; k < 6; ++k) tokens.push_back(kImagePad);
  for (int32_t x : {kVisionEnd, 119, 104, 97, 116}) tokens.push_back(x);
  const int64_t n = static_cast<int64_t>(tokens.size());

  // Reference inputs: positions written out by hand (3 text + start at 0..3, image rows/cols from
  // 4, text after at 4 + max(2, 3) = 7, ...).
  ReferenceImageInputs ri;
  ri.embd.resize(n);
  ri.deepstack.resize(n);
  for (int64_t i = 0; i < n; ++i) {
    if (i < img_begin) ri.rope_pos.push_back({i, i, i});
    if (i >= img_begin && i < img_begin + 6) {
      const int64_t k = i - img_begin;
      ri.rope_pos.push_back({4, 4 + k / 3, 4 + k % 3});
      ri.embd[i] = want_img.main[k];
      ri.deepstack[i] = {want_img.deepstack[0][k], want_img.deepstack[1][k]};
    }
    if (i >= img_begin + 6) ri.rope_pos.push_back({i - 3, i - 3, i - 3});
  }
  const auto want = ref.forward(tokens, &ri);
  const auto text_only = ref.forward(tokens);

  // Engine inputs.
  const ImageSpan span{img_begin, img->grid_t, img->grid_h, img->grid_w};
  const RopePositions rp = mrope_positions(n, std::span(&span, 1));
  const int64_t stride = 3 * o.n_embd;
  std::vector<float> embd(static_cast<size_t>(6 * stride));
  for (int64_t k = 0; k < 6; ++k) {
    float* row = embd.data() + k * stride;
    std::copy_n(img->main.data() + k * o.n_embd, o.n_embd, row);
    std::copy_n(img->deepstack[0].data() + k * o.n_embd, o.n_embd, row + o.n_embd);
    std::copy_n(img->deepstack[1].data() + k * o.n_embd, o.n_embd, row + 2 * o.n_embd);
  }
  std::vector<int32_t> rows(n, -1);
  for (int64_t k = 0; k < 6; ++k) rows[img_begin + k] = static_cast<int32_t>(k);

  const int32_t seq = e->kv->add_sequence();
  ASSERT_TRUE(e->kv->reserve(seq, n + 1).ok());
  std::vector<int32_t> pos(n), seqs(n, seq), out_rows(n);
  for (int64_t i = 0; i < n; ++i) pos[i] = out_rows[i] = static_cast<int32_t>(i);
  ForwardBatch b{tokens, pos, seqs, out_rows};
  b.rope_positions = rp.pos;
  b.embd_rows = rows;
  b.embd = embd;
  auto got = e->exec->run(b);
  ASSERT_TRUE(got.ok()) << got.status().to_string();
  const int64_t v = ref.n_vocab();
  ASSERT_EQ(static_cast<int64_t>(got->size()), n * v);
  double max_diff = 0.0, moved = 0.0;
  for (int64_t i = 0; i < n; ++i) {
    double scale = 1.0;
    for (double x : want[i]) scale = std::max(scale, std::fabs(x));
    for (int64_t j = 0; j < v; ++j) {
      max_diff = std::max(max_diff, std::fabs((*got)[i * v + j] - want[i][j]) / scale);
      moved = std::max(moved, std::fabs(text_only[i][j] - want[i][j]) / scale);
    }
  }
  EXPECT_LT(max_diff, 2e-3);
  EXPECT_GT(moved, 0.05) << "the image must change the logits after it";

  // Decode one token after the prompt: text positions continue at rp.next on every axis.
  const std::vector<int32_t> next_tok = {33};
  std::vector<int32_t> all = tokens;
  all.push_back(33);
  ri.embd.emplace_back();
  ri.deepstack.emplace_back();
  ri.rope_pos.push_back({rp.next, rp.next, rp.next});
  const auto want2 = ref.forward(all, &ri);
  const std::vector<int32_t> dpos = {static_cast<int32_t>(n)}, dseq = {seq};
  const std::vector<int32_t> drope = {static_cast<int32_t>(rp.next), static_cast<int32_t>(rp.next),
                                      static_cast<int32_t>(rp.next)};
  ForwardBatch d{next_tok, dpos, dseq, {}};
  d.rope_positions = drope;
  auto got2 = e->exec->run(d);
  ASSERT_TRUE(got2.ok()) << got2.status().to_string();
  double scale = 1.0, diff = 0.0;
  for (double x : want2[n]) scale = std::max(scale, std::fabs(x));
  for (int64_t j = 0; j < v; ++j) diff = std::max(diff, std::fabs((*got2)[j] - want2[n][j]));
  EXPECT_LT(diff / scale, 2e-3);
}

TEST(VisionForward, TextOnlyBatchesRunAsPlainRope) {
  // Without image inputs a qwen3vlmoe model is qwen3moe: the reference with positions i on
  // every axis.
  const TestModelOptions o = vl_model();
  auto e = make_engine(o, 1);
  ASSERT_TRUE(e.ok());
  auto lm = gguf::File::parse(e->bytes, "lm");
  ReferenceModel ref(*lm);
  const std::vector<int32_t> tokens = {256, 10, 20, 30, 40};
  const auto want = ref.forward(tokens);
  const int32_t seq = e->kv->add_sequence();
  ASSERT_TRUE(e->kv->reserve(seq, 5).ok());
  const std::vector<int32_t> pos = {0, 1, 2, 3, 4}, seqs(5, seq);
  auto got = e->exec->run({tokens, pos, seqs, pos});
  ASSERT_TRUE(got.ok());
  const int64_t v = ref.n_vocab();
  for (int64_t i = 0; i < 5; ++i) {
    for (int64_t j = 0; j < v; ++j) EXPECT_NEAR((*got)[i * v + j], want[i][j], 2e-3 * 10);
  }
}

TEST(VisionForward, RejectsMalformedImageInputs) {
  auto e = make_engine(vl_model(), 1);
  ASSERT_TRUE(e.ok());
  const int32_t seq = e->kv->add_sequence();
  ASSERT_TRUE(e->kv->reserve(seq, 4).ok());
  const std::vector<int32_t> tokens = {1, 2, 3, kImagePad}, pos = {0, 1, 2, 3}, seqs(4, seq);
  std::vector<float> embd(3 * 64, 0.5f);
  const std::vector<int32_t> short_rope = {0, 1, 2};
  ForwardBatch a{tokens, pos, seqs, {}};
  a.rope_positions = short_rope;
  EXPECT_FALSE(e->exec->run(a).ok());
  const std::vector<int32_t> bad_rows = {-1, -1, -1, 1};
  ForwardBatch b{tokens, pos, seqs, {}};
  b.embd_rows = bad_rows;
  b.embd = embd;
  EXPECT_FALSE(e->exec->run(b).ok());
  const std::vector<float> ragged(100, 0.0f);
  const std::vector<int32_t> ok_rows = {-1, -1, -1, 0};
  ForwardBatch c{tokens, pos, seqs, {}};
  c.embd_rows = ok_rows;
  c.embd = ragged;
  EXPECT_FALSE(e->exec->run(c).ok());
  ForwardBatch fine{tokens, pos, seqs, {}};
  fine.embd_rows = ok_rows;
  fine.embd = embd;
  EXPECT_TRUE(e->exec->run(fine).ok());
}

}  // namespace
}  // namespace arc::testing
