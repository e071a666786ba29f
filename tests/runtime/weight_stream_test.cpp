// The model loader's streaming path (what the CUDA backend gets for files on disk) checked on the
// CPU: a backend that implements WeightStreamer by reading the requested file ranges into its own
// memory must see every tensor's bytes at the right place, i.e. give the logits of the plain
// in-place load, with progress reaching the total.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "arc/backend_caps.h"
#include "arc/kernels/repack.h"
#include "model/test_util.h"

namespace arc::testing {
namespace {

// The CPU backend whose weights come only from stream_file_range() (map_weights is a failure).
class StreamingCpuBackend final : public Backend, public WeightStreamer {
 public:
  StreamingCpuBackend() : cpu_(make_cpu_backend(1)) {}
  ~StreamingCpuBackend() override {
    for (void* p : blocks_) std::free(p);
  }
  int ranges = 0;

  Result<const void*> stream_file_range(const std::string& path, uint64_t offset, uint64_t size,
                                        const LoadProgressFn& progress) override {
    ++ranges;
    std::ifstream f(path, std::ios::binary);
    if (!f) return not_found("cannot open " + path);
    // Poisoned around the range, so a tensor read from outside it shows in the logits.
    auto* p = static_cast<uint8_t*>(std::aligned_alloc(64, (size + 64 + 63) / 64 * 64 + 64));
    blocks_.push_back(p);
    std::memset(p, 0xFF, 64);
    f.seekg(static_cast<std::streamoff>(offset));
    const uint64_t half = size / 2;
    f.read(reinterpret_cast<char*>(p + 64), static_cast<std::streamsize>(half));
    if (progress) progress(half, size);
    f.read(reinterpret_cast<char*>(p + 64 + half), static_cast<std::streamsize>(size - half));
    if (!f) return data_loss("short read of " + path);
    if (progress) progress(size, size);
    return static_cast<const void*>(p + 64);
  }

  std::string_view name() const override { return "streaming-cpu"; }
  int num_threads() const override { return 1; }
  Result<std::unique_ptr<DeviceBuffer>> alloc(size_t b) override { return cpu_->alloc(b); }
  Result<const void*> map_weights(std::span<const uint8_t> host) override {
    ADD_FAILURE() << "a file on disk was mapped instead of streamed";
    return cpu_->map_weights(host);
  }
  void upload(void* d, const void* s, size_t b) override { cpu_->upload(d, s, b); }
  void download(void* d, const void* s, size_t b) override { cpu_->download(d, s, b); }
  Status sync() override { return cpu_->sync(); }
  void matmul(const kernels::MatmulArgs& a) override { cpu_->matmul(a); }
  void rms_norm(const float* x, const float* w, float* y, int64_t n, int64_t d,
                float eps) override {
    cpu_->rms_norm(x, w, y, n, d, eps);
  }
  void sum_squares(const float* x, float* ss, int64_t n, int64_t d) override {
    cpu_->sum_squares(x, ss, n, d);
  }
  void rms_norm_sumsq(const float* x, const float* w, const float* ss, float* y, int64_t n,
                      int64_t d, int64_t n_total, float eps) override {
    cpu_->rms_norm_sumsq(x, w, ss, y, n, d, n_total, eps);
  }
  void rope(const kernels::RopeArgs& a) override { cpu_->rope(a); }
  void add(const float* a, const float* b, float* y, int64_t n) override { cpu_->add(a, b, y, n); }
  void add_bias(float* x, const float* b, int64_t n, int64_t d) override {
    cpu_->add_bias(x, b, n, d);
  }
  void swiglu(const float* g, const float* u, float* y, int64_t n) override {
    cpu_->swiglu(g, u, y, n);
  }
  void add_sigmoid_gated(float* y, const float* s, const float* g, int64_t n, int64_t d) override {
    cpu_->add_sigmoid_gated(y, s, g, n, d);
  }
  void get_rows(DType t, const void* table, int64_t n_rows, int64_t d, const int32_t* ids,
                int64_t n_ids, float* out) override {
    cpu_->get_rows(t, table, n_rows, d, ids, n_ids, out);
  }
  void gather(const float* x, const int32_t* rows, int64_t n, int64_t d, float* out) override {
    cpu_->gather(x, rows, n, d, out);
  }
  void kv_store(const kernels::KvStoreArgs& a) override { cpu_->kv_store(a); }
  void paged_attention(const kernels::PagedAttentionArgs& a) override { cpu_->paged_attention(a); }
  void moe_route(const kernels::RouterArgs& a) override { cpu_->moe_route(a); }
  void moe_ffn(const kernels::MoeFfnArgs& a) override { cpu_->moe_ffn(a); }

