// Images under tensor parallelism, mpirun -np 2: a qwen3vlmoe test model sharded over two ranks
// against the whole model on one (the oracle: the unchanged single-rank forward) on the same
// scripted steps: an image prefill in two chunks, a text sequence, both decoding in one batch.
// Only rank 0 holds the vision encoder; the workers get its output with the step messages. The
// broadcasts rank 0 sends are counted: a step with image rows sends the float payload, a text
// step does not. A batch the forward refuses (an image row out of range) is refused on every
// rank, and the ranks stay in step for the next one.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "arc/communicator.h"
#include "arc/mrope.h"
#include "arc/shard_plan.h"
#include "arc/tp_session.h"
#include "arc/vision_encoder.h"
#include "dist/tp_load_util.h"
#include "model/test_util.h"
#include "model/vision_test_util.h"
#include "vision/test_mmproj.h"

namespace arc {
namespace {

MpiCommunicator* g_comm = nullptr;  // set by main for the test's lifetime

constexpr int32_t kVisionStart = 259, kVisionEnd = 260, kImagePad = 261;

// Forwards every call to `inner`, recording the size of each broadcast (rank 0's step messages).
class CountingComm final : public Communicator {
 public:
  explicit CountingComm(Communicator& inner) : c_(inner) {}
  int rank() const override { return c_.rank(); }
  int size() const override { return c_.size(); }
  Status all_reduce_sum(float* data, int64_t n) override { return c_.all_reduce_sum(data, n); }
  Status all_gather(const float* send, std::span<const int64_t> counts, float* recv) override {
    return c_.all_gather(send, counts, recv);
  }
  Status broadcast(void* data, int64_t bytes, int root) override {
    sent.push_back(bytes);
    return c_.broadcast(data, bytes, root);
  }
  Status barrier() override { return c_.barrier(); }
  std::vector<int64_t> sent;  // bytes of every broadcast, in order

