// Tensor parallelism on the CUDA backend, under mpirun -np 2: each rank loads only its shard into
// device buffers and the sharded forward is compared with the whole model on one rank's CPU
// backend (the oracle), greedy tokens and logits, for tiny models of every family.
//   NcclTp2: the collectives through NCCL on the backend's stream (what serve/run/bench use).
//     NCCL refuses two ranks on one GPU, so this needs two devices; it skips with a message
//     otherwise (tests/gpu/run-suite.sh then leaves it out on one-GPU machines).
//   StagedTp2: both ranks may share one device; the collectives go through host memory and MPI
//     (download, MPI_Allreduce, upload), so the device shard loading and the sharded CUDA forward
//     are checked on a one-GPU machine too.
// Label gpu; skips with a message where there is no CUDA device.
#include "arc/backend_factory.h"
#include "arc/tensor_comm.h"
#include "dist/tp_load_util.h"

namespace arc {
namespace {

using testing::ModelCase;

MpiCommunicator* g_comm = nullptr;  // set by main for the test's lifetime

// Device tensors through host memory: the backend's own download/upload around the control
// communicator's MPI all-reduce. Host-visible semantics (on_stream() false): the forward syncs
// the backend before each all-reduce, and gives all_gather host memory.
class StagedComm final : public Communicator {
 public:
  StagedComm(Communicator& control, Backend& backend) : control_(control), be_(backend) {}
  int rank() const override { return control_.rank(); }
  int size() const override { return control_.size(); }
  Status all_reduce_sum(float* data, int64_t n) override {
    host_.resize(static_cast<size_t>(n));
    be_.download(host_.data(), data, sizeof(float) * host_.size());
    ARC_RETURN_IF_ERROR(be_.sync());
    ARC_RETURN_IF_ERROR(control_.all_reduce_sum(host_.data(), n));
    be_.upload(data, host_.data(), sizeof(float) * host_.size());
    return be_.sync();
  }
  Status all_gather(const float* send, std::span<const int64_t> counts, float* recv) override {
    return control_.all_gather(send, counts, recv);
  }
  Status broadcast(void* d, int64_t b, int root) override { return control_.broadcast(d, b, root); }
  Status barrier() override { return control_.barrier(); }

