// arclight-engine eval: perplexity of a model over a text and, against a reference (a model or
// its saved logits), the KL divergence of the model's next-token distributions from the
// reference's, top-1 agreement and the change in perplexity (docs/eval.md).
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <numeric>
#include <optional>

#include "arc/eval/builtin_text.h"
#include "arc/eval/evaluator.h"
#include "arc/eval/logit_file.h"
#include "arc/eval/report.h"
#include "arc/eval/tokenizer_fingerprint.h"
#include "arc/forward.h"
#include "arc/gguf.h"
#include "arc/thread_pool.h"
#include "arc/tokenizer.h"
#include "arc/tp_runtime.h"
#include "arc/tp_session.h"
#include "backend_flags.h"
#include "commands.h"

namespace arc::cli {
namespace {

struct EvalOpts {
  std::string model;
  std::string reference;         // a reference model file
  std::string reference_logits;  // a reference's saved logits
  std::string save_logits;       // where to save the reference's (or the model's) logits
  int save_top_k = 256;
  double save_tail_mass = 1e-4;
  int save_tail_samples = 32;
  std::string text;  // empty: the built-in text
  int64_t ctx = 512;
  bool ctx_given = false;
  int64_t stride = 0;  // 0: ctx / 2
  int64_t max_windows = 0;
  bool json = false;
  bool quiet = false;
  int threads = 0;
  int tp = 1;
  double tp_timeout = 60;
  BackendOptions backend;
};

// SIGINT/SIGTERM ask the loop to stop after the window in flight; the figures so far are kept.
// A signal handler can only reach a flag with static storage: it lives here, in the CLI.
std::atomic<bool> g_stop{false};
static_assert(std::atomic<bool>::is_always_lock_free);
extern "C" void on_stop_signal(int) {
  g_stop.store(true);
}

void install_stop_handler() {
  struct sigaction sa {};
  sa.sa_handler = on_stop_signal;
  sa.sa_flags = SA_RESETHAND;  // a second Ctrl-C ends the process at once
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
}

int fail(const Status& s, int code = 1) {
  std::fprintf(stderr, "error: %s\n", s.message().c_str());
  return code;
}

std::string base_name(const std::string& path) {
  return std::filesystem::path(path).filename().string();
}

// One model ready to run windows: its backend, (shard of the) weights, a KV cache for one window
// and the forward, behind the tensor-parallel driver (plain calls on one rank).
struct Runner {
  std::unique_ptr<Backend> backend;
  std::unique_ptr<Model> model;
  std::unique_ptr<TpRuntime> tp;
  std::unique_ptr<KvCache> kv;
  std::unique_ptr<ForwardExecutor> exec;
  std::unique_ptr<TpDriver> drv;

  Status start(int64_t ctx) {
    const ModelConfig& c = model->config();
    const int64_t block = 16;
    ARC_ASSIGN_OR_RETURN(
        kv, KvCache::create(*backend,
                            kv_cache_options(c, block, (ctx + block - 1) / block + 1, DType::F16)));
    exec = std::make_unique<ForwardExecutor>(*model, *backend, *kv);
    exec->set_tensor_parallel(tp->tp_comm(), tp->plan().vocab_begin);
    drv = std::make_unique<TpDriver>(tp->comm(), *exec, *kv);
    return ok_status();
  }

