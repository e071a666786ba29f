// Loading only a rank's shard from the file (arc/shard_load.h), under mpirun -np 2, on the CPU:
// the streamed path GPUs take (WeightStreamer::stream_file_rows, each tensor's part read from the
// file) is run through a host-memory streamer, and the sharded forward is compared with the whole
// model on one rank (the oracle: the unchanged single-rank forward). Per-rank byte counts are
// checked against sharding the mapped model (shard_model, separate code).
#include <fcntl.h>
#include <unistd.h>

#include <deque>

#include "arc/backend_caps.h"
#include "dist/tp_load_util.h"

namespace arc {
namespace {

using testing::ModelCase;

MpiCommunicator* g_comm = nullptr;  // set by main for the test's lifetime

// The CPU backend with weights streamed into host buffers of its own: the same calls the CUDA
// backend gets, read with one pread per row part (independent of the CUDA staging code).
class HostStreamer final : public Backend, public WeightStreamer {
 public:
  HostStreamer() : cpu_(make_cpu_backend(1)) {}
  std::string_view name() const override { return "host-streamer"; }
  int num_threads() const override { return cpu_->num_threads(); }
  Result<std::unique_ptr<DeviceBuffer>> alloc(size_t n) override { return cpu_->alloc(n); }
  Result<const void*> map_weights(std::span<const uint8_t> h) override {
    return cpu_->map_weights(h);
  }
  void upload(void* d, const void* s, size_t n) override { cpu_->upload(d, s, n); }
  void download(void* d, const void* s, size_t n) override { cpu_->download(d, s, n); }
  Status sync() override { return cpu_->sync(); }
  void matmul(const kernels::MatmulArgs& a) override { cpu_->matmul(a); }
  void matmul_multi(std::span<const kernels::MatmulArgs> a) override { cpu_->matmul_multi(a); }
  void matmul_batch(std::span<const kernels::MatmulArgs> a) override { cpu_->matmul_batch(a); }
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

  Result<const void*> stream_file_range(const std::string& path, uint64_t offset, uint64_t size,
                                        const LoadProgressFn& progress) override {
    return stream_file_rows(path, offset, 1, size, 0, size, progress);
  }
  Result<const void*> stream_file_rows(const std::string& path, uint64_t offset, uint64_t n_rows,
                                       uint64_t stride, uint64_t take_offset, uint64_t take_bytes,
                                       const LoadProgressFn&) override {
    if (take_offset + take_bytes > stride) return invalid_argument("part outside the row");
    const int fd = open(path.c_str(), O_RDONLY);
    if (fd < 0) return not_found(path);
    std::vector<uint8_t>& out = blocks_.emplace_back(n_rows * take_bytes + 1);
    for (uint64_t r = 0; r < n_rows; ++r) {
      const ssize_t n = pread(fd, out.data() + r * take_bytes, take_bytes,
                              static_cast<off_t>(offset + r * stride + take_offset));
      if (n != static_cast<ssize_t>(take_bytes)) {
        close(fd);
        return data_loss("short read");
      }
    }
    close(fd);
    streamed_bytes += n_rows * take_bytes;
    return static_cast<const void*>(out.data());
  }

  uint64_t streamed_bytes = 0;

