// The forward executor's graph path (decode steps padded to batch buckets, recorded once, replayed
// with new inputs uploaded into the same buffers) on the CPU: a backend that records ops like a
// CUDA graph (pointers and shapes frozen, values read at replay) must give the same logits as the
// plain CPU backend, step after step, for batches that need padding and for growing contexts.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <map>

#include "arc/backend_caps.h"
#include "model/test_util.h"

namespace arc::testing {
namespace {

// The CPU backend, plus StepGraphs: ops enqueued while capturing are stored as closures over
// their arguments (not run); replay runs them again.
class RecordingBackend final : public Backend, public StepGraphs {
 public:
  explicit RecordingBackend(int threads) : cpu_(make_cpu_backend(threads)) {}

  int captures = 0;
  int replays = 0;

  std::string_view name() const override { return "recording"; }
  int num_threads() const override { return cpu_->num_threads(); }
  Result<std::unique_ptr<DeviceBuffer>> alloc(size_t bytes) override { return cpu_->alloc(bytes); }
  Result<const void*> map_weights(std::span<const uint8_t> host) override {
    return cpu_->map_weights(host);
  }
  void upload(void* dst, const void* src, size_t bytes) override {
    EXPECT_FALSE(capturing_) << "an upload inside a recorded step";
    cpu_->upload(dst, src, bytes);
  }
  void download(void* dst, const void* src, size_t bytes) override {
    EXPECT_FALSE(capturing_) << "a download inside a recorded step";
    cpu_->download(dst, src, bytes);
  }
  Status sync() override { return cpu_->sync(); }

  void matmul(const kernels::MatmulArgs& a) override {
    op([=, this] { cpu_->matmul(a); });
  }
  void rms_norm(const float* x, const float* w, float* y, int64_t n, int64_t d,
                float eps) override {
    op([=, this] { cpu_->rms_norm(x, w, y, n, d, eps); });
  }
  void sum_squares(const float* x, float* ss, int64_t n, int64_t d) override {
    op([=, this] { cpu_->sum_squares(x, ss, n, d); });
  }
  void rms_norm_sumsq(const float* x, const float* w, const float* ss, float* y, int64_t n,
                      int64_t d, int64_t n_total, float eps) override {
    op([=, this] { cpu_->rms_norm_sumsq(x, w, ss, y, n, d, n_total, eps); });
  }
  void rope(const kernels::RopeArgs& a) override {
    op([=, this] { cpu_->rope(a); });
  }
  void add(const float* a, const float* b, float* y, int64_t n) override {
    op([=, this] { cpu_->add(a, b, y, n); });
  }
  void add_bias(float* x, const float* b, int64_t n, int64_t d) override {
    op([=, this] { cpu_->add_bias(x, b, n, d); });
  }
  void swiglu(const float* g, const float* u, float* y, int64_t n) override {
    op([=, this] { cpu_->swiglu(g, u, y, n); });
  }
  void add_sigmoid_gated(float* y, const float* s, const float* g, int64_t n, int64_t d) override {
    op([=, this] { cpu_->add_sigmoid_gated(y, s, g, n, d); });
  }
  void get_rows(DType t, const void* table, int64_t n_rows, int64_t d, const int32_t* ids,
                int64_t n_ids, float* out) override {
    op([=, this] { cpu_->get_rows(t, table, n_rows, d, ids, n_ids, out); });
  }
  void gather(const float* x, const int32_t* rows, int64_t n, int64_t d, float* out) override {
    op([=, this] { cpu_->gather(x, rows, n, d, out); });
  }
  void kv_store(const kernels::KvStoreArgs& a) override {
    op([=, this] { cpu_->kv_store(a); });
  }
  void paged_attention(const kernels::PagedAttentionArgs& a) override {
    op([=, this] { cpu_->paged_attention(a); });
  }
  void moe_route(const kernels::RouterArgs& a) override {
    op([=, this] { cpu_->moe_route(a); });
  }
  void moe_ffn(const kernels::MoeFfnArgs& a) override {
    op([=, this] { cpu_->moe_ffn(a); });
  }

  bool replay(uint64_t key) override {
    auto it = graphs_.find(key);
    if (it == graphs_.end()) return false;
    ++replays;
    for (auto& f : it->second) f();
    return true;
  }
  bool begin_capture() override {
    capturing_ = true;
    recording_.clear();
    return true;
  }
  bool end_capture(uint64_t key) override {
    capturing_ = false;
    ++captures;
    graphs_[key] = std::move(recording_);
    for (auto& f : graphs_[key]) f();
    return true;
  }
  void clear_graphs() override { graphs_.clear(); }
  bool graphs_enabled() const override { return true; }

