// Kernel micro-benchmarks: matrix-vector products (decode) report GB/s of weight bytes read and
// that rate as a % of the machine's memory read bandwidth, measured by this binary with the same
// thread pool (streaming sums): %bw against the startup baseline (1 GiB), %bw_paired against
// sums taken just before and after the benchmark itself. Matrix-matrix products
// (prefill) report GFLOP/s. Weights are several times larger than any cache: each iteration reads
// the next of several copies, so every byte comes from DRAM (except MatvecL2*, cache-resident on
// purpose to show the kernels' compute rate).
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <numeric>
#include <random>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "arc/host_memory.h"
#include "arc/kernels/candidates.h"
#include "arc/kernels/cpu_dispatch.h"
#include "arc/kernels/matmul.h"
#include "arc/kernels/moe.h"
#include "arc/kernels/quant.h"
#include "arc/kernels/repack.h"
#include "arc/thread_pool.h"

namespace {

using arc::DType;
using arc::kernels::MatmulArgs;
namespace cpu = arc::kernels::cpu;

int& thread_count() {
  static int n = 0;  // --arc_threads=N; 0: one per online CPU
  return n;
}

arc::ThreadPool& pool() {
  static arc::ThreadPool p(thread_count());
  return p;
}

// CPU time of the calling thread. With one thread all work runs inline, so bytes over this time
// is the rate the code sustains while it runs, whatever else shares the machine.
double thread_cpu_seconds() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

struct Bandwidth {
  double wall_gbs = 0;  // bytes / wall time
  double cpu_gbs = 0;   // bytes / calling-thread CPU time (meaningful with one thread)
};

// `bytes` of zeroed host memory on huge pages, as the CPU backend's weights are
// (arc/host_memory.h); a benchmark cannot run without it.
arc::HostMemory host_bytes(size_t bytes) {
  auto m = arc::HostMemory::allocate(bytes);
  if (!m.ok()) {
    std::fprintf(stderr, "bench_kernels: %s\n", m.status().to_string().c_str());
    std::exit(1);
  }
  return std::move(*m);
}

// Read bandwidth: the median of `reps` parallel streaming sums over the buffer (on huge pages).
Bandwidth measure_read_bandwidth(std::span<const uint64_t> buf, int reps) {
  const size_t n = buf.size();
  std::vector<double> rates, cpu_rates;
  uint64_t sink = 0;
  for (int rep = 0; rep < reps; ++rep) {
    const int64_t chunks = 256;
    std::vector<uint64_t> partial(chunks);
    const auto t0 = std::chrono::steady_clock::now();
    const double c0 = thread_cpu_seconds();
    arc::kernels::parallel_for(&pool(), chunks, 1, [&](int64_t c0, int64_t c1) {
      for (int64_t c = c0; c < c1; ++c) {
        const uint64_t* p = buf.data() + c * (n / chunks);
        uint64_t s[8] = {};
        for (size_t i = 0; i < n / chunks; i += 8) {
          for (int k = 0; k < 8; ++k) s[k] += p[i + k];
        }
        partial[c] = s[0] + s[1] + s[2] + s[3] + s[4] + s[5] + s[6] + s[7];
      }
    });
    const double sec = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    for (uint64_t v : partial) sink += v;
    const double csec = thread_cpu_seconds() - c0;
    rates.push_back(static_cast<double>(n * sizeof(uint64_t)) / sec / 1e9);
    cpu_rates.push_back(static_cast<double>(n * sizeof(uint64_t)) / csec / 1e9);
  }
  benchmark::DoNotOptimize(sink);
  std::sort(rates.begin(), rates.end());
  std::sort(cpu_rates.begin(), cpu_rates.end());
  return {rates[rates.size() / 2], cpu_rates[cpu_rates.size() / 2]};
}

// The streaming sums' buffer: 1 GiB on huge pages, filled once.
std::span<const uint64_t> bandwidth_buffer() {
  static const arc::HostMemory mem = [] {
    arc::HostMemory m = host_bytes(size_t{1} << 30);
    auto* data = reinterpret_cast<uint64_t*>(m.data());
    for (size_t i = 0; i < m.size() / sizeof(uint64_t); ++i) data[i] = i;
    return m;
  }();
  return {reinterpret_cast<const uint64_t*>(mem.data()), mem.size() / sizeof(uint64_t)};
}

// The startup baseline: the median of 5 sums.
Bandwidth measure_read_bandwidth() {
  return measure_read_bandwidth(bandwidth_buffer(), 5);
}

// The read bandwidth right now: the median of 3 sums (about 60 ms). Taken just before and just
// after each DRAM-bound matvec, so that benchmark's %bw_paired compares the kernel and the
// streaming sum under the same load from whatever else shares the machine (on a shared host the
// startup baseline can be minutes and a different neighbour away).
double paired_bandwidth_gbs() {
  return measure_read_bandwidth(bandwidth_buffer(), 3).wall_gbs;
}

Bandwidth& read_bandwidth() {
  static Bandwidth bw;
  return bw;
}
double read_bandwidth_gbs() {
  return read_bandwidth().wall_gbs;
}

// `copies` matrices [n_out, n_in] in t, at least min_total bytes together. 64 distinct quantized
// rows are tiled (quantizing hundreds of MB would dominate the run).
struct Weights {
  arc::HostMemory bytes;
  size_t matrix_bytes = 0;
  int copies = 1;
  DType type = DType::F32;  // t, or the layout the engine rearranges t into (arc/kernels/repack.h)
};
// A type given as an _R16 layout (Q4_K_R16, ...) is quantized as its file type and rearranged, as
// the CPU backend does at load (n_out a multiple of 16).
Weights make_weights(DType t, int64_t n_out, int64_t n_in, size_t min_total) {
  Weights w;
  w.type = t;
  t = arc::kernels::row_major_type(t);
  const size_t row = *arc::dtype_row_bytes(t, n_in);
  w.matrix_bytes = row * n_out;
  w.copies =
      static_cast<int>(std::max<size_t>(1, (min_total + w.matrix_bytes - 1) / w.matrix_bytes));
  w.bytes = host_bytes(w.matrix_bytes * w.copies);
  std::mt19937 rng(1);
  std::normal_distribution<float> nd(0, 1);
  std::vector<float> src(n_in);
  std::vector<uint8_t> rows(64 * row);
  for (int r = 0; r < 64; ++r) {
    for (auto& v : src) v = nd(rng);
    arc::kernels::quantize_row(t, src.data(), rows.data() + r * row, n_in);
  }
  for (size_t off = 0; off < w.bytes.size(); off += rows.size()) {
    std::memcpy(w.bytes.data() + off, rows.data(), std::min(rows.size(), w.bytes.size() - off));
  }
  if (w.type != t &&
      !arc::kernels::repack_rows(t, w.type, w.bytes.data(), n_out * w.copies, n_in)) {
    std::fprintf(stderr, "cannot rearrange %d rows of %d into %s\n", static_cast<int>(n_out),
                 static_cast<int>(n_in), std::string(arc::dtype_name(w.type)).c_str());
  }
  return w;
}

void run_matmul(benchmark::State& state, DType t, cpu::IsaLevel level, int64_t n_out, int64_t n_in,
                int64_t n_tokens, size_t min_total) {
  if (!cpu::isa_available(level)) {
    state.SkipWithError("instruction set not available on this CPU");
    return;
  }
  const Weights w = make_weights(t, n_out, n_in, min_total);
  std::vector<float> x(n_tokens * n_in), y(n_tokens * n_out);
  std::mt19937 rng(2);
  std::normal_distribution<float> nd(0, 1);
  for (auto& v : x) v = nd(rng);
  MatmulArgs a;
  a.w_type = w.type;
  a.n_out = n_out;
  a.n_in = n_in;
  a.x = x.data();
  a.n_tokens = n_tokens;
  a.y = y.data();
  int copy = 0;
  const bool from_dram = min_total > 0;  // % of the DRAM bandwidth only for DRAM-sized weights
  const bool paired = n_tokens == 1 && from_dram;
  const double bw_before = paired ? paired_bandwidth_gbs() : 0.0;
  const double c0 = thread_cpu_seconds();
  for (auto _ : state) {
    a.w = w.bytes.data() + static_cast<size_t>(copy) * w.matrix_bytes;
    copy = (copy + 1) % w.copies;
    if (!cpu::matmul_at(level, a, &pool())) state.SkipWithError("matmul failed");
    benchmark::DoNotOptimize(y.data());
  }
  const double cpu_sec = thread_cpu_seconds() - c0;
  const double bw_after = paired ? paired_bandwidth_gbs() : 0.0;
  const double iters = static_cast<double>(state.iterations());
  if (pool().num_threads() == 1 && n_tokens == 1) {
    state.counters["cpuGB/s"] = iters * w.matrix_bytes / cpu_sec / 1e9;
    if (from_dram) {
      state.counters["%bw_cpu"] =
          100 * iters * w.matrix_bytes / cpu_sec / 1e9 / read_bandwidth().cpu_gbs;
    }
  }
  state.SetBytesProcessed(static_cast<int64_t>(iters * w.matrix_bytes));
  state.counters["GFLOP/s"] =
      benchmark::Counter(iters * 2.0 * n_out * n_in * n_tokens / 1e9, benchmark::Counter::kIsRate);
  if (n_tokens == 1 && from_dram && read_bandwidth_gbs() > 0) {
    // % of read bandwidth: weight GB/s over the baseline, as a rate counter divided by it.
    state.counters["%bw"] = benchmark::Counter(
        iters * w.matrix_bytes / 1e9 / read_bandwidth_gbs() * 100, benchmark::Counter::kIsRate);
  }
  if (paired && bw_before + bw_after > 0) {
    state.counters["%bw_paired"] =
        benchmark::Counter(iters * w.matrix_bytes / 1e9 / ((bw_before + bw_after) / 2) * 100,
                           benchmark::Counter::kIsRate);
    state.counters["bw_paired_GB/s"] = (bw_before + bw_after) / 2;
  }
  state.SetLabel(std::string(cpu::isa_name(level)) + " " + std::to_string(w.matrix_bytes >> 20) +
                 " MiB x" + std::to_string(w.copies));
}

void BM_ReadBandwidth(benchmark::State& state) {
  for (auto _ : state) {
    const auto t0 = std::chrono::steady_clock::now();
    const Bandwidth bw = measure_read_bandwidth();
    state.SetIterationTime(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    state.counters["GB/s"] = bw.wall_gbs;
    if (pool().num_threads() == 1) state.counters["cpuGB/s"] = bw.cpu_gbs;
  }
}

// Sampling candidates on the host (the CPU backend's path after every decode step) over a
// Qwen3-sized vocabulary: k = 1 (greedy), k = 1024 with the tempered mass (temperature sampling
// without top_k), and with logprobs (the log-sum-exp pass) on top; ref:1 is the scalar
// reference the fast path replaced.
void BM_Candidates(benchmark::State& state) {
  const int64_t n_vocab = 151936;
  std::vector<float> logits(static_cast<size_t>(n_vocab));
  std::mt19937 rng(3);
  std::normal_distribution<float> nd(0, 3);
  for (auto& v : logits) v = nd(rng);
  arc::kernels::CandidateRow row;
  row.k = static_cast<int32_t>(state.range(0));
  row.flags = static_cast<uint32_t>(state.range(1));
  row.temperature = 0.7f;
  std::vector<int32_t> ids(static_cast<size_t>(row.k));
  std::vector<float> values(static_cast<size_t>(row.k));
  double stats[3];
  arc::kernels::TopCandidatesArgs a;
  a.logits = logits.data();
  a.n_rows = 1;
  a.n_vocab = n_vocab;
  a.rows = &row;
  a.k_stride = row.k;
  a.ids = ids.data();
  a.values = values.data();
  a.stats = stats;
  const bool ref = state.range(2) != 0;
  for (auto _ : state) {
    if (ref) {
      arc::kernels::top_candidates_ref(a);
    } else {
      arc::kernels::top_candidates(a);
    }
    benchmark::DoNotOptimize(ids.data());
  }
}

// MoE FFN decode (one token, k of n_expert experts) on the shapes of the 1 GB qwen3moe bench
// models (hidden 1024, 64 experts of FFN 512, 8 used; the gate/up and down formats of a Q4_K_M
// or a Q8_0 file): 16 layers of experts (0.9-1.6 GiB, far past the caches), a new layer and new
// random experts each iteration.
// GB/s counts the selected experts' bytes: what a decode step's MoE streams from memory.
void BM_MoeDecode(benchmark::State& state, DType gate_type, DType down_type) {
  constexpr int64_t kEmbd = 1024, kFf = 512, kExperts = 64, kUsed = 8, kLayers = 16;
  const size_t gate_bytes = *arc::dtype_row_bytes(gate_type, kEmbd) * kFf;
  const size_t down_bytes = *arc::dtype_row_bytes(down_type, kFf) * kEmbd;
  const Weights gate = make_weights(gate_type, kFf * kExperts * kLayers, kEmbd, 0);
  const Weights up = make_weights(gate_type, kFf * kExperts * kLayers, kEmbd, 0);
  const Weights down = make_weights(down_type, kEmbd * kExperts * kLayers, kFf, 0);
  std::mt19937 rng(4);
  std::normal_distribution<float> nd(0, 1);
  std::vector<float> x(kEmbd), y(kEmbd), weights(kUsed, 1.0f / kUsed);
  for (auto& v : x) v = nd(rng);
  std::vector<int32_t> ids(kUsed);
  arc::kernels::Workspace ws;
  arc::kernels::MoeFfnArgs a;
  a.x = x.data();
  a.n_tokens = 1;
  a.n_embd = kEmbd;
  a.n_ff = kFf;
  a.n_expert = kExperts;
  a.k = kUsed;
  a.ids = ids.data();
  a.weights = weights.data();
  a.gate_type = a.up_type = gate.type;
  a.down_type = down.type;
  a.y = y.data();
  int64_t layer = 0;
  for (auto _ : state) {
    std::vector<int32_t> all(kExperts);
    std::iota(all.begin(), all.end(), 0);
    std::shuffle(all.begin(), all.end(), rng);
    std::copy(all.begin(), all.begin() + kUsed, ids.begin());
    a.gate = gate.bytes.data() + layer * kExperts * gate_bytes;
    a.up = up.bytes.data() + layer * kExperts * gate_bytes;
    a.down = down.bytes.data() + layer * kExperts * down_bytes;
    layer = (layer + 1) % kLayers;
    if (!arc::kernels::moe_ffn(a, &pool(), &ws)) state.SkipWithError("moe_ffn failed");
    benchmark::DoNotOptimize(y.data());
  }
  const double bytes = static_cast<double>(kUsed * (2 * gate_bytes + down_bytes));
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * bytes));
  state.counters["%bw"] = benchmark::Counter(bytes / 1e9 / read_bandwidth_gbs() * 100,
                                             benchmark::Counter::kIsIterationInvariantRate);
}