 private:
  std::unique_ptr<Backend> cpu_;
  std::deque<std::vector<uint8_t>> blocks_;
};

// tiny_model's cases with feed-forward widths that split over two ranks on 32-value blocks
// (the K-quant cases' 256-value rows do not: the plan refuses them at two ranks).
TestModelOptions splittable(const ModelCase& c) {
  TestModelOptions o = testing::tiny_model(c);
  o.n_ff = 128;
  o.n_ff_exp = 64;
  o.n_ff_shexp = 64;
  return o;
}

class StreamedShard : public ::testing::TestWithParam<ModelCase> {};

TEST_P(StreamedShard, MatchesTheWholeModel) {
  Communicator& comm = *g_comm;
  if (comm.size() != 2)
    GTEST_SKIP() << "run under mpirun -np 2 (this job has " << comm.size() << ")";
  const ModelCase c = GetParam();
  const TestModelOptions o = splittable(c);
  const bool exact = std::string(c.type) == "F32";
  tptest::Decode ref;
  int64_t n_vocab = 0;
  if (comm.rank() == 0) {
    ref = tptest::whole_model_decode(o, &n_vocab);
    ASSERT_TRUE(ref.status.ok()) << ref.status.to_string();
  }
  tptest::ModelFile file(o, c.name);
  ASSERT_TRUE(file.status.ok()) << file.status.to_string();

  // Bytes: what the streamer read and what the model holds equal the plan's count, which equals
  // the mapped model sharded in place (shard_model).
  auto mapped_file = gguf::File::open(file.path);
  ASSERT_TRUE(mapped_file.ok());
  auto plan = plan_for_file(*mapped_file, comm.size(), comm.rank());
  ASSERT_TRUE(plan.ok()) << plan.status().to_string();
  const uint64_t planned = shard_weight_bytes(*mapped_file, *plan);
  auto cpu = make_cpu_backend(1);
  auto whole = Model::from_file(std::move(*mapped_file), *cpu);
  ASSERT_TRUE(whole.ok());
  const uint64_t whole_bytes = (*whole)->weight_bytes();
  auto in_place = shard_model(**whole, *cpu, *plan);
  ASSERT_TRUE(in_place.ok());
  EXPECT_EQ(planned, *in_place);

  HostStreamer be;
  auto f = gguf::File::open(file.path);
  ASSERT_TRUE(f.ok());
  auto model = load_model_shard(std::move(*f), be, *plan);
  ASSERT_TRUE(model.ok()) << model.status().to_string();
  EXPECT_EQ((*model)->weight_bytes(), planned);
  EXPECT_LT(be.streamed_bytes, whole_bytes) << "a rank read more than its shard";
  EXPECT_EQ((*model)->config().n_head, plan->local.n_head);
  tptest::decode_and_compare(comm, comm, **model, be, *plan, ref, n_vocab, exact ? 1e-3f : 5e-3f,
                             std::string(c.name) + " streamed TP=2");
  // The whole model loaded by the CPU backend (which rearranges Q8_0 matrices into 16-row groups
  // where this CPU has the kernels, arc/kernels/repack.h) and sharded afterwards: shard_model
  // splits the interleaved matrices.
  tptest::decode_and_compare(comm, comm, **whole, *cpu, *plan, ref, n_vocab, exact ? 1e-3f : 5e-3f,
                             std::string(c.name) + " sharded after load");
}

INSTANTIATE_TEST_SUITE_P(Families, StreamedShard,
                         ::testing::Values(ModelCase{"qwen3moe_f32", Family::kQwen3Moe, 8, "F32"},
                                           ModelCase{"qwen3moe_q8", Family::kQwen3Moe, 8, "Q8_0"},
                                           ModelCase{"qwen2moe_f32", Family::kQwen2Moe, 4, "F32"},
                                           ModelCase{"qwen2moe_q8", Family::kQwen2Moe, 4, "Q8_0"},
                                           ModelCase{"llama_f32", Family::kLlama, 0, "F32"},
                                           ModelCase{"llama_q8", Family::kLlama, 0, "Q8_0"},
                                           ModelCase{"mixtral_f32", Family::kLlama, 4, "F32"},
                                           ModelCase{"qwen3_f32", Family::kQwen3, 0, "F32"},
                                           ModelCase{"qwen3_q8", Family::kQwen3, 0, "Q8_0"}),
                         [](const auto& info) { return std::string(info.param.name); });

// The forward's path for collectives on the backend's stream (NCCL on a GPU): no backend sync
// before an all-reduce, the logits all-gathered in backend memory and downloaded, settle() once
// per step. On the CPU backend ops complete as they are enqueued, so a communicator that claims
// on_stream() and runs MPI at once computes what NCCL would on the stream.
class OnStreamMpi final : public Communicator {
 public:
  explicit OnStreamMpi(Communicator& mpi) : mpi_(mpi) {}
  int rank() const override { return mpi_.rank(); }
  int size() const override { return mpi_.size(); }
  Status all_reduce_sum(float* data, int64_t n) override {
    ++pending;
    return mpi_.all_reduce_sum(data, n);
  }
  Status all_gather(const float* send, std::span<const int64_t> counts, float* recv) override {
    ++pending;
    return mpi_.all_gather(send, counts, recv);
  }
  Status broadcast(void* d, int64_t b, int root) override { return mpi_.broadcast(d, b, root); }
  Status barrier() override { return mpi_.barrier(); }
  bool on_stream() const override { return true; }
  Status settle() override {
    ++settles;
    settled += pending;
    pending = 0;
    return ok_status();
  }
  int64_t pending = 0, settled = 0, settles = 0;

 private:
  Communicator& mpi_;
};

TEST(OnStreamCollectives, ForwardMatchesTheWholeModelAndSettlesEveryStep) {
  Communicator& comm = *g_comm;
  if (comm.size() != 2) GTEST_SKIP() << "run under mpirun -np 2";
  const ModelCase c{"qwen3moe_f32", Family::kQwen3Moe, 8, "F32"};
  const TestModelOptions o = splittable(c);
  tptest::Decode ref;
  int64_t n_vocab = 0;
  if (comm.rank() == 0) {
    ref = tptest::whole_model_decode(o, &n_vocab);
    ASSERT_TRUE(ref.status.ok()) << ref.status.to_string();
  }
  tptest::ModelFile file(o, "onstream");
  ASSERT_TRUE(file.status.ok());
  auto f = gguf::File::open(file.path);
  ASSERT_TRUE(f.ok());
  auto plan = plan_for_file(*f, comm.size(), comm.rank());
  ASSERT_TRUE(plan.ok());
  auto cpu = make_cpu_backend(1);
  auto model = load_model_shard(std::move(*f), *cpu, *plan);
  ASSERT_TRUE(model.ok()) << model.status().to_string();
  OnStreamMpi tensor(comm);
  tptest::decode_and_compare(comm, tensor, **model, *cpu, *plan, ref, n_vocab, 1e-3f,
                             "qwen3moe_f32 on-stream collectives");
  // 6 steps: 2 all-reduces per layer and one all-gather each, all settled.
  const int64_t per_step = 2 * o.n_layer + 1;
  EXPECT_EQ(tensor.settles, 6);
  EXPECT_EQ(tensor.settled, 6 * per_step);
  EXPECT_EQ(tensor.pending, 0);
}

}  // namespace
}  // namespace arc

int main(int argc, char** argv) {
  return arc::tptest::run_all_ranks(argc, argv, &arc::g_comm);
}