 private:
  std::unique_ptr<Backend> cpu_;
  std::vector<void*> blocks_;
};

// The loader's progress reports: never going back, the last one kept.
struct LoadProgress {
  uint64_t done = 0, total = 0;
  ModelLoadOptions options() {
    ModelLoadOptions lo;
    lo.progress = [this](uint64_t d, uint64_t t) {
      EXPECT_GE(d, done);
      done = d;
      total = t;
      return true;
    };
    return lo;
  }
};

std::vector<float> prefill_logits(const Model& m, Backend& be) {
  const ModelConfig& c = m.config();
  auto kv = KvCache::create(be, {c.n_layer, c.n_kv_head, c.head_dim, 16, 8, DType::F32});
  EXPECT_TRUE(kv.ok());
  ForwardExecutor exec(m, be, **kv);
  const std::vector<int32_t> prompt = {1, 40, 41, 42, 43};
  const int32_t seq = (*kv)->add_sequence();
  EXPECT_TRUE((*kv)->reserve(seq, 5).ok());
  std::vector<int32_t> pos = {0, 1, 2, 3, 4}, seqs(5, seq), rows = {0, 1, 2, 3, 4};
  auto r = exec.run({prompt, pos, seqs, rows});
  EXPECT_TRUE(r.ok()) << r.status().to_string();
  return r.ok() ? *r : std::vector<float>{};
}

// Greedy decode of `steps` tokens after a 5-token prompt; each step's logits of that sequence.
// With `companion`, a second sequence (another prompt) runs in the same prefill and decode
// batches, after the first.
std::vector<std::vector<float>> decode_logits(const Model& m, Backend& be, int steps,
                                              bool companion) {
  const ModelConfig& c = m.config();
  auto kv = KvCache::create(be, {c.n_layer, c.n_kv_head, c.head_dim, 16, 16, DType::F16});
  EXPECT_TRUE(kv.ok());
  if (!kv.ok()) return {};
  ForwardExecutor exec(m, be, **kv);
  const int32_t a = (*kv)->add_sequence(), b = (*kv)->add_sequence();
  EXPECT_TRUE((*kv)->reserve(a, 5 + steps).ok());
  EXPECT_TRUE((*kv)->reserve(b, 5 + steps).ok());
  std::vector<int32_t> tokens = {1, 40, 41, 42, 43}, pos = {0, 1, 2, 3, 4}, seqs(5, a);
  if (companion) {
    tokens.insert(tokens.end(), {7, 8, 9, 10, 11});
    pos.insert(pos.end(), {0, 1, 2, 3, 4});
    seqs.insert(seqs.end(), 5, b);
  }
  std::vector<std::vector<float>> out;
  int32_t next_b = 12;
  for (int step = 0; step <= steps; ++step) {
    auto r = exec.run({tokens, pos, seqs, {}});  // the last token of each sequence
    EXPECT_TRUE(r.ok()) << r.status().to_string();
    if (!r.ok()) return out;
    const auto n_vocab = static_cast<size_t>(c.n_vocab);
    out.emplace_back(r->begin(), r->begin() + static_cast<std::ptrdiff_t>(n_vocab));
    const auto best = std::max_element(out.back().begin(), out.back().end());
    const int32_t p = 5 + step;
    tokens = {static_cast<int32_t>(best - out.back().begin())};
    pos = {p};
    seqs = {a};
    if (companion) {
      tokens.push_back(next_b++ % static_cast<int32_t>(c.n_vocab));
      pos.push_back(p);
      seqs.push_back(b);
    }
  }
  return out;
}

TEST(WeightStream, StreamedLoadMatchesMappedLoad) {
  for (const char* type : {"F32", "Q4_K_M"}) {
    TestModelOptions o;
    o.family = Family::kQwen2Moe;  // shared expert, biases: every kind of tensor
    o.type = type;
    o.n_embd = 256;
    o.n_ff_exp = o.n_ff_shexp = o.n_ff = 256;
    o.tied_embeddings = false;
    const std::string path = (std::filesystem::temp_directory_path() /
                              ("arc_stream_" + std::to_string(getpid()) + "_" + type + ".gguf"))
                                 .string();
    ASSERT_TRUE(write_test_model(o, path).ok());

    auto cpu = make_cpu_backend(1, CpuWeights::kInPlace);
    auto mapped = Model::load(path, *cpu);
    ASSERT_TRUE(mapped.ok()) << mapped.status().to_string();

    StreamingCpuBackend sbe;
    LoadProgress progress;
    auto streamed = Model::load(path, sbe, progress.options());
    std::filesystem::remove(path);
    ASSERT_TRUE(streamed.ok()) << streamed.status().to_string();
    EXPECT_EQ(sbe.ranges, 1);  // one file: one range
    EXPECT_EQ(progress.done, progress.total);
    EXPECT_GE(progress.total, (*streamed)->weight_bytes());
    EXPECT_EQ((*streamed)->weight_bytes(), (*mapped)->weight_bytes());

    const std::vector<float> want = prefill_logits(**mapped, *cpu);
    const std::vector<float> got = prefill_logits(**streamed, sbe);
    ASSERT_EQ(got.size(), want.size());
    EXPECT_EQ(got, want) << type << ": same bytes, same kernels, so identical logits";
  }
}

// The CPU backend's default load: every weight copied out of the file (no pointer into the
// mapping), progress up to the total, and the logits of the in-place load bit for bit.
TEST(WeightStream, CpuBackendCopiesWeightsOutOfTheFile) {
  TestModelOptions o;
  o.family = Family::kQwen3Moe;
  o.type = "Q4_K_M";
  o.n_embd = 256;
  o.n_ff_exp = o.n_ff = 256;
  const std::string path =
      (std::filesystem::temp_directory_path() / ("arc_copy_" + std::to_string(getpid()) + ".gguf"))
          .string();
  ASSERT_TRUE(write_test_model(o, path).ok());
  auto in_place_be = make_cpu_backend(1, CpuWeights::kInPlace);
  auto in_place = Model::load(path, *in_place_be);
  ASSERT_TRUE(in_place.ok()) << in_place.status().to_string();

  auto copy_be = make_cpu_backend(1);
  ASSERT_NE(dynamic_cast<WeightStreamer*>(copy_be.get()), nullptr);
  LoadProgress progress;
  auto copied = Model::load(path, *copy_be, progress.options());
  std::filesystem::remove(path);
  ASSERT_TRUE(copied.ok()) << copied.status().to_string();
  EXPECT_GT(progress.total, 0u);
  EXPECT_EQ(progress.done, progress.total);

  // Whether p points into the file mapping of model m.
  auto in_mapping = [](const Model& m, const void* p) {
    const MappedFile* map = m.file().mapping(0);
    const auto* b = static_cast<const uint8_t*>(p);
    return map != nullptr && b >= map->data() && b < map->data() + map->size();
  };
  const Weight& gate = (*copied)->layer(0, TensorRole::kFfnGateExps);
  ASSERT_TRUE(gate.present());
  EXPECT_FALSE(in_mapping(**copied, gate.data));
  EXPECT_FALSE(in_mapping(**copied, (*copied)->global(TensorRole::kTokEmbd).data));
  EXPECT_TRUE(in_mapping(**in_place, (*in_place)->layer(0, TensorRole::kFfnGateExps).data));

  // Where this CPU has the interleaved Q4_K kernel, the Q4_K matrices were rearranged in the
  // copy (arc/kernels/repack.h): the same bytes, which rearrange back to the file's.
  const Weight& in_gate = (*in_place)->layer(0, TensorRole::kFfnGateExps);
  ASSERT_EQ(in_gate.type, DType::Q4_K);
  const int64_t gate_rows = gate.shape[1] * gate.shape[2];
  const bool rearranged =
      kernels::repacked_type(DType::Q4_K, gate.shape[1], gate.shape[0]).has_value();
  EXPECT_EQ(gate.type, rearranged ? DType::Q4_K_R16 : DType::Q4_K);
  std::vector<uint8_t> back(static_cast<const uint8_t*>(gate.data),
                            static_cast<const uint8_t*>(gate.data) + gate.n_bytes);
  if (rearranged) {
    ASSERT_TRUE(
        kernels::repack_rows(DType::Q4_K_R16, DType::Q4_K, back.data(), gate_rows, gate.shape[0]));
  }
  EXPECT_EQ(0, std::memcmp(back.data(), in_gate.data, back.size()));
  EXPECT_EQ((*copied)->global(TensorRole::kTokEmbd).type,
            (*in_place)->global(TensorRole::kTokEmbd).type);  // row lookups keep rows

  const std::vector<float> want = prefill_logits(**in_place, *in_place_be);
  const std::vector<float> got = prefill_logits(**copied, *copy_be);
  ASSERT_FALSE(want.empty());
  if (!rearranged) {
    EXPECT_EQ(got, want);  // same bytes, same kernels
    return;
  }
  // Rearranged: the same products summed in another order, so float rounding apart.
  ASSERT_EQ(got.size(), want.size());
  double ss = 0;
  for (float v : want) ss += static_cast<double>(v) * v;
  const double tol = 1e-4 * std::sqrt(ss / static_cast<double>(want.size()));
  for (size_t i = 0; i < want.size(); ++i) ASSERT_NEAR(got[i], want[i], tol) << "logit " << i;
}

// A load whose progress callback says stop ends with kCancelled (the engine's "cancel load"),
// and a later load on a fresh backend is unaffected.
TEST(WeightStream, LoadStopsWhenProgressSaysSo) {
  TestModelOptions o;
  o.family = Family::kQwen3Moe;
  o.type = "Q8_0";
  o.n_embd = 256;
  o.n_ff_exp = o.n_ff = 256;
  const std::string path = (std::filesystem::temp_directory_path() /
                            ("arc_cancel_" + std::to_string(getpid()) + ".gguf"))
                               .string();
  ASSERT_TRUE(write_test_model(o, path).ok());
  auto be = make_cpu_backend(1);
  ModelLoadOptions lo;
  int calls = 0;
  lo.progress = [&](uint64_t, uint64_t) {
    ++calls;
    return false;  // stop at the first chunk
  };
  auto stopped = Model::load(path, *be, lo);
  ASSERT_FALSE(stopped.ok());
  EXPECT_EQ(stopped.status().code(), StatusCode::kCancelled) << stopped.status().to_string();
  EXPECT_EQ(calls, 1);
  auto again_be = make_cpu_backend(1);
  auto again = Model::load(path, *again_be);
  std::filesystem::remove(path);
  EXPECT_TRUE(again.ok()) << again.status().to_string();
}

// Decode on weights rearranged at load (arc/kernels/repack.h: Q4_K, Q6_K and Q8_0 in groups of
// 16 rows): each step's logits near those of the row-major in-place load, and the same bits for
// any thread count and for a sequence decoded alone or beside another.
TEST(WeightStream, DecodeOnRearrangedWeights) {
  if (!kernels::repacked_type(DType::Q4_K, 64, 256)) {
    GTEST_SKIP() << "this CPU has no interleaved kernels (AVX-512 VNNI): nothing is rearranged";
  }
  for (const char* type : {"Q4_K_M", "Q8_0"}) {
    SCOPED_TRACE(type);
    TestModelOptions o;
    o.family = Family::kQwen3Moe;
    o.type = type;
    o.n_embd = 256;
    o.n_ff_exp = o.n_ff = 256;
    const std::string path = (std::filesystem::temp_directory_path() /
                              ("arc_r16_" + std::to_string(getpid()) + "_" + type + ".gguf"))
                                 .string();
    ASSERT_TRUE(write_test_model(o, path).ok());
    auto in_place_be = make_cpu_backend(1, CpuWeights::kInPlace);
    auto one_be = make_cpu_backend(1);
    auto two_be = make_cpu_backend(2);
    auto in_place = Model::load(path, *in_place_be);
    auto one = Model::load(path, *one_be);
    auto two = Model::load(path, *two_be);
    std::filesystem::remove(path);
    ASSERT_TRUE(in_place.ok() && one.ok() && two.ok());
    ASSERT_TRUE(dtype_is_internal((*one)->layer(0, TensorRole::kFfnUpExps).type));
    ASSERT_TRUE(dtype_is_internal((*one)->layer(0, TensorRole::kAttnQ).type));
    if (std::string_view(type) == "Q4_K_M") {
      // The mix keeps Q6_K for the last layer's attn_v and expert down projections: the
      // Q6_K_R16 kernel runs too.
      const int64_t last = (*one)->config().n_layer - 1;
      ASSERT_EQ((*in_place)->layer(last, TensorRole::kFfnDownExps).type, DType::Q6_K);
      ASSERT_EQ((*one)->layer(last, TensorRole::kFfnDownExps).type, DType::Q6_K_R16);
      ASSERT_EQ((*one)->layer(last, TensorRole::kAttnV).type, DType::Q6_K_R16);
    }

    constexpr int kSteps = 6;
    const auto want = decode_logits(**in_place, *in_place_be, kSteps, false);
    const auto got = decode_logits(**one, *one_be, kSteps, false);
    ASSERT_EQ(got.size(), want.size());
    for (size_t s = 0; s < want.size(); ++s) {
      double ss = 0;
      for (float v : want[s]) ss += static_cast<double>(v) * v;
      const double tol = 1e-3 * std::sqrt(ss / static_cast<double>(want[s].size()));
      for (size_t i = 0; i < want[s].size(); ++i) {
        ASSERT_NEAR(got[s][i], want[s][i], tol) << "step " << s << " logit " << i;
      }
    }
    EXPECT_EQ(decode_logits(**two, *two_be, kSteps, false), got) << "2 threads";
    EXPECT_EQ(decode_logits(**one, *one_be, kSteps, true), got) << "beside another sequence";
  }
}

}  // namespace
}  // namespace arc::testing