 private:
  Communicator& control_;
  Backend& be_;
  std::vector<float> host_;
};

// tiny_model's cases with feed-forward widths that split over two ranks on 32-value blocks.
TestModelOptions splittable(const ModelCase& c) {
  TestModelOptions o = testing::tiny_model(c);
  o.n_ff = 128;
  o.n_ff_exp = 64;
  o.n_ff_shexp = 64;
  return o;
}

enum class Mode { kNccl, kStaged };

void run_case(const ModelCase& c, Mode mode) {
  Communicator& comm = *g_comm;
  const TestModelOptions o = splittable(c);
  const bool exact = std::string(c.type) == "F32";
  tptest::Decode ref;
  int64_t n_vocab = 0;
  if (comm.rank() == 0) {
    ref = tptest::whole_model_decode(o, &n_vocab);
    ASSERT_TRUE(ref.status.ok()) << ref.status.to_string();
  }
  tptest::ModelFile file(o, std::string("cuda_") + c.name);
  ASSERT_TRUE(file.status.ok()) << file.status.to_string();
  const int device = comm.rank() % cuda_device_count();
  auto be = make_cuda_backend(device, /*graphs=*/true);
  ASSERT_TRUE(be.ok()) << be.status().to_string();
  auto f = gguf::File::open(file.path);
  ASSERT_TRUE(f.ok());
  auto plan = plan_for_file(*f, comm.size(), comm.rank());
  ASSERT_TRUE(plan.ok()) << plan.status().to_string();
  const uint64_t planned = shard_weight_bytes(*f, *plan);
  auto model = load_model_shard(std::move(*f), **be, *plan);
  ASSERT_TRUE(model.ok()) << model.status().to_string();
  EXPECT_EQ((*model)->weight_bytes(), planned);
  std::unique_ptr<Communicator> tensor;
  if (mode == Mode::kNccl) {
    auto t = make_tensor_communicator(comm, **be);
    ASSERT_TRUE(t.ok()) << t.status().to_string();
    ASSERT_NE(*t, nullptr);
    EXPECT_TRUE((*t)->on_stream());
    tensor = std::move(*t);
  } else {
    tensor = std::make_unique<StagedComm>(comm, **be);
  }
  const std::string what =
      std::string(c.name) + (mode == Mode::kNccl ? " CUDA+NCCL TP=2" : " CUDA staged TP=2");
  // Device kernels round differently from the CPU's: cuda_backend_test's tolerances, relative to
  // the largest logit (F32: rounding and summation order; Q8_0: activations quantized apart).
  float scale = 1;
  for (float v : ref.logits) scale = std::max(scale, std::fabs(v));
  tptest::decode_and_compare(comm, *tensor, **model, **be, *plan, ref, n_vocab,
                             (exact ? 2e-3f : 0.08f) * scale, what);
  if (mode == Mode::kNccl && comm.rank() == 0) {
    // Two all-reduces per layer per step went through NCCL, with their device time.
    EXPECT_GT(tensor->stats().all_reduce_calls, 0u);
    EXPECT_GT(tensor->stats().all_reduce_seconds, 0.0);
  }
}

const auto kCases = ::testing::Values(ModelCase{"qwen3moe_f32", Family::kQwen3Moe, 8, "F32"},
                                      ModelCase{"qwen3moe_q8", Family::kQwen3Moe, 8, "Q8_0"},
                                      ModelCase{"qwen2moe_f32", Family::kQwen2Moe, 4, "F32"},
                                      ModelCase{"qwen2moe_q8", Family::kQwen2Moe, 4, "Q8_0"},
                                      ModelCase{"llama_f32", Family::kLlama, 0, "F32"},
                                      ModelCase{"llama_q8", Family::kLlama, 0, "Q8_0"},
                                      ModelCase{"mixtral_f32", Family::kLlama, 4, "F32"},
                                      ModelCase{"qwen3_f32", Family::kQwen3, 0, "F32"},
                                      ModelCase{"qwen3_q8", Family::kQwen3, 0, "Q8_0"},
                                      ModelCase{"glm4moe_f32", Family::kGlm4Moe, 8, "F32"},
                                      ModelCase{"minimax_m2_f32", Family::kMiniMaxM2, 8, "F32"});

// Every rank takes the same skip decision (one machine).
#define ARC_TP_CUDA_OR_SKIP(min_devices)                                                    \
  do {                                                                                      \
    if (g_comm->size() != 2) {                                                              \
      GTEST_SKIP() << "run under mpirun -np 2 (this job has " << g_comm->size() << ")";     \
    }                                                                                       \
    if (!cuda_backend_built()) GTEST_SKIP() << "this build has no CUDA backend";            \
    /* Under the CUDA emulator every rank (process) has its own emulated device. */         \
    const int n_dev = cuda_backend_emulated() ? g_comm->size() : cuda_device_count();       \
    if (n_dev < (min_devices)) {                                                            \
      GTEST_SKIP() << n_dev << " CUDA device(s) visible; this test needs " << (min_devices) \
                   << ((min_devices) > 1 ? " (NCCL refuses two ranks on one GPU)" : "");    \
    }                                                                                       \
  } while (0)

class NcclTp2 : public ::testing::TestWithParam<ModelCase> {};
TEST_P(NcclTp2, MatchesCpuTp1) {
  ARC_TP_CUDA_OR_SKIP(2);
  run_case(GetParam(), Mode::kNccl);
}
INSTANTIATE_TEST_SUITE_P(Families, NcclTp2, kCases,
                         [](const auto& info) { return std::string(info.param.name); });

class StagedTp2 : public ::testing::TestWithParam<ModelCase> {};
TEST_P(StagedTp2, MatchesCpuTp1) {
  ARC_TP_CUDA_OR_SKIP(1);
  run_case(GetParam(), Mode::kStaged);
}
INSTANTIATE_TEST_SUITE_P(Families, StagedTp2, kCases,
                         [](const auto& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace arc

int main(int argc, char** argv) {
  return arc::tptest::run_all_ranks(argc, argv, &arc::g_comm);
}
