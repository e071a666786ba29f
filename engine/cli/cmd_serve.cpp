// arclight-engine serve: the HTTP server of rank 0 with the engine behind it.
#include <pthread.h>
#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include <filesystem>

#include "arc/catalog.h"
#include "arc/engine_service.h"
#include "arc/log.h"
#include "arc/server.h"
#include "arc/tp_runtime.h"
#include "arc/tp_serve.h"
#include "backend_flags.h"
#include "commands.h"
#include "sched/drafter.h"

namespace arc::cli {
namespace {

struct ServeOpts {
  std::string model;
  std::string mmproj;  // vision projector; empty: paired from beside the model
  ServerOptions server;
  EngineOptions engine;
  std::string kv_type = "f16";
  int tp = 1;                      // tensor-parallel ranks (mpirun -np N)
  double tp_timeout = 60;          // seconds one collective may take before a rank counts as failed
  double tp_load_timeout = 1800;   // seconds every rank may take to load its shard
  std::string moe_split = "auto";  // --moe-split
  std::string api_key_file;        // the key on the file's first line (kept out of `ps`)
  std::string test_fault;          // tests only: "exit" or "hang" on rank 1 before test_fault_step
  int64_t test_fault_step = 0;
  double test_memory_gib = 0;  // tests only: rank 1 pretends to have this much memory free
};

// The key on the first line of `path`, without surrounding blanks or the line end.
Result<std::string> read_api_key_file(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) return invalid_argument("--api-key-file: cannot read " + path);
  char buf[4096];
  const size_t n = std::fread(buf, 1, sizeof(buf), f);
  std::fclose(f);
  std::string key(buf, n);
  key = key.substr(0, key.find_first_of("\r\n"));
  const size_t b = key.find_first_not_of(" \t");
  if (b == std::string::npos) {
    return invalid_argument("--api-key-file: " + path + " holds no key on its first line");
  }
  key = key.substr(b, key.find_last_not_of(" \t") - b + 1);
  return key;
}

// Ranks > 0: replay rank 0's models and steps until it shuts down.
int serve_worker(const ServeOpts& o, Communicator& comm) {
  // mpirun ends a job with SIGTERM: let it end workers (only rank 0 has a shutdown to run).
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_UNBLOCK, &signals, nullptr);
  TpWorkerOptions wo;
  wo.threads = o.engine.threads;
  wo.device = o.engine.device;
  wo.mmap_weights = o.engine.mmap_weights;
  wo.collective_deadline = std::chrono::milliseconds(static_cast<int64_t>(o.tp_timeout * 1000));
  if (comm.rank() == 1 && o.test_memory_gib > 0) {
    wo.test_memory_limit = static_cast<uint64_t>(o.test_memory_gib * (1ull << 30));
  }
  if (!o.test_fault.empty() && comm.rank() == 1) {
    wo.fault_before_step = o.test_fault_step;
    wo.fault_on_load = o.test_fault_step == 0;
  }
  Status s = tp_serve_worker(comm, wo);
  if (s.code() == StatusCode::kCancelled) {
    // An injected fault: behave like a crashed or wedged rank.
    logger("dist")->error("{} ({})", s.message(), o.test_fault);
    if (o.test_fault == "exit") std::_Exit(3);
    for (;;) pause();
  }
  if (!s.ok()) {
    std::fprintf(stderr, "error: rank %d: %s\n", comm.rank(), s.message().c_str());
    return 1;
  }
  return 0;
}

