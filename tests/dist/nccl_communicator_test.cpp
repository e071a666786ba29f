// NcclCommunicator on device memory (label gpu): the all-reduce and the uneven all-gather
// against sums and concatenations computed on the host. Runs as one process (an MPI singleton),
// or under mpirun -np N with one GPU per rank; skips with a message without a CUDA device.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "arc/communicator.h"
#include "arc/nccl_communicator.h"

namespace arc {
namespace {

MpiSession* g_session = nullptr;

class Nccl : public ::testing::Test {
 protected:
  void SetUp() override {
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0) {
      GTEST_SKIP() << "no CUDA device: the NCCL communicator is only compiled on this machine";
    }
#if !defined(ARC_CUDA_EMULATION)  // emulated: every rank (process) has its own device
    if (n < g_session->world_size()) GTEST_SKIP() << "fewer GPUs than ranks";
#endif
    auto mpi = MpiCommunicator::create(*g_session);
    ASSERT_TRUE(mpi.ok()) << mpi.status().to_string();
    mpi_ = std::move(*mpi);
    auto nccl = NcclCommunicator::create(*mpi_, mpi_->rank() % n);
    ASSERT_TRUE(nccl.ok()) << nccl.status().to_string();
    nccl_ = std::move(*nccl);
  }
  std::unique_ptr<MpiCommunicator> mpi_;
  std::unique_ptr<NcclCommunicator> nccl_;
};

TEST_F(Nccl, AllReduceSumsEveryRank) {
  const int n = 1000, ranks = nccl_->size(), me = nccl_->rank();
  std::vector<float> host(n);
  for (int i = 0; i < n; ++i) host[i] = static_cast<float>((me + 1) * 1000 + i);
  float* dev = nullptr;
  ASSERT_EQ(cudaMalloc(&dev, n * sizeof(float)), cudaSuccess);
  cudaMemcpy(dev, host.data(), n * sizeof(float), cudaMemcpyHostToDevice);
  ASSERT_TRUE(nccl_->all_reduce_sum(dev, n).ok());
  cudaMemcpy(host.data(), dev, n * sizeof(float), cudaMemcpyDeviceToHost);
  cudaFree(dev);
  for (int i = 0; i < n; ++i) {
    float want = 0;
    for (int r = 0; r < ranks; ++r) want += static_cast<float>((r + 1) * 1000 + i);
    ASSERT_EQ(host[i], want) << i;
  }
  EXPECT_EQ(nccl_->stats().all_reduce_bytes, n * sizeof(float));
}

TEST_F(Nccl, AllGatherUnevenCountsInRankOrder) {
  const int ranks = nccl_->size(), me = nccl_->rank();
  std::vector<int64_t> counts;
  int64_t total = 0;
  for (int r = 0; r < ranks; ++r) {
    counts.push_back(5 + r);  // uneven, like a vocabulary split
    total += 5 + r;
  }
  std::vector<float> mine(static_cast<size_t>(counts[me]));
  for (size_t i = 0; i < mine.size(); ++i) mine[i] = static_cast<float>(me * 100 + i);
  float *send = nullptr, *recv = nullptr;
  ASSERT_EQ(cudaMalloc(&send, mine.size() * sizeof(float)), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&recv, total * sizeof(float)), cudaSuccess);
  cudaMemcpy(send, mine.data(), mine.size() * sizeof(float), cudaMemcpyHostToDevice);
  ASSERT_TRUE(nccl_->all_gather(send, counts, recv).ok());
  std::vector<float> got(static_cast<size_t>(total));
  cudaMemcpy(got.data(), recv, total * sizeof(float), cudaMemcpyDeviceToHost);
  cudaFree(send);
  cudaFree(recv);
  size_t at = 0;
  for (int r = 0; r < ranks; ++r) {
    for (int64_t i = 0; i < counts[r]; ++i) ASSERT_EQ(got[at++], static_cast<float>(r * 100 + i));
  }
}

// Stream-ordered mode (the forward of a CUDA tensor-parallel rank): collectives only enqueue on
// the stream, between the copies that feed and read them, and settle() waits for all of it.
TEST(NcclOnStream, EnqueuesOnTheStreamAndSettles) {
  int n_dev = 0;
  if (cudaGetDeviceCount(&n_dev) != cudaSuccess || n_dev == 0) {
    GTEST_SKIP() << "no CUDA device: the NCCL communicator is only compiled on this machine";
  }
#if !defined(ARC_CUDA_EMULATION)  // emulated: every rank (process) has its own device
  if (n_dev < g_session->world_size()) GTEST_SKIP() << "fewer GPUs than ranks";
#endif
  auto mpi = MpiCommunicator::create(*g_session);
  ASSERT_TRUE(mpi.ok()) << mpi.status().to_string();
  const int device = (*mpi)->rank() % n_dev;
  ASSERT_EQ(cudaSetDevice(device), cudaSuccess);
  cudaStream_t stream = nullptr;
  ASSERT_EQ(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), cudaSuccess);
  {
    auto nccl = NcclCommunicator::create(**mpi, device, stream);
    ASSERT_TRUE(nccl.ok()) << nccl.status().to_string();
    (*nccl)->set_stream_ordered(true);
    EXPECT_TRUE((*nccl)->on_stream());
    const int n = 4096, ranks = (*nccl)->size(), me = (*nccl)->rank();
    float* pinned = nullptr;
    ASSERT_EQ(cudaMallocHost(&pinned, n * sizeof(float)), cudaSuccess);
    for (int i = 0; i < n; ++i) pinned[i] = static_cast<float>(me * 7 + i % 13);
    float* dev = nullptr;
    ASSERT_EQ(cudaMalloc(&dev, n * sizeof(float)), cudaSuccess);
    // Three steps: upload, all-reduce, download, all on the stream; nothing waited for before
    // settle().
    for (int step = 0; step < 3; ++step) {
      ASSERT_EQ(cudaMemcpyAsync(dev, pinned, n * sizeof(float), cudaMemcpyHostToDevice, stream),
                cudaSuccess);
      ASSERT_TRUE((*nccl)->all_reduce_sum(dev, n).ok());
      ASSERT_EQ(cudaMemcpyAsync(pinned, dev, n * sizeof(float), cudaMemcpyDeviceToHost, stream),
                cudaSuccess);
    }
    ASSERT_TRUE((*nccl)->settle().ok());
    // Each step summed the previous step's sums: x -> ranks * x, three times.
    for (int i = 0; i < n; ++i) {
      float x = 0;
      for (int r = 0; r < ranks; ++r) x += static_cast<float>(r * 7 + i % 13);
      const float want = x * static_cast<float>(ranks * ranks);
      ASSERT_EQ(pinned[i], want) << i;
    }
    EXPECT_EQ((*nccl)->stats().all_reduce_calls, 3u);
    EXPECT_EQ((*nccl)->stats().all_reduce_bytes, 3u * n * sizeof(float));
    EXPECT_GT((*nccl)->stats().all_reduce_seconds, 0.0) << "device time between the events";
    cudaFree(dev);
    cudaFreeHost(pinned);
  }
  cudaStreamDestroy(stream);
}

}  // namespace
}  // namespace arc

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  auto session = arc::MpiSession::init(&argc, &argv);
  if (!session.ok()) return 1;
  arc::g_session = session->get();
  int rc = RUN_ALL_TESTS();
  return rc;
}