  // The window as one prefill batch on a fresh sequence, logits for `rows` only. On one rank the
  // executor swaps its logits buffer with `logits` (no allocation per window); under tensor
  // parallelism the driver returns a new vector.
  Status window(std::span<const int32_t> tokens, std::span<const int32_t> rows,
                std::vector<float>& logits) {
    ARC_ASSIGN_OR_RETURN(const int32_t seq, drv->add_sequence());
    Status s = drv->reserve(seq, static_cast<int64_t>(tokens.size()));
    if (s.ok()) {
      std::vector<int32_t> pos(tokens.size()), seqs(tokens.size(), seq);
      std::iota(pos.begin(), pos.end(), 0);
      const ForwardBatch batch{tokens, pos, seqs, rows};
      if (tp->comm().size() == 1) {
        s = exec->submit(batch);
        int64_t n = 0;
        const Status waited = exec->wait(logits, n);  // also after a failed submit: drains it
        if (s.ok()) s = waited;
      } else {
        auto got = drv->step(batch);
        s = got.status();
        if (got.ok()) logits = std::move(*got);
      }
    }
    ARC_RETURN_IF_ERROR(drv->free_sequence(seq));
    return s;
  }
};

Result<std::unique_ptr<Runner>> load_runner(const EvalOpts& o, const std::string& path, int tp) {
  auto r = std::make_unique<Runner>();
  ARC_ASSIGN_OR_RETURN(r->backend, open_backend(o.backend, o.threads, tp));
  ARC_ASSIGN_OR_RETURN(
      r->tp, TpRuntime::load(tp, path, *r->backend, r->model,
                             std::chrono::milliseconds(static_cast<int64_t>(o.tp_timeout * 1000))));
  return r;
}

// What rank 0 knows before the windows run: the text's tokens and the reference's.
struct Setup {
  std::string text_name;
  std::vector<int32_t> tokens;
  std::optional<int32_t> bos;
  std::string fingerprint;
  std::optional<eval::ReferenceLogits> saved;
  int64_t ctx = 0, stride = 0;
};

Result<std::string> read_text(const EvalOpts& o) {
  if (o.text.empty()) return eval::builtin_eval_text();
  std::ifstream f(o.text, std::ios::binary);
  if (!f) return not_found("cannot open the text file " + o.text);
  return std::string((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
}

// The first index where two token lists differ, or -1.
int64_t first_difference(const std::vector<int32_t>& a, const std::vector<int32_t>& b) {
  const size_t n = std::min(a.size(), b.size());
  for (size_t i = 0; i < n; ++i) {
    if (a[i] != b[i]) return static_cast<int64_t>(i);
  }
  return a.size() == b.size() ? -1 : static_cast<int64_t>(n);
}

Result<Setup> prepare(const EvalOpts& o, const Model& model) {
  Setup s;
  auto tok = Tokenizer::from_gguf(model.file());
  if (!tok.ok()) return tok.status().with_context(o.model + ": tokenizer");
  s.fingerprint = eval::tokenizer_fingerprint(*tok);
  ARC_ASSIGN_OR_RETURN(const std::string text, read_text(o));
  s.text_name = o.text.empty() ? std::string(eval::kBuiltinTextName) : o.text;
  // The text as plain text: special-token strings inside it are not control tokens.
  EncodeOptions enc;
  enc.parse_special = false;
  auto ids = tok->encode(text, enc);
  if (!ids.ok()) return ids.status().with_context("tokenizing " + s.text_name);
  s.tokens = std::move(*ids);
  // Models trained with a BOS see one at the start of every window (llama.cpp does the same).
  if (tok->add_bos_by_default() && tok->bos_id()) s.bos = *tok->bos_id();
  s.ctx = o.ctx;
  s.stride = o.stride > 0 ? o.stride : o.ctx / 2;
  const int64_t trained = model.config().n_ctx_train;
  if (trained > 0 && o.ctx > trained) {
    return invalid_argument("--ctx " + std::to_string(o.ctx) + " is longer than the " +
                            std::to_string(trained) + " tokens of context " + o.model +
                            " was trained on: its figures past that say nothing; use --ctx " +
                            std::to_string(trained) + " or less");
  }

  if (!o.reference.empty()) {
    // Only the reference's metadata here; its weights load after the checks pass.
    ARC_ASSIGN_OR_RETURN(const gguf::File rf, gguf::File::open(o.reference));
    auto rtok = Tokenizer::from_gguf(rf);
    if (!rtok.ok()) return rtok.status().with_context(o.reference + ": tokenizer");
    if (eval::tokenizer_fingerprint(*rtok) != s.fingerprint) {
      return invalid_argument("the models have different tokenizers: " + o.model + " (" +
                              eval::describe_tokenizer(*tok) + ") and " + o.reference + " (" +
                              eval::describe_tokenizer(*rtok) +
                              "); KL divergence compares the same vocabulary token by token, so "
                              "the reference must be a build of the same model");
    }
  }
  if (!o.reference_logits.empty()) {
    ARC_ASSIGN_OR_RETURN(eval::ReferenceLogits ref,
                         eval::read_reference_logits(o.reference_logits));
    if (ref.tokenizer_fingerprint != s.fingerprint) {
      return invalid_argument(o.reference_logits + " was saved from " + ref.model +
                              ", whose tokenizer differs from " + o.model + "'s (" +
                              eval::describe_tokenizer(*tok) +
                              "); compare builds of the same model");
    }
    if (const int64_t at = first_difference(ref.tokens, s.tokens); at >= 0) {
      return invalid_argument(o.reference_logits + " was saved over the text '" + ref.text_name +
                              "', and " + s.text_name + " tokenizes differently from token " +
                              std::to_string(at) + " on: give the same --text");
    }
    if ((o.ctx_given && o.ctx != ref.ctx) || (o.stride > 0 && o.stride != ref.stride)) {
      return invalid_argument(o.reference_logits + " was saved with --ctx " +
                              std::to_string(ref.ctx) + " --stride " + std::to_string(ref.stride) +
                              ": leave --ctx and --stride out (they come from the file)");
    }
    s.ctx = ref.ctx;
    s.stride = ref.stride;
    s.saved = std::move(ref);
  }
  // A text too short for one window fails here, before anything else loads.
  // (The Result is held: a Status reference into a temporary would dangle.)
  auto plan = eval::plan_windows(static_cast<int64_t>(s.tokens.size()), s.ctx, s.stride);
  ARC_RETURN_IF_ERROR(plan);
  return s;
}

std::string clock_text(double seconds) {
  const int64_t t = static_cast<int64_t>(seconds + 0.5);
  char buf[32];
  if (t >= 3600) {
    std::snprintf(buf, sizeof buf, "%lld:%02lld:%02lld", static_cast<long long>(t / 3600),
                  static_cast<long long>(t / 60 % 60), static_cast<long long>(t % 60));
  } else {
    std::snprintf(buf, sizeof buf, "%lld:%02lld", static_cast<long long>(t / 60),
                  static_cast<long long>(t % 60));
  }
  return buf;
}

// Progress on stderr: a line rewritten in place on a terminal, else one line every 10 s (and
// after the first window, so a log shows at once that it runs).
std::function<void(const eval::EvalProgress&)> progress_printer(bool with_ref) {
  const bool tty = isatty(STDERR_FILENO) != 0;
  auto last = std::make_shared<double>(-1e9);
  return [tty, last, with_ref](const eval::EvalProgress& p) {
    const bool done = p.windows_done == p.windows_total;
    if (!done && p.windows_done > 1 && p.seconds - *last < (tty ? 0.5 : 10.0)) return;
    *last = p.seconds;
    const double left =
        p.seconds / static_cast<double>(p.windows_done) * (p.windows_total - p.windows_done);
    char kl[48] = "";
    if (with_ref) std::snprintf(kl, sizeof kl, ", KL %.5f", p.mean_kl);
    std::fprintf(stderr,
                 "%seval: window %lld/%lld, %lld tokens scored, ppl %.4f%s, %s elapsed, %s left%s",
                 tty ? "\r" : "", static_cast<long long>(p.windows_done),
                 static_cast<long long>(p.windows_total), static_cast<long long>(p.tokens_scored),
                 std::exp(p.mean_nll), kl, clock_text(p.seconds).c_str(), clock_text(left).c_str(),
                 tty ? (done ? "\n" : "") : "\n");
    std::fflush(stderr);
  };
}

int run_eval_command(const EvalOpts& o) {
  if (!o.reference.empty() && !o.reference_logits.empty()) {
    return fail(invalid_argument("give --reference MODEL or --reference-logits FILE, not both"), 2);
  }
  if (o.tp > 1 && !o.reference.empty()) {
    return fail(invalid_argument(
                    "--tp runs one model per job: save the reference's logits first (eval "
                    "--model REF --save-logits FILE), then compare with --reference-logits FILE"),
                2);
  }
  install_stop_handler();
  auto runner = load_runner(o, o.model, o.tp);
  if (!runner.ok()) return fail(runner.status());
  Runner& q = **runner;
  const int rank = q.tp->rank();

  // Rank 0 reads and checks the inputs and tells the workers the window size (-1: it failed and
  // says why), all they need to size their KV caches.
  Result<Setup> setup = Setup{};
  int64_t ctx = -1;
  if (rank == 0) {
    setup = prepare(o, *q.model);
    if (setup.ok()) ctx = setup->ctx;
  }
  if (o.tp > 1) {
    Communicator& comm = q.tp->comm();
    Status s = rank == 0 ? comm.broadcast(&ctx, sizeof ctx, 0)
                         : comm.broadcast_no_deadline(&ctx, sizeof ctx, 0);
    if (!s.ok()) return fail(s);
  }
  if (!setup.ok()) return fail(setup.status(), 2);
  if (ctx < 0) return 1;
  if (Status s = q.start(ctx); !s.ok()) return fail(s);
  if (rank != 0) {  // workers replay rank 0's windows
    Status s = q.drv->worker_loop();
    return s.ok() ? 0 : fail(s);
  }
  struct StopWorkers {  // every return below releases the workers
    TpDriver& d;
    ~StopWorkers() { (void)d.stop(); }
  } stop_workers{*q.drv};

  std::unique_ptr<Runner> ref;
  if (!o.reference.empty()) {
    auto r = load_runner(o, o.reference, 1);
    if (!r.ok()) return fail(r.status().with_context("reference " + o.reference));
    ref = std::move(*r);
    if (ref->model->config().n_vocab != q.model->config().n_vocab) {
      return fail(invalid_argument("the models' output vocabularies differ (" +
                                   std::to_string(q.model->config().n_vocab) + " and " +
                                   std::to_string(ref->model->config().n_vocab) + " rows)"),
                  2);
    }
    if (Status s = ref->start(ctx); !s.ok()) return fail(s);
  }
  const int64_t n_vocab = q.model->config().n_vocab;
  if (setup->saved && setup->saved->n_vocab != n_vocab) {
    return fail(invalid_argument(o.reference_logits + " holds rows of " +
                                 std::to_string(setup->saved->n_vocab) + " logits, " + o.model +
                                 " gives " + std::to_string(n_vocab)),
                2);
  }

  ThreadPool pool(o.threads);
  eval::EvalSetup es;
  es.tokens = setup->tokens;
  es.ctx = setup->ctx;
  es.stride = setup->stride;
  es.max_windows = o.max_windows;
  es.bos = setup->bos;
  es.n_vocab = n_vocab;
  es.model = [&q](auto t, auto r, auto& out) { return q.window(t, r, out); };
  if (ref) es.reference = [&ref](auto t, auto r, auto& out) { return ref->window(t, r, out); };
  if (setup->saved) {
    es.saved = &setup->saved->rows;
    es.saved_windows = setup->saved->windows_done;
  }
  es.save_top_k = o.save_logits.empty() ? 0 : o.save_top_k;
  es.save_tail_mass = o.save_tail_mass;
  es.save_tail_samples = o.save_tail_samples;
  es.stop = &g_stop;
  es.pool = &pool;
  const bool with_ref = ref != nullptr || setup->saved.has_value();
  if (!o.quiet) es.on_window = progress_printer(with_ref);

  auto result = eval::run_eval(es);
  if (!result.ok()) return fail(result.status());
  if (result->windows_done == 0) {
    std::fprintf(stderr, "eval: stopped before the first window finished: nothing was measured\n");
    return 130;
  }
  if (!o.save_logits.empty()) {
    eval::ReferenceLogits out;
    out.model = base_name(ref ? o.reference : o.model);
    out.tokenizer_fingerprint = setup->fingerprint;
    out.text_name = setup->text_name;
    out.ctx = setup->ctx;
    out.stride = setup->stride;
    out.n_vocab = n_vocab;
    out.windows_done = result->windows_done;
    out.tokens = setup->tokens;
    out.rows = std::move(result->saved);
    if (Status s = eval::write_reference_logits(o.save_logits, out); !s.ok()) return fail(s);
    std::fprintf(stderr,
                 "eval: saved the logits of %s over %lld windows (%.1f entries a token on "
                 "average) to %s\n",
                 out.model.c_str(), static_cast<long long>(out.windows_done),
                 static_cast<double>(out.rows.ids.size()) / std::max<int64_t>(1, out.rows.n_rows()),
                 o.save_logits.c_str());
  }
  eval::ReportInfo info;
  info.model = o.model;
  if (ref) {
    info.reference = o.reference;
    info.reference_kind = "model";
  } else if (setup->saved) {
    info.reference = o.reference_logits + " (of " + setup->saved->model + ")";
    info.reference_kind = "saved logits";
    const eval::CompressedLogits& rows = setup->saved->rows;
    info.saved_top_k = rows.k;
    info.saved_tail_target = rows.tail_target;
    info.saved_tail_samples = rows.samples;
    info.saved_mean_entries =
        static_cast<double>(rows.ids.size()) / std::max<int64_t>(1, rows.n_rows());
  }
  info.text = setup->text_name;
  info.text_tokens = static_cast<int64_t>(setup->tokens.size());
  info.ctx = setup->ctx;
  info.stride = setup->stride;
  info.backend = std::string(q.backend->name());
  info.tp = o.tp;
  const std::string report =
      o.json ? eval::report_json(info, *result) + "\n" : eval::report_text(info, *result);
  std::fwrite(report.data(), 1, report.size(), stdout);
  std::fflush(stdout);
  if (result->interrupted) {
    std::fprintf(stderr,
                 "eval: stopped after %lld of %lld windows; the figures cover the %zu tokens "
                 "scored so far\n",
                 static_cast<long long>(result->windows_done),
                 static_cast<long long>(result->windows_planned), result->nll.size());
    return 130;
  }
  return 0;
}

}  // namespace

void add_eval_command(CLI::App& app, CliContext& ctx) {
  auto* cmd = app.add_subcommand(
      "eval",
      "Perplexity over a text; KL divergence, top-1 agreement and delta perplexity "
      "against a reference model or its saved logits");
  auto o = std::make_shared<EvalOpts>();
  cmd->add_option("--model,-m", o->model, "GGUF model file to evaluate")->required();
  cmd->add_option("--reference", o->reference,
                  "reference model (same tokenizer), run beside the model window by window");
  cmd->add_option(
      "--reference-logits", o->reference_logits,
      "a reference's logits saved by --save-logits (text, ctx and stride come from it)");
  cmd->add_option("--save-logits", o->save_logits,
                  "save the reference's logits (the model's without --reference) for later "
                  "--reference-logits runs");
  cmd->add_option("--save-top-k", o->save_top_k,
                  "most entries --save-logits keeps per token (plus the remaining mass)")
      ->capture_default_str()
      ->check(CLI::Range(1, 4096));
  cmd->add_option("--save-tail-mass", o->save_tail_mass,
                  "--save-logits keeps entries until the rest holds less than this probability")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 1.0));
  cmd->add_option("--save-tail-samples", o->save_tail_samples,
                  "--save-logits also keeps this many samples of the rest per token (the KL's "
                  "unbiased estimate; 0: report the lower bound)")
      ->capture_default_str()
      ->check(CLI::Range(0, 4096));
  cmd->add_option("--text", o->text, "UTF-8 text file (default: the built-in evaluation text)");
  auto* ctx_opt =
      cmd->add_option("--ctx,-c", o->ctx, "window length in tokens; the second half is scored")
          ->capture_default_str()
          ->check(CLI::Range(4, 1 << 20));
  cmd->add_option("--stride", o->stride, "tokens between window starts (default: ctx / 2)")
      ->check(CLI::Range(1, 1 << 20));
  cmd->add_option("--max-windows", o->max_windows, "stop after this many windows (0: all)")
      ->check(CLI::Range(0, 1 << 30));
  cmd->add_flag("--json", o->json, "machine-readable output");
  cmd->add_flag("--quiet,-q", o->quiet, "no progress on stderr");
  cmd->add_option("-t,--threads", o->threads, "threads (0: all CPUs)")->capture_default_str();
  add_backend_flags(cmd, &o->backend);
  add_tp_flags(cmd, &o->tp, &o->tp_timeout);
  cmd->callback([o, ctx_opt, &ctx] {
    o->ctx_given = ctx_opt->count() > 0;
    ctx.exit_code = run_eval_command(*o);
  });
}

}  // namespace arc::cli
