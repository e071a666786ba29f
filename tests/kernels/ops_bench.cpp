// Micro-benchmarks of the non-matmul ops on every ISA variant this machine runs: bytes moved per
// second for the streaming ops, and K/V bytes read per second for paged attention (decode: one
// token over a long context; prefill: a chunk of tokens). CTest label `bench`.
#include <benchmark/benchmark.h>

#include <cstring>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "arc/host_memory.h"
#include "arc/kernels/attention.h"
#include "arc/kernels/ops_isa.h"
#include "arc/thread_pool.h"

namespace k = arc::kernels;
using arc::DType;

namespace {

std::vector<float> random_vec(size_t n) {
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (float& x : v) x = u(rng);
  return v;
}

void bm_rms_norm(benchmark::State& st, k::OpsIsa isa) {
  const int64_t rows = 16, d = st.range(0);
  const auto x = random_vec(rows * d), w = random_vec(d);
  std::vector<float> y(rows * d);
  for (auto _ : st) {
    k::ops_table(isa).rms_norm(x.data(), w.data(), y.data(), rows, d, 1e-6f);
    benchmark::DoNotOptimize(y.data());
  }
  st.SetBytesProcessed(st.iterations() * rows * d * 8);
}

void bm_softmax(benchmark::State& st, k::OpsIsa isa) {
  const int64_t n = st.range(0);
  const auto src = random_vec(n);
  std::vector<float> x = src;
  for (auto _ : st) {
    k::ops_table(isa).softmax_rows(x.data(), 1, n);
    benchmark::DoNotOptimize(x.data());
  }
  st.SetBytesProcessed(st.iterations() * n * 8);
}

void bm_swiglu(benchmark::State& st, k::OpsIsa isa) {
  const int64_t n = st.range(0);
  const auto g = random_vec(n), u = random_vec(n);
  std::vector<float> y(n);
  for (auto _ : st) {
    k::ops_table(isa).swiglu(g.data(), u.data(), y.data(), n);
    benchmark::DoNotOptimize(y.data());
  }
  st.SetBytesProcessed(st.iterations() * n * 12);
}

// One sequence of `ctx` positions in scattered cache blocks (in_order: consecutive blocks, as a
// sequence gets them from a fresh pool); n_tokens queries at its end. Args: ctx, threads,
// head_dim, KV heads (4 query heads each)[, layers]. With `layers` > 1 each iteration attends the
// next of that many separate caches, so the K/V comes from memory as in the engine's decode step
// (one cache per layer) instead of from the last iteration's L2.
void bm_attention(benchmark::State& st, k::OpsIsa isa, DType kv_type, k::KvLayout layout,
                  int64_t n_tokens, bool in_order) {
  const int64_t ctx = st.range(0), d = st.range(2), n_kv = st.range(3), rep = 4, bs = 16;
  const int64_t layers = st.range(4);
  const int64_t n_blocks = ctx / bs * layers;
  const size_t rb = kv_type == DType::F16 ? d * 2 : kv_type == DType::F32 ? d * 4 : d / 32 * 34;
  // On 2 MiB pages, as the engine's KV pool: scattered blocks on 4 KiB pages cost a TLB walk each.
  const size_t cache_bytes = n_blocks * bs * n_kv * rb;
  auto kc = arc::HostMemory::allocate(cache_bytes), vc = arc::HostMemory::allocate(cache_bytes);
  if (!kc.ok() || !vc.ok()) {
    st.SkipWithError("cannot allocate the K/V cache");
    return;
  }
  const auto kx = random_vec(n_blocks * bs * n_kv * d);
  std::vector<int32_t> slots(n_blocks * bs);
  for (size_t i = 0; i < slots.size(); ++i) slots[i] = static_cast<int32_t>(i);
  k::KvStoreArgs fill;
  fill.k = kx.data();
  fill.v = kx.data();
  fill.k_cache = kc->data();
  fill.v_cache = vc->data();
  fill.kv_type = kv_type;
  fill.layout = layout;
  fill.block_size = bs;
  fill.n_blocks = n_blocks;
  fill.slots = slots.data();
  fill.n_tokens = static_cast<int64_t>(slots.size());
  fill.n_kv_head = n_kv;
  fill.head_dim = d;
  k::kv_store(fill);
  // Layer l's sequence: rows l of a [layers, ctx / bs] table of scattered blocks.
  std::vector<int32_t> table(n_blocks);
  for (int64_t i = 0; i < n_blocks; ++i) {
    table[i] = static_cast<int32_t>(in_order ? i : (i * 37) % n_blocks);
  }
  const int64_t seq_blocks = ctx / bs;
  const auto q = random_vec(n_tokens * n_kv * rep * d);
  std::vector<float> out(q.size());
  std::vector<int32_t> seq(n_tokens, 0), pos(n_tokens);
  for (int64_t t = 0; t < n_tokens; ++t) pos[t] = static_cast<int32_t>(ctx - n_tokens + t);
  k::PagedAttentionArgs a;
  a.q = q.data();
  a.out = out.data();
  a.n_tokens = n_tokens;
  a.n_head = n_kv * rep;
  a.n_kv_head = n_kv;
  a.head_dim = d;
  a.k_cache = kc->data();
  a.v_cache = vc->data();
  a.kv_type = kv_type;
  a.layout = layout;
  a.block_size = bs;
  a.n_blocks = n_blocks;
  a.token_seq = seq.data();
  a.token_pos = pos.data();
  a.max_blocks_per_seq = seq_blocks;
  a.split_threads = arc::ThreadPool::hardware_threads();  // as the CPU backend plans it
  arc::ThreadPool pool(static_cast<int>(st.range(1)));
  int64_t layer = 0;
  for (auto _ : st) {
    a.block_tables = table.data() + layer * seq_blocks;
    layer = (layer + 1) % layers;
    k::paged_attention_isa(isa, a, &pool);
    benchmark::DoNotOptimize(out.data());
  }
  // K and V rows read once per token (decode) — the memory traffic that bounds decode.
  st.SetBytesProcessed(st.iterations() * n_tokens * 2 * ctx * n_kv * static_cast<int64_t>(rb));
}

// One decode token's K and V stored per iteration, each into the next of 64 layers' caches (cold,
// as in a decode step). Args: KV heads, head_dim.
void bm_kv_store(benchmark::State& st, DType kv_type, k::KvLayout layout) {
  const int64_t n_kv = st.range(0), d = st.range(1), bs = 16, layers = 64, blocks = 64;
  const size_t layer_bytes = blocks * bs * n_kv * d * (kv_type == DType::F16 ? 2 : 4);
  auto kc = arc::HostMemory::allocate(layer_bytes * layers);
  auto vc = arc::HostMemory::allocate(layer_bytes * layers);
  if (!kc.ok() || !vc.ok()) {
    st.SkipWithError("cannot allocate the K/V cache");
    return;
  }
  std::memset(kc->data(), 0, layer_bytes * layers);  // pages faulted in before the timing
  std::memset(vc->data(), 0, layer_bytes * layers);
  const auto kx = random_vec(n_kv * d), vx = random_vec(n_kv * d);
  int32_t slot = 0;
  k::KvStoreArgs a;
  a.k = kx.data();
  a.v = vx.data();
  a.kv_type = kv_type;
  a.layout = layout;
  a.block_size = bs;
  a.n_blocks = blocks;
  a.slots = &slot;
  a.n_tokens = 1;
  a.n_kv_head = n_kv;
  a.head_dim = d;
  int64_t i = 0;
  for (auto _ : st) {
    const int64_t layer = i % layers;
    slot = static_cast<int32_t>((i / layers * 37 + 5) % (blocks * bs));
    a.k_cache = kc->data() + layer * layer_bytes;
    a.v_cache = vc->data() + layer * layer_bytes;
    k::kv_store(a);
    ++i;
  }
}

void register_all() {
  benchmark::RegisterBenchmark("kv_store_decode_f16/head_blocks", bm_kv_store, DType::F16,
                               k::KvLayout::kHeadBlocks)
      ->Args({4, 64})
      ->Args({8, 128});
  benchmark::RegisterBenchmark("kv_store_decode_f16/token_rows", bm_kv_store, DType::F16,
                               k::KvLayout::kTokenRows)
      ->Args({4, 64})
      ->Args({8, 128});
  for (k::OpsIsa isa : k::ops_isas_available()) {
    const std::string n(k::ops_isa_name(isa));
    benchmark::RegisterBenchmark(("rms_norm/" + n).c_str(), bm_rms_norm, isa)->Arg(4096);
    benchmark::RegisterBenchmark(("softmax/" + n).c_str(), bm_softmax, isa)->Arg(32768);
    benchmark::RegisterBenchmark(("swiglu/" + n).c_str(), bm_swiglu, isa)->Arg(14336);
    // F16 and F32 in the CPU backend's layout (kHeadBlocks), and F16 and Q8_0 in kTokenRows.
    const auto rows = k::KvLayout::kTokenRows, head_blocks = k::KvLayout::kHeadBlocks;
    for (const auto& [t, layout, tn] :
         {std::tuple{DType::F16, head_blocks, "f16"}, std::tuple{DType::F32, head_blocks, "f32"},
          std::tuple{DType::F16, rows, "f16_rows"}, std::tuple{DType::Q8_0, rows, "q8_0_rows"}}) {
      benchmark::RegisterBenchmark(("attn_decode_" + std::string(tn) + "/" + n).c_str(),
                                   bm_attention, isa, t, layout, int64_t{1}, false)
          ->Args({4096, 1, 128, 8, 1})
          ->Args({4096, 2, 128, 8, 1})
          ->Args({576, 1, 64, 4, 1})  // the 1 GB bench model's layer at bench -p 512 -n 128
          ->Args({576, 2, 64, 4, 1})
          ->Args({576, 2, 64, 4, 64})  // the same, 64 layers (37 MB: partly in L3)
          ->UseRealTime();
    }
    // The same from DRAM: 512 layers (300 MB), the engine's case only (building the caches takes
    // seconds per benchmark).
    if (isa == k::ops_isa_best()) {
      benchmark::RegisterBenchmark(("attn_decode_f16/" + n).c_str(), bm_attention, isa, DType::F16,
                                   head_blocks, int64_t{1}, false)
          ->Args({576, 2, 64, 4, 512})
          ->Args({576, 1, 64, 4, 512})
          ->Args({2048, 2, 64, 4, 128})  // a longer context, 268 MB
          ->UseRealTime();
      // The same with each sequence's blocks in order: one run per kv head and layer.
      benchmark::RegisterBenchmark(("attn_decode_f16_in_order/" + n).c_str(), bm_attention, isa,
                                   DType::F16, head_blocks, int64_t{1}, true)
          ->Args({576, 2, 64, 4, 512})
          ->Args({2048, 2, 64, 4, 128})
          ->UseRealTime();
    }
    benchmark::RegisterBenchmark(("attn_prefill32_f16/" + n).c_str(), bm_attention, isa, DType::F16,
                                 head_blocks, int64_t{32}, false)
        ->Args({1024, 1, 128, 8, 1})
        ->Args({1024, 2, 128, 8, 1})
        ->UseRealTime();
  }
}

}  // namespace

int main(int argc, char** argv) {
  register_all();
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