 private:
  void op(std::function<void()> f) {
    if (capturing_) {
      recording_.push_back(std::move(f));
    } else {
      f();
    }
  }
  std::unique_ptr<Backend> cpu_;
  bool capturing_ = false;
  std::vector<std::function<void()>> recording_;
  std::map<uint64_t, std::vector<std::function<void()>>> graphs_;
};

struct Runner {
  std::vector<uint8_t> bytes;
  std::unique_ptr<Backend> backend;
  std::unique_ptr<Model> model;
  std::unique_ptr<KvCache> kv;
  std::unique_ptr<ForwardExecutor> exec;
};

Runner make_runner(const TestModelOptions& o, std::unique_ptr<Backend> be) {
  Runner r;
  r.bytes = *build_test_model(o);
  r.backend = std::move(be);
  r.model = std::move(*Model::from_file(*gguf::File::parse(r.bytes, "m"), *r.backend));
  const ModelConfig& c = r.model->config();
  r.kv = std::move(
      *KvCache::create(*r.backend, {c.n_layer, c.n_kv_head, c.head_dim, 4, 256, DType::F32}));
  r.exec = std::make_unique<ForwardExecutor>(*r.model, *r.backend, *r.kv);
  return r;
}

TEST(StepGraphs, PaddedRecordedDecodeMatchesPlainCpu) {
  TestModelOptions o;
  o.family = Family::kQwen3Moe;
  o.n_layer = 2;
  o.seed = 11;
  auto rec = std::make_unique<RecordingBackend>(1);
  RecordingBackend* recp = rec.get();
  Runner g = make_runner(o, std::move(rec));
  Runner p = make_runner(o, make_cpu_backend(1));

  // Three sequences with prompts of different lengths (block size 4: tables of 2..4 blocks).
  const std::vector<std::vector<int32_t>> prompts = {{5, 6, 7}, {9, 10, 11, 12, 13, 14}, {20, 21}};
  std::vector<int32_t> seqs, next;
  for (Runner* r : {&g, &p}) {
    std::vector<int32_t> s;
    for (const auto& pr : prompts) {
      const int32_t id = r->kv->add_sequence();
      ASSERT_TRUE(r->kv->reserve(id, 40).ok());
      std::vector<int32_t> pos(pr.size()), sq(pr.size(), id);
      for (size_t i = 0; i < pr.size(); ++i) pos[i] = static_cast<int32_t>(i);
      ASSERT_TRUE(r->exec->run({pr, pos, sq, {}}).ok());  // prefill: not a decode step
      s.push_back(id);
    }
    seqs = s;
  }
  ASSERT_EQ(recp->captures, 0) << "a prefill step was recorded";

  const int64_t n_vocab = g.model->config().n_vocab;
  std::vector<int32_t> pos = {3, 6, 2};
  std::vector<int32_t> tok = {30, 31, 32};
  // Decode 12 steps of the three sequences (batch 3 -> bucket 4), then of two (bucket 2).
  for (int step = 0; step < 16; ++step) {
    const size_t n = step < 12 ? 3 : 2;
    std::span<const int32_t> t(tok.data(), n), ps(pos.data(), n), sq(seqs.data(), n);
    auto a = g.exec->run({t, ps, sq, {}});
    auto b = p.exec->run({t, ps, sq, {}});
    ASSERT_TRUE(a.ok()) << a.status().to_string();
    ASSERT_TRUE(b.ok()) << b.status().to_string();
    ASSERT_EQ(a->size(), n * n_vocab);
    ASSERT_EQ(b->size(), n * n_vocab);
    for (size_t i = 0; i < a->size(); ++i) {
      ASSERT_NEAR((*a)[i], (*b)[i], 1e-4f) << "step " << step << " value " << i;
    }
    for (size_t j = 0; j < n; ++j) {
      // Greedy next token from the plain run; both runs feed it back.
      const float* row = b->data() + j * n_vocab;
      tok[j] = static_cast<int32_t>(std::max_element(row, row + n_vocab) - row);
      ++pos[j];
    }
  }
  // Recorded once per (batch bucket, table-width bucket): far fewer captures than steps.
  EXPECT_GT(recp->replays, 0);
  EXPECT_LE(recp->captures, 6);
  EXPECT_EQ(recp->captures + recp->replays, 16);
}

}  // namespace
}  // namespace arc::testing
