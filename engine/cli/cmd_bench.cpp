// arclight-engine bench: prefill and decode speed of a model on this machine, the weight bytes
// one decoded token reads, the bandwidth that achieves, and the machine's measured bandwidth.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <numeric>
#include <optional>

#include "arc/backend_caps.h"
#include "arc/forward.h"
#include "arc/host_memory.h"
#include "arc/mem_bandwidth.h"
#include "arc/op_profile.h"
#include "arc/thread_pool.h"
#include "arc/tp_runtime.h"
#include "arc/tp_session.h"
#include "backend_flags.h"
#include "bench_kernel_work.h"
#include "bench_spec.h"
#include "commands.h"
#include "sched/draft_model.h"
#include "sched/mtp_drafter.h"
#include "sched/sampler.h"

namespace arc::cli {
namespace {

// bench --tp JSON: how the routed experts were split and the loads the choice compared (null for
// one rank or a dense model).
nlohmann::json moe_split_json(const ShardPlan& p, int ranks) {
  if (ranks <= 1 || !p.has_moe) return nullptr;
  const MoeSplitChoice& c = p.moe;
  return {{"chosen", c.ep ? "ep" : "tp"},
          {"requested", std::string(moe_split_name(c.requested))},
          {"experts_per_rank", c.ep ? nlohmann::json(p.n_local_expert) : nlohmann::json(nullptr)},
          {"busiest_rank_experts_per_token", {{"tp", c.tp_decode}, {"ep", c.ep_decode}}},
          {"busiest_rank_prefill_share", {{"tp", c.tp_prefill}, {"ep", c.ep_prefill}}}};
}

struct BenchOpts {
  std::string model;
  int n_prompt = 512;
  int n_gen = 128;
  int repeats = 5;
  int threads = 0;
  bool json = false;
  bool profile_ops = false;  // time each backend op of the measured decode steps
  int bandwidth_mib = 1024;  // buffer of the bandwidth measurement: far beyond the caches
  int tp = 1;                // tensor-parallel ranks (mpirun -np N)
  BackendOptions backend;
  double tp_timeout = 60;          // seconds one collective may take before the job is aborted
  std::string moe_split = "auto";  // --moe-split
  // Decode sampling, as a request would ask for it (0: greedy).
  float temperature = 0.0f;
  int top_k = 0;
  float top_p = 1.0f;
  uint64_t seed = 1;
  // Speculative decoding (bench_spec.h): none, ngram, draft:PATH, scripted:ERROR_RATE.
  std::string spec = "none";
  int spec_k = 0;
};

struct Stats {
  double median = 0, min = 0, max = 0;
};
Stats stats(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  Stats s;
  if (v.empty()) return s;
  s.min = v.front();
  s.max = v.back();
  const size_t n = v.size();
  s.median = n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
  return s;
}

// Multiply-adds of the weight matrices one token goes through (active experts only), x2.
double matmul_flops_per_token(const ModelConfig& c) {
  const double e = static_cast<double>(c.n_embd);
  double per_layer =
      e * static_cast<double>(c.q_dim() + 2 * c.kv_dim()) + static_cast<double>(c.q_dim()) * e;
  if (c.is_moe()) {
    per_layer += e * static_cast<double>(c.n_expert) +
                 3.0 * e * static_cast<double>(c.n_ff_exp * c.n_expert_used);
    if (c.ffn == FfnKind::kMoeShared) per_layer += 3.0 * e * static_cast<double>(c.n_ff_shexp) + e;
  } else {
    per_layer += 3.0 * e * static_cast<double>(c.n_ff);
  }
  return 2.0 * (per_layer * static_cast<double>(c.n_layer) + e * static_cast<double>(c.n_vocab));
}

// Each op's share of the measured decode steps; "sampling" is the host's pick of each token from
// its logits (the sampler after the step), "host" the rest (batch set-up, logits, argmax).
void print_op_profile(const OpProfile& prof, double dec_seconds, double dec_tokens) {
  if (dec_tokens <= 0 || dec_seconds <= 0) return;
  std::printf("decode ops       us/token  calls/token  share (each op timed to completion)\n");
  double ops = 0;
  for (const OpTime& t : prof.times()) {
    ops += t.seconds;
    std::printf("  %-18s %9.1f  %11.1f  %5.1f%%\n", t.op.c_str(), 1e6 * t.seconds / dec_tokens,
                t.calls / dec_tokens, 100.0 * t.seconds / dec_seconds);
  }
  std::printf("  %-18s %9.1f  %11s  %5.1f%%\n", "host", 1e6 * (dec_seconds - ops) / dec_tokens, "",
              100.0 * (dec_seconds - ops) / dec_seconds);
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

int run_bench(const BenchOpts& o) {
  auto opened = open_backend(o.backend, o.threads, o.tp);
  if (!opened.ok()) {
    std::fprintf(stderr, "error: %s\n", opened.status().to_string().c_str());
    return 1;
  }
  std::unique_ptr<Backend> inner = std::move(*opened);
  OpProfile prof;  // --profile-ops: the measured decode steps' time per op
  std::unique_ptr<Backend> backend =
      o.profile_ops ? make_profiling_backend(*inner, &prof) : std::move(inner);
  // The backend under any wrapper: loading and the KV cache use it directly (with its optional
  // capabilities, e.g. streaming weights to a device); the forward's ops go through `backend`.
  Backend* base = inner ? inner.get() : backend.get();
  auto* dev = dynamic_cast<DeviceReport*>(base);  // nullptr on the CPU
  // With --tp N only this rank's shard is loaded.
  std::unique_ptr<Model> loaded;
  auto tp_rt = TpRuntime::load(o.tp, o.model, *base, loaded,
                               std::chrono::milliseconds(static_cast<int64_t>(o.tp_timeout * 1000)),
                               *parse_moe_split(o.moe_split));
  std::unique_ptr<Model>* model = &loaded;
  if (!tp_rt.ok()) {
    std::fprintf(stderr, "error: %s\n", tp_rt.status().to_string().c_str());
    return 1;
  }
  Communicator& comm = (*tp_rt)->comm();
  // All-reduce stats: MPI (host wall time inside MPI_Allreduce) on the CPU; NCCL on a GPU (device
  // time between events around each ncclAllReduce on the stream, waiting for peers included).
  Communicator& stats_comm = (*tp_rt)->tp_comm() != nullptr ? *(*tp_rt)->tp_comm() : comm;
  const ModelConfig& c = (*model)->config();
  const int64_t block = 16;
  const int64_t ctx = o.n_prompt + o.n_gen + 8 + SpecOptions::kMaxK;
  const KvCacheOptions kvo = kv_cache_options(c, block, (ctx + block - 1) / block + 1, DType::F16);
  auto kv = KvCache::create(*base, kvo);
  if (!kv.ok()) {
    std::fprintf(stderr, "error: %s\n", kv.status().to_string().c_str());
    return 1;
  }
  ForwardExecutor exec(**model, *backend, **kv);
  exec.set_tensor_parallel((*tp_rt)->tp_comm(), (*tp_rt)->plan().vocab_begin);
  TpDriver drv(comm, exec, **kv);
  if (comm.rank() != 0) {  // workers replay rank 0's steps
    Status s = drv.worker_loop();
    if (!s.ok()) std::fprintf(stderr, "error: %s\n", s.to_string().c_str());
    return s.ok() ? 0 : 1;
  }
  struct StopWorkers {  // every return below releases the workers
    TpDriver& d;
    ~StopWorkers() { (void)d.stop(); }
  } stop_workers{drv};
  CommStats dec_comm;  // all-reduce traffic of the measured decode steps
  auto spec = parse_spec(o.spec, o.spec_k);
  if (!spec.ok()) {
    std::fprintf(stderr, "error: %s\n", spec.status().message().c_str());
    return 1;
  }
  std::shared_ptr<Drafter> drafter;  // set below; scripted: after a greedy run to script
  if (spec->kind == SpecKind::kNgram) drafter = std::make_shared<NgramDrafter>();
  if (spec->kind == SpecKind::kMtp) {
    // With several ranks rank 0 runs the block whole (engine/model/model_mtp.cpp).
    auto file = gguf::File::open(o.model);
    Result<std::shared_ptr<MtpDrafter>> mtp =
        file.ok() ? MtpDrafter::load(std::move(*file), **model, *base,
                                     MtpOptions{ctx + 64, block, DType::F16})
                  : Result<std::shared_ptr<MtpDrafter>>(file.status());
    if (!mtp.ok()) {
      std::fprintf(stderr, "error: --spec mtp: %s\n", mtp.status().to_string().c_str());
      return 1;
    }
    drafter = std::move(*mtp);
  }
  if (spec->kind == SpecKind::kDraftModel) {
    DraftModelOptions d;
    d.path = spec->draft_path;
    d.kv_tokens = ctx + 64;
    auto loaded_draft = DraftModelDrafter::load(d, *base, (*model)->file());
    if (!loaded_draft.ok()) {
      std::fprintf(stderr, "error: %s\n", loaded_draft.status().to_string().c_str());
      return 1;
    }
    drafter = std::move(*loaded_draft);
  }
  SpecCounters spec_counts;
  std::vector<int32_t> last_output;  // the last run's generated tokens

  std::vector<int32_t> prompt(static_cast<size_t>(o.n_prompt));
  for (size_t i = 0; i < prompt.size(); ++i) {
    prompt[i] = static_cast<int32_t>((i * 7919 + 13) % static_cast<size_t>(c.n_vocab));
  }
  KernelWorkTotals dec_work;  // --profile-ops on the CUDA emulator: decode kernels' operations
  bool measuring = false;     // past the warm-up
  double dec_seconds = 0;     // measured decode time, all repeats
  // One run: prefill the prompt, then decode n_gen tokens (greedy or sampled as asked). Returns
  // seconds of each.
  auto one = [&](int n_gen, double& t_pre, double& t_dec) -> Status {
    ARC_ASSIGN_OR_RETURN(const int32_t seq, drv.add_sequence());
    ARC_RETURN_IF_ERROR(drv.reserve(seq, o.n_prompt + n_gen));
    std::vector<int32_t> pos(prompt.size()), seqs(prompt.size(), seq);
    std::iota(pos.begin(), pos.end(), 0);
    auto t0 = std::chrono::steady_clock::now();
    ARC_ASSIGN_OR_RETURN(auto logits, drv.step({prompt, pos, seqs, {}}));
    auto t1 = std::chrono::steady_clock::now();
    prof.enabled = o.profile_ops && measuring;
    // On the CUDA emulator the kernels' operations of the decode steps (not the prefill).
    const bool count_work = prof.enabled && dev != nullptr && dev->emulated();
    if (count_work) dev->reset_kernel_work();
    const CommStats c1 = stats_comm.stats();
    SamplingParams sp;
    sp.temperature = o.temperature;
    sp.top_k = o.top_k;
    sp.top_p = o.top_p;
    sp.seed = o.seed;
    Sampler sampler(sp);
    std::vector<int32_t> history = prompt;  // prompt then output, for the sampler's penalties
    int32_t tok = sampler.sample(logits, history, o.n_prompt);
    if (drafter && n_gen > 0) {
      // As many tokens as the plain loop samples: n_gen steps' worth, and the one after.
      history.push_back(tok);
      auto seq_drafter = drafter->start(prompt);
      if (seq_drafter->wants_hidden()) {  // mtp: the prompt's hidden states
        std::vector<float> hidden;
        ARC_RETURN_IF_ERROR(exec.fetch_hidden(0, o.n_prompt, hidden));
        seq_drafter->observe_hidden(history, 0, hidden);
      }
      AdaptiveK k(spec->max_k(), spec->adaptive());
      SpecCounters counts;
      ARC_RETURN_IF_ERROR(spec_decode(drv, seq, history, o.n_prompt, n_gen + 1, sampler,
                                      *seq_drafter, k, counts, &exec));
      const auto t2 = std::chrono::steady_clock::now();
      if (measuring) {
        spec_counts.drafted += counts.drafted;
        spec_counts.accepted += counts.accepted;
        spec_counts.steps += counts.steps;
      }
      last_output.assign(history.begin() + o.n_prompt, history.end());
      ARC_RETURN_IF_ERROR(drv.free_sequence(seq));
      t_pre = std::chrono::duration<double>(t1 - t0).count();
      t_dec = std::chrono::duration<double>(t2 - t1).count();
      return ok_status();
    }
    // Without tensor parallelism the token is picked as serve picks it: candidates prepared where
    // the logits are (arc/step_candidates.h), whole rows on the CPU for sampled rows, the sampler
    // on those; with it every rank returns whole rows.
    StepSampling step;
    StepCandidates picked;
    std::vector<float> fetched;
    for (int i = 0; i < n_gen; ++i) {
      history.push_back(tok);
      const int32_t p = o.n_prompt + i;
      const ForwardBatch next{std::span(&tok, 1), std::span(&p, 1), std::span(&seq, 1), {}};
      if (comm.size() > 1) {
        ARC_ASSIGN_OR_RETURN(logits, drv.step(next));
        const auto s0 = std::chrono::steady_clock::now();
        tok = sampler.sample(logits, history, o.n_prompt);
        if (prof.enabled) prof.add("sampling", seconds_since(s0));
        continue;
      }
      step.rows.assign(1, kernels::CandidateRow{});
      step.pen_tokens.clear();
      step.pen_counts.clear();
      kernels::CandidateRow& row = step.rows[0];
      if (!sampler.candidate_row(history, o.n_prompt, c.n_vocab, -1, row, step.pen_tokens,
                                 step.pen_counts) ||
          (!exec.selects_on_device() && (row.k > 1 || row.flags != 0))) {
        row = kernels::CandidateRow{};
        row.k = 0;  // the whole row comes back
        step.pen_tokens.clear();
        step.pen_counts.clear();
      }
      const Status submitted = exec.submit(next, step);
      const Status waited = exec.wait(picked);
      ARC_RETURN_IF_ERROR(submitted);
      ARC_RETURN_IF_ERROR(waited);
      const auto s0 = std::chrono::steady_clock::now();
      std::optional<int32_t> got;
      if (picked.k[0] > 0) {
        Candidates cand;
        cand.ids = std::span<const int32_t>(picked.ids).first(static_cast<size_t>(picked.k[0]));
        cand.values = std::span<const float>(picked.values).first(static_cast<size_t>(picked.k[0]));
        cand.lse = picked.stats[0];
        cand.mass = picked.stats[2];
        cand.n_vocab = c.n_vocab;
        got = sampler.sample_candidates(cand);
      }
      if (!got) {
        std::span<const float> full = picked.full_row(0);
        if (full.empty()) {
          ARC_RETURN_IF_ERROR(exec.fetch_row(0, fetched));
          full = fetched;
        }
        got = sampler.sample(full, history, o.n_prompt);
      }
      tok = *got;
      if (prof.enabled) prof.add("sampling", seconds_since(s0));
    }
    auto t2 = std::chrono::steady_clock::now();
    if (count_work) add_kernel_work(dec_work, dev->kernel_work());
    prof.enabled = false;
    last_output.assign(history.begin() + o.n_prompt, history.end());
    last_output.push_back(tok);
    const CommStats c2 = stats_comm.stats();
    dec_comm.all_reduce_calls += c2.all_reduce_calls - c1.all_reduce_calls;
    dec_comm.all_reduce_bytes += c2.all_reduce_bytes - c1.all_reduce_bytes;
    dec_comm.all_reduce_seconds += c2.all_reduce_seconds - c1.all_reduce_seconds;
    ARC_RETURN_IF_ERROR(drv.free_sequence(seq));
    t_pre = std::chrono::duration<double>(t1 - t0).count();
    t_dec = std::chrono::duration<double>(t2 - t1).count();
    return ok_status();
  };

  double tp = 0, td = 0;
  if (Status s = one(std::min(o.n_gen, 8), tp, td); !s.ok()) {  // warm-up
    std::fprintf(stderr, "error: %s\n", s.to_string().c_str());
    return 1;
  }
  if (spec->kind == SpecKind::kScripted) {
    // The scripted drafter proposes what this run decodes, wrong at the chosen rate.
    if (Status s = one(o.n_gen, tp, td); !s.ok()) {
      std::fprintf(stderr, "error: %s\n", s.to_string().c_str());
      return 1;
    }
    drafter = std::make_shared<ScriptedDrafter>(last_output, spec->error_rate, c.n_vocab, o.seed);
  }
  // The machine's bandwidth the decode is compared with: CPU memory reads, or on a GPU
  // device-to-device copies (bytes read + written) in its own memory.
  std::string device = "CPU";
  std::string bw_method = "memory read";
  // On the CPU: how much of this process (weights, KV) sits on huge pages, taken while the model
  // is loaded and before the bandwidth buffer exists. 0 with --mmap or where THP is off.
  std::optional<HugePageReport> huge;
  // On the CPU the bandwidth is measured right after each repeat's decode: on a shared host the
  // bandwidth left by the neighbours drifts within seconds, and a repeat is compared with what
  // the machine offered at that moment.
  std::optional<ThreadPool> bw_pool;
  std::optional<ReadBandwidthMeter> meter;
  if (dev == nullptr) {
    huge = huge_page_report();
    bw_pool.emplace(backend->num_threads());
    auto m = ReadBandwidthMeter::create(&*bw_pool, static_cast<size_t>(o.bandwidth_mib) << 20);
    if (!m.ok()) {
      std::fprintf(stderr,
                   "error: cannot allocate %d MiB to measure the memory bandwidth (%s); try a "
                   "smaller --bandwidth-mib\n",
                   o.bandwidth_mib, m.status().message().c_str());
      return 1;
    }
    meter.emplace(std::move(*m));
  }
  std::vector<double> pre_tps, dec_tps, bws;
  dec_comm = {};
  measuring = true;
  for (int r = 0; r < o.repeats; ++r) {
    if (Status s = one(o.n_gen, tp, td); !s.ok()) {
      std::fprintf(stderr, "error: %s\n", s.to_string().c_str());
      return 1;
    }
    pre_tps.push_back(o.n_prompt / tp);
    dec_seconds += td;
    if (o.n_gen > 0) dec_tps.push_back(o.n_gen / td);
    if (meter) bws.push_back(meter->measure(2));
  }
  double mem_bw = 0;
  // The CUDA emulator proves behaviour, not speed: no bandwidth to compare its decode with.
  const bool emulated = dev != nullptr && dev->emulated();
  if (emulated) {
    device = dev->device_description();
    bw_method = "none (emulated)";
  } else if (dev != nullptr) {
    device = dev->device_description();
    bw_method = "device copy";
    auto bw = dev->measure_copy_bandwidth(static_cast<size_t>(o.bandwidth_mib) << 20);
    if (!bw.ok()) {
      std::fprintf(stderr, "error: %s\n", bw.status().to_string().c_str());
      return 1;
    }
    mem_bw = *bw;
  } else {
    mem_bw = stats(bws).median;
  }

  // What verifying k drafts costs: a step of k + 1 tokens over a step of one, after the prompt.
  std::vector<double> verify_cost;
  if (spec->enabled()) {
    Status s = [&]() -> Status {
      ARC_ASSIGN_OR_RETURN(const int32_t seq, drv.add_sequence());
      ARC_RETURN_IF_ERROR(drv.reserve(seq, o.n_prompt + SpecOptions::kMaxK + 1));
      std::vector<int32_t> pos(prompt.size()), seqs(prompt.size(), seq);
      std::iota(pos.begin(), pos.end(), 0);
      ARC_RETURN_IF_ERROR(drv.step({prompt, pos, seqs, {}}).status());
      ARC_ASSIGN_OR_RETURN(verify_cost, verify_costs(drv, seq, o.n_prompt, 8, 5));
      return drv.free_sequence(seq);
    }();
    if (!s.ok()) {
      std::fprintf(stderr, "error: %s\n", s.to_string().c_str());
      return 1;
    }
  }
  const double spec_acceptance =
      spec_counts.drafted ? static_cast<double>(spec_counts.accepted) / spec_counts.drafted : 0.0;
  const double spec_tokens_per_step =
      spec_counts.steps ? static_cast<double>(o.n_gen + 1) * o.repeats / spec_counts.steps : 0.0;

  const Stats pre = stats(pre_tps), dec = stats(dec_tps);
  const double bytes_tok = static_cast<double>((*model)->active_bytes_per_token());
  const double achieved = bytes_tok * dec.median;
  // Each repeat's weight GB/s over the bandwidth measured right after it (CPU), else over the
  // one device measurement; the median of those ratios.
  std::vector<double> fractions;
  for (size_t r = 0; r < dec_tps.size(); ++r) {
    const double bw = bws.empty() ? mem_bw : bws[r];
    if (bw > 0) fractions.push_back(bytes_tok * dec_tps[r] / bw);
  }
  const double fraction = stats(fractions).median;
  // K and V rows a decoded token reads (F16, every layer, this rank's KV heads) at the mean context
  // of the measured steps: memory traffic besides the weights, which grows with the context.
  const double mean_ctx = o.n_prompt + (o.n_gen + 1) / 2.0;
  const double kv_bytes_tok = 2.0 * static_cast<double>(c.kv_values_per_token()) * mean_ctx;
  const double achieved_kv = (bytes_tok + kv_bytes_tok) * dec.median;
  const double flops = matmul_flops_per_token(c);
  // Attention over the prompt: QK^T and PV, causal (half the square on average).
  const double attn_flops =
      2.0 * 2.0 * static_cast<double>(c.n_layer * c.q_dim()) * (o.n_prompt + 1) / 2.0;
  const double gflops = (flops + attn_flops) * pre.median / 1e9;
  // Per decoded token over the measured repeats (rank 0's view; every rank sends the same).
  const double dec_tokens = static_cast<double>(o.n_gen) * o.repeats;
  const double ar_bytes_tok = dec_tokens > 0 ? dec_comm.all_reduce_bytes / dec_tokens : 0;
  const double ar_ms_tok = dec_tokens > 0 ? 1e3 * dec_comm.all_reduce_seconds / dec_tokens : 0;
  const double ar_calls_tok = dec_tokens > 0 ? dec_comm.all_reduce_calls / dec_tokens : 0;

  if (o.json) {
    nlohmann::json j = {
        {"model", o.model},
        {"threads", backend->num_threads()},
        {"backend", std::string(backend->name())},
        {"device", device},
        {"bandwidth_method", bw_method},
        {"n_prompt", o.n_prompt},
        {"n_gen", o.n_gen},
        {"repeats", o.repeats},
        {"prefill_tokens_per_s", {{"median", pre.median}, {"min", pre.min}, {"max", pre.max}}},
        {"decode_tokens_per_s", {{"median", dec.median}, {"min", dec.min}, {"max", dec.max}}},
        {"weight_bytes", (*model)->weight_bytes()},
        {"active_weight_bytes_per_token", bytes_tok},
        {"decode_gb_per_s", achieved / 1e9},
        {"memory_read_gb_per_s", mem_bw / 1e9},
        {"decode_bandwidth_fraction",
         emulated || spec->enabled() ? nlohmann::json(nullptr) : nlohmann::json(fraction)},
        {"emulated", emulated},
        {"decode_tokens_per_s_per_repeat", dec_tps},
        {"kv_bytes_per_token", kv_bytes_tok},
        {"decode_gb_per_s_with_kv", achieved_kv / 1e9},
        {"prefill_gflop_per_s", gflops},
        {"tp", comm.size()},
        {"rank0_weight_bytes", (*tp_rt)->rank_weight_bytes()},
        {"tp_split", comm.size() > 1 ? (*tp_rt)->plan().describe() : std::vector<std::string>{}},
        {"moe_split", moe_split_json((*tp_rt)->plan(), comm.size())},
        {"sampling", {{"temperature", o.temperature}, {"top_k", o.top_k}, {"top_p", o.top_p}}},
    };
    if (!bws.empty()) {
      std::vector<double> gbs;
      for (double bw : bws) gbs.push_back(bw / 1e9);
      j["memory_read_gb_per_s_per_repeat"] = gbs;  // each right after that repeat's decode
    }
    if (huge) {
      j["anon_huge_page_bytes"] = huge->anon_huge_bytes;
      j["thp_mode"] = huge->mode;
    }
    if (comm.size() > 1) {
      j["decode_all_reduce"] = {{"calls_per_token", ar_calls_tok},
                                {"bytes_per_token", ar_bytes_tok},
                                {"ms_per_token", ar_ms_tok},
                                {"transport", stats_comm.on_stream() ? "nccl" : "mpi"}};
    }
    if (spec->enabled()) {
      j["speculative"] = {{"drafter", spec_kind_name(spec->kind)},
                          {"k", spec->k},
                          {"max_k", spec->max_k()},
                          {"error_rate", spec->error_rate},
                          {"draft_tokens", spec_counts.drafted},
                          {"accepted_tokens", spec_counts.accepted},
                          {"acceptance_rate", spec_acceptance},
                          {"tokens_per_step", spec_tokens_per_step},
                          {"verify_cost_k1_to_k8", verify_cost}};
    }
    if (o.profile_ops) {
      nlohmann::json ops = nlohmann::json::array();
      for (const OpTime& t : prof.times()) {
        ops.push_back({{"op", t.op},
                       {"us_per_token", dec_tokens > 0 ? 1e6 * t.seconds / dec_tokens : 0},
                       {"calls_per_token", dec_tokens > 0 ? t.calls / dec_tokens : 0}});
      }
      j["decode_op_profile"] = ops;
      if (!dec_work.empty()) j["decode_kernel_work"] = kernel_work_json(dec_work, dec_tokens);
    }
    std::printf("%s\n", j.dump(2).c_str());
  } else {
    std::printf("model            %s (%s, %.1f MiB of weights)\n", o.model.c_str(),
                std::string(family_name(c.family)).c_str(),
                static_cast<double>((*model)->weight_bytes()) / (1 << 20));
    std::printf("backend          %s on %s\n", std::string(backend->name()).c_str(),
                device.c_str());
    std::printf("threads          %d, prompt %d, generate %d, repeats %d (+1 warm-up)\n",
                backend->num_threads(), o.n_prompt, o.n_gen, o.repeats);
    std::printf("prefill          %.1f tok/s (min %.1f, max %.1f), %.1f GFLOP/s\n", pre.median,
                pre.min, pre.max, gflops);
    std::printf("decode           %.2f tok/s (min %.2f, max %.2f)\n", dec.median, dec.min, dec.max);
    if (o.temperature > 0.0f) {
      std::printf("sampling         temperature %.2f, top_k %d, top_p %.2f, seed %llu\n",
                  o.temperature, o.top_k, o.top_p, static_cast<unsigned long long>(o.seed));
    } else {
      std::printf("sampling         greedy\n");
    }
    if (spec->enabled()) {
      std::printf(
          "speculative      %s%s, k %s: %.2f tokens per step, %.0f%% of %llu drafts "
          "accepted\n",
          spec_kind_name(spec->kind),
          spec->kind == SpecKind::kScripted
              ? (" (error rate " + std::to_string(spec->error_rate).substr(0, 4) + ")").c_str()
              : "",
          spec->adaptive() ? ("adaptive up to " + std::to_string(spec->max_k())).c_str()
                           : std::to_string(spec->k).c_str(),
          spec_tokens_per_step, 100.0 * spec_acceptance,
          static_cast<unsigned long long>(spec_counts.drafted));
      std::printf("verify cost      step of k+1 tokens over a step of 1:");
      for (size_t i = 0; i < verify_cost.size(); ++i) {
        std::printf(" k=%zu %.2fx", i + 1, verify_cost[i]);
      }
      std::printf("\n");
    }
    std::printf("weights/token    %.1f MiB (non-expert + %lld used experts per layer)\n",
                bytes_tok / (1 << 20), static_cast<long long>(c.n_expert_used));
    // The spread of the per-repeat measurements: on a shared host the bandwidth the neighbours
    // leave moves by a third within minutes, and decode speed does not follow it one to one.
    const Stats bw_spread = stats(bws);
    char spread[160] = "";
    if (!bws.empty()) {
      std::snprintf(spread, sizeof spread,
                    " (median of %.1f-%.1f GB/s; %% per repeat against a measurement right after "
                    "it)",
                    bw_spread.min / 1e9, bw_spread.max / 1e9);
    }
    if (emulated) {
      std::printf(
          "decode bandwidth not measured: emulated (the CUDA emulator runs the kernels on the "
          "CPU; its speed says nothing about a GPU)\n");
    } else if (spec->enabled()) {
      // Verify steps read each weight once for several tokens: tokens/s x bytes per token is
      // not a bandwidth then.
      std::printf("decode bandwidth not compared: speculative (measured %s %.2f GB/s%s)\n",
                  bw_method.c_str(), mem_bw / 1e9, spread);
    } else {
      std::printf("decode bandwidth %.2f GB/s = %.0f%% of measured %s %.2f GB/s%s\n",
                  achieved / 1e9, 100.0 * fraction, bw_method.c_str(), mem_bw / 1e9, spread);
      std::printf(
          "KV read/token    %.1f MiB at the mean context (%.0f positions); with the weights "
          "%.2f GB/s = %.0f%%\n",
          kv_bytes_tok / (1 << 20), mean_ctx, achieved_kv / 1e9, 100.0 * achieved_kv / mem_bw);
    }
    if (huge) {
      std::printf("huge pages       %.1f MiB of this process (weights, KV); THP mode %s\n",
                  static_cast<double>(huge->anon_huge_bytes) / (1 << 20),
                  huge->mode.empty() ? "unknown" : huge->mode.c_str());
    }
    if (comm.size() > 1) {
      std::printf("tensor parallel  %d ranks, rank 0 holds %.1f MiB of weights\n", comm.size(),
                  static_cast<double>((*tp_rt)->rank_weight_bytes()) / (1 << 20));
      for (const std::string& line : (*tp_rt)->plan().describe()) {
        std::printf("split            %s\n", line.c_str());
      }
      std::printf("all-reduce       %.0f calls, %.1f KiB, %.3f ms per decoded token (%s)\n",
                  ar_calls_tok, ar_bytes_tok / 1024, ar_ms_tok,
                  stats_comm.on_stream() ? "NCCL, device time" : "MPI, host time");
    }
  }
  if (o.profile_ops && !o.json) {
    print_op_profile(prof, dec_seconds, dec_tokens);
    print_kernel_work(dec_work, dec_tokens);
  }
  return 0;
}

}  // namespace

void add_bench_command(CLI::App& app, CliContext& ctx) {
  auto* cmd = app.add_subcommand("bench", "Measure prefill and decode speed of a model");
  auto o = std::make_shared<BenchOpts>();
  cmd->add_option("--model,-m", o->model, "GGUF model file")->required();
  cmd->add_option("-p,--prompt-tokens", o->n_prompt, "prompt tokens")
      ->capture_default_str()
      ->check(CLI::Range(1, 1 << 20));
  cmd->add_option("-n,--gen-tokens", o->n_gen, "generated tokens")
      ->capture_default_str()
      ->check(CLI::Range(0, 1 << 20));
  cmd->add_option("-r,--repeats", o->repeats, "measured repeats")
      ->capture_default_str()
      ->check(CLI::Range(1, 1000));
  cmd->add_option("-t,--threads", o->threads, "threads (0: all CPUs)")->capture_default_str();
  add_backend_flags(cmd, &o->backend);
  cmd->add_flag("--json", o->json, "machine-readable output");
  cmd->add_flag("--profile-ops", o->profile_ops,
                "time each backend op of the measured decode steps (waits for each op)");
  add_tp_flags(cmd, &o->tp, &o->tp_timeout);
  add_moe_split_flag(cmd, &o->moe_split);
  cmd->add_option("--temperature", o->temperature, "decode sampling temperature (0: greedy)")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 100.0));
  cmd->add_option("--top-k", o->top_k, "decode top-k (0: off)")
      ->capture_default_str()
      ->check(CLI::Range(0, 1 << 30));
  cmd->add_option("--top-p", o->top_p, "decode top-p (1: off)")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 1.0));
  cmd->add_option("--seed", o->seed, "decode sampling seed")->capture_default_str();
  cmd->add_option("--spec", o->spec,
                  "speculative decoding: none, ngram, draft:PATH (a small GGUF with the same "
                  "vocabulary), or scripted:RATE (drafts the greedy continuation, each token "
                  "wrong with probability RATE: measures speed against acceptance)")
      ->capture_default_str();
  cmd->add_option("--spec-k", o->spec_k, "most tokens drafted per step (0: adaptive, up to 4)")
      ->capture_default_str()
      ->check(CLI::Range(0, SpecOptions::kMaxK));
  cmd->add_option("--bandwidth-mib", o->bandwidth_mib,
                  "buffer for the memory-bandwidth measurement")
      ->capture_default_str()
      ->check(CLI::Range(1, 1 << 20));
  cmd->callback([o, &ctx] { ctx.exit_code = run_bench(*o); });
}

}  // namespace arc::cli