constexpr int64_t kOut = 14336, kIn = 4096;  // an FFN up/gate projection of a 7-8B model
constexpr size_t kMinBytes = size_t{512} << 20;

void register_all() {
  benchmark::RegisterBenchmark("ReadBandwidth/1GiB", BM_ReadBandwidth)
      ->UseManualTime()
      ->Iterations(1)
      ->Unit(benchmark::kMillisecond);
  // The expert formats of a Q4_K_M file (Q6_K down in some layers) and of a Q8_0 file, in the
  // layouts the CPU backend gives them here (the *_R16 layouts where the CPU has the kernels).
  auto engine_layout = [](DType t) {
    return arc::kernels::repacked_type(t, 512, 1024).value_or(t);
  };
  std::vector<std::pair<DType, DType>> moe_types = {
      {DType::Q4_K, DType::Q6_K}, {DType::Q4_K, DType::Q4_K}, {DType::Q8_0, DType::Q8_0}};
  if (engine_layout(DType::Q4_K) != DType::Q4_K) {
    const DType q4 = engine_layout(DType::Q4_K), q6 = engine_layout(DType::Q6_K),
                q8 = engine_layout(DType::Q8_0);
    moe_types.insert(moe_types.end(), {{q4, q6}, {q4, q4}, {q8, q8}});
  }
  for (const auto& [gate_up, down] : moe_types) {
    const std::string name = "MoeDecode/gate_up:" + std::string(arc::dtype_name(gate_up)) +
                             "/down:" + std::string(arc::dtype_name(down));
    benchmark::RegisterBenchmark(name.c_str(), BM_MoeDecode, gate_up, down)
        ->Unit(benchmark::kMicrosecond)
        ->MinTime(1.0)
        ->UseRealTime();
  }
  benchmark::RegisterBenchmark("Candidates/vocab:151936", BM_Candidates)
      ->ArgsProduct({{1, 1024},
                     {0, arc::kernels::kCandidateMass,
                      arc::kernels::kCandidateMass | arc::kernels::kCandidateLse},
                     {0, 1}})
      ->ArgNames({"k", "flags", "ref"})
      ->Unit(benchmark::kMicrosecond);
  const cpu::IsaLevel best = cpu::best_isa();
  // The interleaved layouts the engine runs here, after their row-major file types.
  std::vector<DType> matvec_types = {DType::Q4_K, DType::Q5_K,  DType::Q6_K, DType::Q8_0,
                                     DType::Q4_0, DType::MXFP4, DType::F16,  DType::BF16};
  std::vector<DType> l2_types = {DType::Q4_K, DType::Q5_K, DType::Q6_K, DType::Q8_0, DType::Q4_0};
  for (DType t : {DType::Q4_K, DType::Q6_K, DType::Q8_0}) {
    if (engine_layout(t) != t) {
      matvec_types.push_back(engine_layout(t));
      l2_types.push_back(engine_layout(t));
    }
  }
  for (DType t : matvec_types) {
    const std::string name = "Matvec/" + std::string(arc::dtype_name(t));
    benchmark::RegisterBenchmark(
        name.c_str(),
        [t, best](benchmark::State& s) { run_matmul(s, t, best, kOut, kIn, 1, kMinBytes); })
        ->Unit(benchmark::kMillisecond)
        ->MinTime(1.0)
        ->UseRealTime();
  }
  // Decode-sized matrices (the 1 GB bench model's attention projections: QKV 1536 x 1024 and
  // output 1024 x 1024, in the file's and the engine's layout; its F32 router, 64 x 1024), still
  // streamed from DRAM: what a per-op start costs next to Matvec.
  std::vector<std::pair<DType, int64_t>> small = {{DType::F32, 64}};
  for (DType t : {DType::Q4_K, DType::Q8_0}) {
    std::vector<DType> layouts = {t};
    if (engine_layout(t) != t) layouts.push_back(engine_layout(t));
    for (DType l : layouts) {
      for (int64_t n_out : {int64_t{1536}, int64_t{1024}}) small.push_back({l, n_out});
    }
  }
  for (const auto& [t, n_out] : small) {
    const std::string name =
        "MatvecSmall/" + std::string(arc::dtype_name(t)) + "/" + std::to_string(n_out) + "x1024";
    benchmark::RegisterBenchmark(name.c_str(),
                                 [t, best, n_out](benchmark::State& s) {
                                   run_matmul(s, t, best, n_out, 1024, 1, kMinBytes);
                                 })
        ->Unit(benchmark::kMicrosecond)
        ->MinTime(1.0)
        ->UseRealTime();
  }
  // The lower x86 levels for comparison.
  const bool x86_512 = cpu::has_avx512(best);
  for (cpu::IsaLevel level :
       {cpu::IsaLevel::kAvx2, cpu::IsaLevel::kAvx512, cpu::IsaLevel::kAvx512Vnni}) {
    if (!x86_512) break;
    if (level == best || !cpu::isa_available(level)) continue;
    for (DType t : {DType::Q4_K, DType::Q6_K, DType::Q8_0}) {
      if (level == cpu::IsaLevel::kAvx2 && t == DType::Q6_K) continue;
      const std::string name =
          "Matvec_" + std::string(cpu::isa_name(level)) + "/" + std::string(arc::dtype_name(t));
      benchmark::RegisterBenchmark(
          name.c_str(),
          [t, level](benchmark::State& s) { run_matmul(s, t, level, kOut, kIn, 1, kMinBytes); })
          ->Unit(benchmark::kMillisecond)
          ->MinTime(1.0)
          ->UseRealTime();
    }
  }
  // Cache-resident matvec (128 rows x 4096, 0.3-0.6 MB: L2): the kernels' compute rate per core
  // with --arc_threads=1, free of DRAM noise; decode reaches the bandwidth goal only where this
  // is well above one core's share of the memory bandwidth.
  // The best level as MatvecL2/, the lower AVX-512 levels as MatvecL2_<level>/.
  std::vector<cpu::IsaLevel> l2_levels = {best};
  for (cpu::IsaLevel level : {cpu::IsaLevel::kAvx512Vnni, cpu::IsaLevel::kAvx512}) {
    if (x86_512 && level != best && cpu::isa_available(level)) l2_levels.push_back(level);
  }
  for (cpu::IsaLevel level : l2_levels) {
    for (DType t : l2_types) {
      if (arc::dtype_is_internal(t) && level == cpu::IsaLevel::kAvx512) continue;
      const std::string name =
          (level == best ? std::string("MatvecL2/")
                         : "MatvecL2_" + std::string(cpu::isa_name(level)) + "/") +
          std::string(arc::dtype_name(t));
      benchmark::RegisterBenchmark(
          name.c_str(),
          [t, level](benchmark::State& s) { run_matmul(s, t, level, 128, kIn, 1, 0); })
          ->Unit(benchmark::kMicrosecond)
          ->MinTime(0.3)
          ->UseRealTime();
    }
  }
  for (DType t : {DType::Q4_K, DType::Q6_K, DType::Q8_0, DType::MXFP4, DType::F16}) {
    for (int64_t tokens : {64, 256, 512}) {
      const std::string name =
          "Matmul/" + std::string(arc::dtype_name(t)) + "/tokens:" + std::to_string(tokens);
      benchmark::RegisterBenchmark(
          name.c_str(),
          [t, best, tokens](benchmark::State& s) { run_matmul(s, t, best, 4096, 4096, tokens, 0); })
          ->Unit(benchmark::kMillisecond)
          ->MinTime(0.5)
          ->UseRealTime();
    }
  }
#if defined(__aarch64__)
  // The lower aarch64 levels on the same products, so one run on Grace shows what SDOT (decode)
  // and SMMLA (prefill) bring: Matvec_neon*, Matmul_neon* next to Matvec / Matmul above.
  for (cpu::IsaLevel lower : {cpu::IsaLevel::kNeon, cpu::IsaLevel::kNeonDotprod}) {
    if (lower == best || !cpu::isa_available(lower)) continue;
    const std::string level(cpu::isa_name(lower));
    for (DType t : {DType::Q4_K, DType::Q8_0}) {
      const std::string dt(arc::dtype_name(t));
      benchmark::RegisterBenchmark(
          ("Matvec_" + level + "/" + dt).c_str(),
          [t, lower](benchmark::State& s) { run_matmul(s, t, lower, kOut, kIn, 1, kMinBytes); })
          ->Unit(benchmark::kMillisecond)
          ->MinTime(1.0)
          ->UseRealTime();
      benchmark::RegisterBenchmark(
          ("Matmul_" + level + "/" + dt + "/tokens:64").c_str(),
          [t, lower](benchmark::State& s) { run_matmul(s, t, lower, 4096, 4096, 64, 0); })
          ->Unit(benchmark::kMillisecond)
          ->MinTime(0.5)
          ->UseRealTime();
    }
  }
#endif
}

}  // namespace

int main(int argc, char** argv) {
  // --arc_threads=N (ours) is taken out before Google Benchmark parses the rest.
  int kept = 1;
  for (int i = 1; i < argc; ++i) {
    if (std::strncmp(argv[i], "--arc_threads=", 14) == 0) {
      thread_count() = std::atoi(argv[i] + 14);
    } else {
      argv[kept++] = argv[i];
    }
  }
  argc = kept;
  benchmark::Initialize(&argc, argv);
  read_bandwidth() = measure_read_bandwidth();
  std::printf("threads: %d, isa: %s, read bandwidth (median of 5, 1 GiB): %.2f GB/s wall",
              pool().num_threads(), std::string(cpu::isa_name(cpu::best_isa())).c_str(),
              read_bandwidth().wall_gbs);
  if (pool().num_threads() == 1)
    std::printf(", %.2f GB/s per CPU second", read_bandwidth().cpu_gbs);
  std::printf("\n");
  register_all();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