 private:
  Communicator& c_;
};

// The image prompt of sequence A and the encoder's output (rank 0 only).
struct ImageInputs {
  std::vector<int32_t> tokens;  // [n]: text, <vision_start>, image pads, <vision_end>, text
  RopePositions rope;           // [3, n]
  std::vector<int32_t> rows;    // [n]: image row of each token, -1 for text
  std::vector<float> embd;      // [n_image, (1 + n_deepstack) * n_embd]
  int64_t stride = 0;
};

ImageInputs make_inputs(const TestModelOptions& o) {
  ImageInputs in;
  const vision::TestMmprojOptions vo = testing::vl_projector(o.n_embd);
  std::vector<uint8_t> vbytes;
  auto vf = testing::build_test_projector(vo, &vbytes);
  EXPECT_TRUE(vf.ok()) << vf.status().to_string();
  auto enc = vision::VisionEncoder::from_file(std::move(*vf), 1);
  EXPECT_TRUE(enc.ok()) << enc.status().to_string();
  // 8 x 8 patches, merged 4 x 4 = 16 image tokens.
  auto img = (*enc)->encode(testing::random_grid(1, 8, 8, vo.patch_size, 11));
  EXPECT_TRUE(img.ok()) << img.status().to_string();
  in.tokens = {256, 72, 105, kVisionStart};
  const int64_t begin = static_cast<int64_t>(in.tokens.size());
  for (int64_t k = 0; k < img->n_tokens; ++k) in.tokens.push_back(kImagePad);
  for (int32_t x : {kVisionEnd, 119, 104, 97}) in.tokens.push_back(x);
  const ImageSpan span{begin, img->grid_t, img->grid_h, img->grid_w};
  in.rope = mrope_positions(static_cast<int64_t>(in.tokens.size()), std::span(&span, 1));
  in.rows.assign(in.tokens.size(), -1);
  for (int64_t k = 0; k < img->n_tokens; ++k) in.rows[begin + k] = static_cast<int32_t>(k);
  in.stride = (1 + o.n_deepstack) * o.n_embd;
  in.embd.resize(static_cast<size_t>(img->n_tokens * in.stride));
  for (int64_t k = 0; k < img->n_tokens; ++k) {
    float* row = in.embd.data() + k * in.stride;
    std::copy_n(img->main.data() + k * o.n_embd, o.n_embd, row);
    for (int64_t d = 0; d < o.n_deepstack; ++d) {
      std::copy_n(img->deepstack[d].data() + k * o.n_embd, o.n_embd, row + (1 + d) * o.n_embd);
    }
  }
  return in;
}

struct ScriptOut {
  std::vector<std::vector<float>> logits;  // every successful step's rows
  std::vector<int32_t> tokens;             // greedy tokens (A and B alternately while decoding)
  Status refused;                          // the step with a bad image row
  Status status;
};

// The scripted steps through `step`; `add_seq` / `reserve` allocate KV (the engine's or the
// driver's). Rank 0 only.
template <typename AddSeq, typename Reserve, typename Step>
ScriptOut run_script(const ImageInputs& in, int64_t n_vocab, AddSeq add_seq, Reserve reserve,
                     Step step) {
  ScriptOut out;
  const int64_t n = static_cast<int64_t>(in.tokens.size());
  auto a = add_seq();
  auto b = add_seq();
  if (!a.ok() || !b.ok()) return {{}, {}, {}, internal_error("add_seq")};
  if (!reserve(*a, n + 8).ok() || !reserve(*b, 16).ok()) {
    return {{}, {}, {}, internal_error("reserve")};
  }
  auto argmax = [&](const std::vector<float>& l, int64_t row) {
    const float* p = l.data() + row * n_vocab;
    return static_cast<int32_t>(std::max_element(p, p + n_vocab) - p);
  };
  // A's prefill in two chunks split inside the image; each chunk carries only its image rows,
  // renumbered from 0 (as the scheduler builds them).
  const int64_t split = 11;
  for (auto [lo, hi] : {std::pair<int64_t, int64_t>{0, split}, {split, n}}) {
    const int64_t t = hi - lo;
    std::vector<int32_t> tok(in.tokens.begin() + lo, in.tokens.begin() + hi), pos(t), seqs(t, *a),
        rope(3 * t), rows(t, -1);
    std::vector<float> embd;
    for (int64_t i = 0; i < t; ++i) {
      pos[i] = static_cast<int32_t>(lo + i);
      for (int axis = 0; axis < 3; ++axis) rope[axis * t + i] = in.rope.pos[axis * n + lo + i];
      if (const int32_t r = in.rows[lo + i]; r >= 0) {
        rows[i] = static_cast<int32_t>(embd.size() / in.stride);
        embd.insert(embd.end(), in.embd.begin() + r * in.stride,
                    in.embd.begin() + (r + 1) * in.stride);
      }
    }
    ForwardBatch fb{tok, pos, seqs, {}};
    fb.rope_positions = rope;
    fb.embd_rows = rows;
    fb.embd = embd;
    auto l = step(fb);
    if (!l.ok()) return {out.logits, out.tokens, {}, l.status()};
    out.logits.push_back(*l);
  }
  int32_t next_a = argmax(out.logits.back(), 0);
  // B: text only (no image inputs at all).
  const std::vector<int32_t> tb = {38, 17, 42, 99};
  std::vector<int32_t> pb = {0, 1, 2, 3}, sb(4, *b);
  auto lb = step(ForwardBatch{tb, pb, sb, {}});
  if (!lb.ok()) return {out.logits, out.tokens, {}, lb.status()};
  out.logits.push_back(*lb);
  int32_t next_b = argmax(*lb, 0);
  // Both decode in one batch: rotary positions for every token, no embedding rows.
  for (int k = 0; k < 4; ++k) {
    out.tokens.push_back(next_a);
    out.tokens.push_back(next_b);
    const int32_t r = static_cast<int32_t>(in.rope.next) + k;
    std::vector<int32_t> tok = {next_a, next_b}, pos = {static_cast<int32_t>(n) + k, 4 + k},
                         seqs = {*a, *b}, rope = {r, 4 + k, r, 4 + k, r, 4 + k};
    ForwardBatch fb{tok, pos, seqs, {}};
    fb.rope_positions = rope;
    auto l = step(fb);
    if (!l.ok()) return {out.logits, out.tokens, {}, l.status()};
    out.logits.push_back(*l);
    next_a = argmax(*l, 0);
    next_b = argmax(*l, 1);
  }
  // A token pointing at an image row the batch does not hold: refused before any collective.
  {
    const int32_t p = static_cast<int32_t>(n) + 4, r = static_cast<int32_t>(in.rope.next) + 4;
    std::vector<int32_t> tok = {next_a}, pos = {p}, seqs = {*a}, rope = {r, r, r}, rows = {3};
    ForwardBatch fb{tok, pos, seqs, {}};
    fb.rope_positions = rope;
    fb.embd_rows = rows;
    fb.embd = std::span(in.embd.data(), static_cast<size_t>(in.stride));  // one row
    auto l = step(fb);
    out.refused = l.status();
    // The same step, well formed: every rank is still in step.
    fb.embd_rows = {};
    fb.embd = {};
    l = step(fb);
    if (!l.ok()) return {out.logits, out.tokens, out.refused, l.status()};
    out.logits.push_back(*l);
    out.tokens.push_back(argmax(*l, 0));
  }
  return out;
}

TestModelOptions vl_model(const std::string& type) {
  TestModelOptions o;
  o.family = Family::kQwen3VlMoe;
  o.type = type;
  o.n_layer = 3;
  o.n_deepstack = 2;
  o.n_ff_exp = 64;  // 32 per rank: whole Q8_0 blocks
  o.seed = 5;
  return o;
}

void compare_tp(const std::string& type, float tol) {
  Communicator& comm = *g_comm;
  ASSERT_EQ(comm.size(), 2) << "run under mpirun -np 2";
  const TestModelOptions o = vl_model(type);
  ImageInputs in;  // rank 0 only: the workers never see the encoder or its output but in steps
  ScriptOut ref;
  int64_t n_vocab = 0;
  if (comm.rank() == 0) {
    in = make_inputs(o);
    Result<testing::Engine> e = testing::make_engine(o);
    ASSERT_TRUE(e.ok()) << e.status().to_string();
    n_vocab = e->model->config().n_vocab;
    ref = run_script(
        in, n_vocab, [&] { return Result<int32_t>(e->kv->add_sequence()); },
        [&](int32_t s, int64_t k) { return e->kv->reserve(s, k); },
        [&](const ForwardBatch& b) { return e->exec->run(b); });
    ASSERT_TRUE(ref.status.ok()) << ref.status.to_string();
    // The image changes the answer (else workers that ignored it would pass unnoticed): A's
    // prompt with plain token embeddings and positions gives other logits for its last token.
    Result<testing::Engine> plain = testing::make_engine(o);
    ASSERT_TRUE(plain.ok());
    const int32_t seq = plain->kv->add_sequence();
    ASSERT_TRUE(plain->kv->reserve(seq, static_cast<int64_t>(in.tokens.size())).ok());
    std::vector<int32_t> pos(in.tokens.size()), seqs(in.tokens.size(), seq);
    for (size_t i = 0; i < pos.size(); ++i) pos[i] = static_cast<int32_t>(i);
    auto text = plain->exec->run(ForwardBatch{in.tokens, pos, seqs, {}});
    ASSERT_TRUE(text.ok());
    float moved = 0;
    for (int64_t j = 0; j < n_vocab; ++j) {
      moved = std::max(moved, std::fabs((*text)[j] - ref.logits[1][j]));
    }
    EXPECT_GT(moved, 0.1f) << "the image does not change the logits";
  }
  Result<testing::Engine> e = testing::make_engine(o);
  ASSERT_TRUE(e.ok()) << e.status().to_string();
  Result<ShardPlan> plan = make_shard_plan(*e->model, comm.size(), comm.rank());
  ASSERT_TRUE(plan.ok()) << plan.status().to_string();
  ASSERT_TRUE(shard_model(*e->model, *e->backend, *plan).ok());
  const ModelConfig& lc = e->model->config();
  auto kv =
      KvCache::create(*e->backend, {lc.n_layer, lc.n_kv_head, lc.head_dim, 16, 64, DType::F32});
  ASSERT_TRUE(kv.ok());
  ForwardExecutor exec(*e->model, *e->backend, **kv);
  exec.set_tensor_parallel(&comm, plan->vocab_begin);
  CountingComm counting(comm);
  TpDriver drv(counting, exec, **kv);
  if (comm.rank() != 0) {
    Status s = drv.worker_loop();
    EXPECT_TRUE(s.ok()) << s.to_string();
    return;
  }
  std::vector<std::vector<int64_t>> per_step;  // broadcasts of each step (bytes)
  ScriptOut tp = run_script(
      in, n_vocab, [&] { return drv.add_sequence(); },
      [&](int32_t s, int64_t k) { return drv.reserve(s, k); },
      [&](const ForwardBatch& b) {
        const size_t before = counting.sent.size();
        auto l = drv.step(b);
        per_step.emplace_back(counting.sent.begin() + before, counting.sent.end());
        return l;
      });
  ASSERT_TRUE(drv.stop().ok());
  ASSERT_TRUE(tp.status.ok()) << tp.status.to_string();

  // Greedy tokens identical, logits within the tolerance.
  EXPECT_EQ(tp.tokens, ref.tokens);
  ASSERT_EQ(tp.logits.size(), ref.logits.size());
  float worst = 0;
  for (size_t s = 0; s < ref.logits.size(); ++s) {
    ASSERT_EQ(tp.logits[s].size(), ref.logits[s].size()) << "step " << s;
    for (size_t i = 0; i < ref.logits[s].size(); ++i) {
      worst = std::max(worst, std::fabs(tp.logits[s][i] - ref.logits[s][i]));
    }
  }
  EXPECT_LE(worst, tol) << "largest logit difference TP=2 vs TP=1";
  std::printf("  qwen3vlmoe %s with an image: max |logit diff| %.2e\n", type.c_str(), worst);
  // The bad row is refused on every rank alike.
  EXPECT_EQ(ref.refused.code(), StatusCode::kInvalidArgument) << ref.refused.to_string();
  EXPECT_EQ(tp.refused.code(), StatusCode::kInvalidArgument) << tp.refused.to_string();

  // Broadcasts: header (24 bytes), int32 words, and the float payload only with image rows.
  // Steps: A chunk 1, A chunk 2, B (text), 4 decode steps, the refused step, the retried one.
  ASSERT_EQ(per_step.size(), 9u);
  const int64_t row_bytes = in.stride * static_cast<int64_t>(sizeof(float));
  int64_t chunk1_rows = 0;
  for (int64_t i = 0; i < 11; ++i) chunk1_rows += in.rows[i] >= 0 ? 1 : 0;
  const int64_t n_image = static_cast<int64_t>(in.embd.size()) / in.stride;
  ASSERT_EQ(per_step[0].size(), 3u);
  EXPECT_EQ(per_step[0][2], chunk1_rows * row_bytes);
  ASSERT_EQ(per_step[1].size(), 3u);
  EXPECT_EQ(per_step[1][2], (n_image - chunk1_rows) * row_bytes);
  for (size_t s : {2, 3, 4, 5, 6, 8}) {
    ASSERT_EQ(per_step[s].size(), 2u) << "step " << s << " sent a float payload";
    EXPECT_EQ(per_step[s][0], 24);
  }
  // Text step B: tokens, positions, seq ids (4 each), one logit-row count, one table (seq, n,
  // one block) and the four image words, all zero.
  EXPECT_EQ(per_step[2][1], static_cast<int64_t>(sizeof(int32_t)) * (12 + 1 + 1 + 3 + 4));
  ASSERT_EQ(per_step[7].size(), 3u);  // the refused step still went out whole
  EXPECT_EQ(per_step[7][2], row_bytes);
}

// Logits have std ~4 (test_model.h); F32 differs only in summation order.
TEST(TensorParallelVision, ImageStepsMatchOneRankF32) {
  compare_tp("F32", 1e-3f);
}
// Q8_0: activations quantized per 32-value block, identical on both sides of a block-aligned
// split; summation order and the rounding of per-block products differ.
TEST(TensorParallelVision, ImageStepsMatchOneRankQ8) {
  compare_tp("Q8_0", 5e-3f);
}

}  // namespace
}  // namespace arc

int main(int argc, char** argv) {
  return arc::tptest::run_all_ranks(argc, argv, &arc::g_comm);
}