int serve(ServeOpts o) {
  auto log = logger("serve");
  if (o.kv_type == "f16") {
    o.engine.kv_type = DType::F16;
  } else if (o.kv_type == "f32") {
    o.engine.kv_type = DType::F32;
  } else {
    std::fprintf(stderr, "error: --kv-type must be f16 or f32\n");
    return 2;
  }
  if (Status s = check_bind_safety(o.server); !s.ok()) {
    std::fprintf(stderr, "error: %s\n", s.message().c_str());
    return 2;
  }
  if (auto spec = parse_spec(o.engine.spec, o.engine.spec_k); !spec.ok()) {
    std::fprintf(stderr, "error: %s\n", spec.status().message().c_str());
    return 2;
  } else if (spec->kind == SpecKind::kScripted) {
    std::fprintf(stderr, "error: --spec scripted is for bench and tests only\n");
    return 2;
  }
  // Thousands of idle or slow clients each hold a descriptor: use all the process may have.
  if (rlimit nofile{};
      getrlimit(RLIMIT_NOFILE, &nofile) == 0 && nofile.rlim_cur < nofile.rlim_max) {
    nofile.rlim_cur = nofile.rlim_max;
    setrlimit(RLIMIT_NOFILE, &nofile);
  }
  // Signals are taken by sigwait below: block them before any thread starts.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  auto choice = resolve_backend(o.engine.backend);
  if (!choice.ok()) {
    std::fprintf(stderr, "error: %s\n", choice.status().message().c_str());
    return 2;
  }
  o.engine.backend = choice->kind;
  o.engine.backend_reason = choice->reason;
  logger("serve")->info("backend {} ({})", choice->kind, choice->reason);
  o.engine.device = resolve_device(o.engine.backend, o.engine.device);
  // Tensor parallelism: join the MPI job first; ranks > 0 never start a server.
  auto tp =
      TpRuntime::join(o.tp, std::chrono::milliseconds(static_cast<int64_t>(o.tp_timeout * 1000)));
  if (!tp.ok()) {
    std::fprintf(stderr, "error: %s\n", tp.status().message().c_str());
    return 2;
  }
  if ((*tp)->rank() != 0) return serve_worker(o, (*tp)->comm());
  // Only rank 0 serves HTTP: the key file need not exist on the other boxes.
  if (!o.api_key_file.empty()) {
    Result<std::string> key = read_api_key_file(o.api_key_file);
    if (!key.ok()) {
      std::fprintf(stderr, "error: %s\n", key.status().message().c_str());
      return 2;
    }
    o.server.api_key = std::move(*key);
  }
  if (o.tp > 1) {
    o.engine.tp_comm = &(*tp)->comm();
    o.engine.tp_abort_grace_s = o.tp_timeout;
    o.engine.tp_load_timeout_s = o.tp_load_timeout;
    o.engine.moe_split = *parse_moe_split(o.moe_split);
  }

  o.engine.version = ARC_VERSION;
  {
    // The catalog beside the installed binary or in the source tree (for POST /engine/fit).
    std::error_code ec;
    auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
    if (auto cat = catalog::find_builtin_catalog(ec ? "." : exe.parent_path().string()); cat.ok()) {
      o.engine.catalog_path = *cat;
    }
  }
  if (!o.model.empty()) {
    // The folder of the model named at start is a model folder: POST /engine/load and
    // /engine/fit take paths inside the model folders only.
    std::error_code ec;
    const auto model = std::filesystem::absolute(o.model, ec);
    if (!ec) {
      o.model = model.string();
      o.engine.model_dirs.push_back(model.parent_path().string());
    }
  }
  EngineService service(o.engine);
  Server server(o.server, service);
  if (Status s = server.start(); !s.ok()) {
    std::fprintf(stderr, "error: %s\n", s.message().c_str());
    return 1;
  }
  // Machine-readable line for the app and tests that start us with --port 0.
  std::printf("arclight-engine listening on http://%s:%d\n", o.server.host.c_str(), server.port());
  std::fflush(stdout);
  if (!o.model.empty()) {
    // Serve /health ("loading") while the model loads.
    nlohmann::json load = {{"model", o.model}};
    if (!o.mmproj.empty()) load["mmproj"] = o.mmproj;
    if (Status s = service.load(load); !s.ok()) {
      std::fprintf(stderr, "error: %s\n", s.message().c_str());
      server.stop();
      return 1;
    }
  }
  int sig = 0;
  sigwait(&signals, &sig);
  if (o.tp > 1) {
    // mpirun ends every rank with SIGTERM when one of them exits: say so on rank 0's log.
    log->warn(
        "signal {}: shutting down (under mpirun this also happens when another rank "
        "exited: see mpirun's message and that rank's log)",
        sig);
  } else {
    log->info("signal {}: shutting down", sig);
  }
  server.stop();
  (void)service.unload();
  return 0;
}

}  // namespace

void add_serve_command(CLI::App& app, CliContext& ctx) {
  auto o = std::make_shared<ServeOpts>();
  auto* cmd =
      app.add_subcommand("serve", "Serve a model over OpenAI- and Anthropic-compatible HTTP");
  cmd->add_option("--model,-m", o->model,
                  "GGUF file to load at start (optional: load later over HTTP)");
  cmd->add_option("--mmproj", o->mmproj,
                  "vision projector GGUF for image input (default: an mmproj-*.gguf beside a "
                  "vision model; 'none': no images)");
  cmd->add_option("--host", o->server.host, "address to bind")->capture_default_str();
  cmd->add_option("--port", o->server.port, "port (0: any free port)")->capture_default_str();
  auto* key = cmd->add_option("--api-key", o->server.api_key,
                              "require this key on every route but /health");
  cmd->add_option("--api-key-file", o->api_key_file,
                  "read the API key from the first line of this file (not visible in the "
                  "process list, unlike --api-key; read by rank 0 only)")
      ->excludes(key);
  cmd->add_flag("--insecure", o->server.insecure,
                "allow a non-loopback address without an API key");
  cmd->add_option("--ctx-size,-c", o->engine.ctx_size, "longest sequence (prompt + answer)")
      ->capture_default_str()
      ->check(CLI::Range(16, 1 << 24));
  cmd->add_option("--max-batch-tokens", o->engine.max_batch_tokens, "tokens per forward step")
      ->capture_default_str()
      ->check(CLI::Range(1, 1 << 20));
  cmd->add_option("--parallel", o->engine.max_parallel, "sequences decoding at once")
      ->capture_default_str()
      ->check(CLI::Range(1, 4096));
  cmd->add_option("--model-dir", o->engine.model_dirs,
                  "folders searched for GGUF files (repeatable); POST /engine/load and "
                  "/engine/fit take model paths inside these folders (and the --model file's) "
                  "only");
  cmd->add_option("--threads,-t", o->engine.threads, "CPU threads (0: all)")->capture_default_str();
  o->engine.backend = "auto";
  cmd->add_option("--backend", o->engine.backend, kBackendHelp)
      ->capture_default_str()
      ->check(CLI::IsMember({"auto", "cpu", "cuda"}));
  o->engine.device = -1;
  cmd->add_option("--device", o->engine.device, kDeviceHelp)->check(CLI::Range(-1, 1023));
  cmd->add_flag("--mmap", o->engine.mmap_weights, kMmapHelp);
  cmd->add_option("--kv-type", o->kv_type, "KV cache type: f16 or f32")->capture_default_str();
  cmd->add_option("--spec", o->engine.spec,
                  "speculative decoding: none, ngram (drafts from the sequence's own tokens), "
                  "draft:PATH (a small GGUF with the same vocabulary) or mtp")
      ->capture_default_str();
  cmd->add_option("--spec-k", o->engine.spec_k,
                  "most tokens drafted per step (0: adaptive, up to 4)")
      ->capture_default_str()
      ->check(CLI::Range(0, SpecOptions::kMaxK));
  cmd->add_option("--reserve-gib", o->engine.reserve_gib,
                  "memory kept free for the OS and other programs")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 1024.0));
  cmd->add_option("--max-body-bytes", o->server.max_body_bytes, "largest request body")
      ->capture_default_str();
  cmd->add_option("--header-timeout", o->server.header_timeout_s,
                  "seconds a client may take to send a request's headers")
      ->capture_default_str()
      ->check(CLI::Range(0.05, 3600.0));
  cmd->add_option("--max-connections-per-client", o->server.max_connections_per_client,
                  "open connections allowed from one client address")
      ->capture_default_str()
      ->check(CLI::Range(1, 1 << 20));
  cmd->add_option("--allow-origin", o->server.allow_origins,
                  "web page origin allowed to call the engine, e.g. https://chat.example.com "
                  "(repeatable; '*' allows any page)");
  cmd->add_option("--allow-host", o->server.allow_hosts,
                  "extra name clients may use in the Host header (repeatable)");
  cmd->add_option("--tp", o->tp, "tensor-parallel ranks (run under mpirun -np N)")
      ->capture_default_str()
      ->check(CLI::Range(1, 64));
  cmd->add_option("--tp-timeout", o->tp_timeout,
                  "seconds a collective may take before a rank counts as failed (then 503 for "
                  "as long again, and the job ends)")
      ->capture_default_str()
      ->check(CLI::Range(0.5, 3600.0));
  cmd->add_option("--tp-load-timeout", o->tp_load_timeout,
                  "seconds every rank may take to load its shard of a model")
      ->capture_default_str()
      ->check(CLI::Range(0.5, 86400.0));
  add_moe_split_flag(cmd, &o->moe_split);
  // Fault-handling tests only (hidden): rank 1 exits or hangs before the given step (0: at load).
  cmd->add_option("--tp-test-fault", o->test_fault)
      ->check(CLI::IsMember({"exit", "hang"}))
      ->group("");
  cmd->add_option("--tp-test-fault-step", o->test_fault_step)->group("");
  cmd->add_option("--tp-test-rank1-memory-gib", o->test_memory_gib)->group("");
  cmd->callback([o, &ctx] { ctx.exit_code = serve(*o); });
}

}  // namespace arc::cli
