// `arclight-engine fit`: will a model fit on N boxes, how much context is left, how fast can
// decode go at most. Models come from a GGUF file or the catalog (`fit --list`).
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <system_error>
#include <vector>

#include <fmt/format.h>

#include "arc/catalog.h"
#include "arc/fit.h"
#include "arc/fit_json.h"
#include "arc/gguf.h"
#include "arc/model_config.h"
#include "arc/shard_load.h"
#if defined(ARC_FIT_HAS_GGUF)
#include <optional>
#include "arc/fit_gguf.h"

#include "arc/fit_remote.h"
#endif
#include "commands.h"

namespace arc::cli {

namespace {

struct FitArgs {
  std::string model_file;
  std::string url;    // a remote GGUF file: only its header is read (range requests)
  std::string token;  // gated repositories (else $HF_TOKEN)
  std::string catalog_id;
  std::string build;
  std::string catalog_file;
  bool list = false;
  bool json = false;
  std::string kv_dtype = "f16";
  std::string moe_split = "auto";  // --moe-split: the routed experts' split shown for --boxes
  fit::Cluster cluster;
  fit::Workload workload;
};

// The folder of the running binary, for the installed catalog; empty when unknown.
std::string exe_dir() {
  std::error_code ec;
  auto p = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::string() : p.parent_path().string();
}

Result<catalog::Catalog> open_catalog(const FitArgs& a) {
  std::string path = a.catalog_file;
  if (path.empty()) {
    ARC_ASSIGN_OR_RETURN(path, catalog::find_builtin_catalog(exe_dir()));
  }
  return catalog::load_catalog(path);
}

void print_list(const catalog::Catalog& c) {
  for (const catalog::Model& m : c.models) {
    std::printf("%-26s %-34s %7.1fB total, %5.1fB active  [%s]\n", m.id.c_str(), m.name.c_str(),
                m.total_params_b, m.active_params_b, m.origin.c_str());
    for (const catalog::Build& b : m.builds) {
      std::string size = b.weights ? fmt::format("{:g} {}", b.weights->value, b.weights->unit)
                                   : fmt::format("{:g} bits/weight", b.bits_per_weight);
      std::printf("    --build %-20s %-34s %s\n", b.name.c_str(), b.format.c_str(), size.c_str());
    }
  }
}

// header: filled with the remote file's header for --url (the split needs its tensors).
Result<fit::ModelSpec> model_from_args(const FitArgs& a, std::optional<gguf::File>* header) {
  if (!a.url.empty()) {
#if defined(ARC_FIT_HAS_GGUF)
    fit::RemoteOptions o;
    o.bearer_token = a.token;
    ARC_ASSIGN_OR_RETURN(fit::RemoteSpec r, fit::model_spec_from_gguf_url(a.url, o));
    // stderr: stdout stays the same report as for the local file.
    std::fprintf(stderr, "fit: read %.1f KiB of header from %zu file%s (%s) in %d request%s\n",
                 double(r.bytes_read) / 1024.0, r.n_files, r.n_files == 1 ? "" : "s",
                 fit::format_gib(double(r.file_bytes)).c_str(), r.requests,
                 r.requests == 1 ? "" : "s");
    if (header != nullptr) *header = std::move(r.header);
    return r.spec;
#else
    return unimplemented("this build has no GGUF reader; use --catalog ID --build NAME");
#endif
  }
  if (!a.model_file.empty()) {
#if defined(ARC_FIT_HAS_GGUF)
    return fit::model_spec_from_gguf_file(a.model_file);
#else
    return unimplemented("this build has no GGUF reader; use --catalog ID --build NAME");
#endif
  }
  ARC_ASSIGN_OR_RETURN(catalog::Catalog c, open_catalog(a));
  const catalog::Model* m = c.find(a.catalog_id);
  if (!m) {
    return not_found("no catalog entry '" + a.catalog_id +
                     "'; `arclight-engine fit --list` shows them");
  }
  const catalog::Build* b = nullptr;
  if (a.build.empty()) {
    if (m->builds.size() != 1) {
      std::string names;
      for (const auto& x : m->builds) names += (names.empty() ? "" : ", ") + x.name;
      return invalid_argument(m->id + " has several builds; pick one with --build (" + names + ")");
    }
    b = &m->builds[0];
  } else {
    b = m->find_build(a.build);
    if (!b) {
      std::string names;
      for (const auto& x : m->builds) names += (names.empty() ? "" : ", ") + x.name;
      return not_found(m->id + " has no build '" + a.build + "'; it has: " + names);
    }
  }
  return catalog::model_spec(*m, *b);
}

int run_fit(FitArgs& a) {
  if (a.list) {
    auto c = open_catalog(a);
    if (!c.ok()) {
      std::fprintf(stderr, "fit: %s\n", c.status().to_string().c_str());
      return 1;
    }
    print_list(*c);
    return 0;
  }
  if (int(!a.model_file.empty()) + int(!a.url.empty()) + int(!a.catalog_id.empty()) != 1) {
    std::fprintf(stderr, "fit: give one of --model FILE, --url URL or --catalog ID (see --list)\n");
    return 2;
  }
  auto dtype = fit::parse_kv_dtype(a.kv_dtype);
  if (!dtype.ok()) {
    std::fprintf(stderr, "fit: --kv-dtype: %s\n", dtype.status().message().c_str());
    return 2;
  }
  a.workload.kv_dtype = *dtype;
  std::optional<gguf::File> remote_header;  // --url: the header as read
  auto model = model_from_args(a, &remote_header);
  if (!model.ok()) {
    std::fprintf(stderr, "fit: %s\n", model.status().to_string().c_str());
    return model.status().code() == StatusCode::kInvalidArgument ? 2 : 1;
  }
  auto report = fit::compute(*model, a.cluster, a.workload);
  if (!report.ok()) {
    std::fprintf(stderr, "fit: %s\n", report.status().message().c_str());
    return 2;
  }
  // A file over several boxes: how its heads and widths split (padding, uneven block shares).
  std::vector<std::string> split;
  if (a.cluster.boxes > 1) {
    if (remote_header && config_from_gguf(*remote_header).ok()) {
      split = describe_split(*remote_header, a.cluster.boxes, *parse_moe_split(a.moe_split));
    } else if (!a.model_file.empty()) {
      if (auto f = gguf::File::open(a.model_file); f.ok() && config_from_gguf(*f).ok()) {
        split = describe_split(*f, a.cluster.boxes, *parse_moe_split(a.moe_split));
      }
    }
  }
  if (a.json) {
    nlohmann::json j = fit::to_json(*report);
    if (!split.empty()) j["split"] = split;
    std::printf("%s\n", j.dump(2).c_str());
  } else {
    std::fputs(fit::format_report_text(*report).c_str(), stdout);
    for (size_t i = 0; i < split.size(); ++i) {
      std::printf("%s%s\n", i == 0 ? "split: " : "       ", split[i].c_str());
    }
  }
  return 0;
}

}  // namespace

void add_fit_command(CLI::App& app, CliContext& ctx) {
  auto args = std::make_shared<FitArgs>();
  auto* cmd = app.add_subcommand(
      "fit", "Memory fit and decode-speed ceiling of a model on 1-4 DGX Spark boxes");
  cmd->add_option("--model", args->model_file, "GGUF file (exact tensor sizes)");
  cmd->add_option("--url", args->url,
                  "remote GGUF file (e.g. https://huggingface.co/REPO/resolve/main/F.gguf): "
                  "only its header is read, through HTTP range requests");
  cmd->add_option("--token", args->token,
                  "token for gated repositories with --url (default: $HF_TOKEN)");
  cmd->add_option("--catalog", args->catalog_id, "catalog model id (see --list)");
  cmd->add_option("--build", args->build, "build of the catalog model (quantization)");
  cmd->add_option("--catalog-file", args->catalog_file, "catalog JSON instead of the built-in one");
  cmd->add_flag("--list", args->list, "list catalog models and their builds");
  cmd->add_option("--moe-split", args->moe_split,
                  "with --boxes: routed experts by blocks of every expert (tp), whole experts per "
                  "box (ep), or whichever loads the boxes more evenly (auto)")
      ->capture_default_str()
      ->check(CLI::IsMember({"auto", "tp", "ep"}));
  cmd->add_option("--boxes", args->cluster.boxes, "number of boxes (tensor-parallel ranks)")
      ->capture_default_str();
  cmd->add_option("--context", args->workload.context, "context length per sequence, tokens")
      ->capture_default_str();
  cmd->add_option("--concurrency", args->workload.concurrency, "sequences held at once")
      ->capture_default_str();
  cmd->add_option("--kv-dtype", args->kv_dtype, "KV cache type: f16, bf16, f32, q8_0, fp8, q4_0")
      ->capture_default_str();
  cmd->add_option("--reserve-gib", args->cluster.reserve_gib, "per box, for the OS and other apps")
      ->capture_default_str();
  cmd->add_option("--usable-gib", args->cluster.usable_gib, "usable memory per box")
      ->capture_default_str();
  cmd->add_option("--runtime-gib", args->cluster.runtime_gib, "per box: CUDA context, NCCL, engine")
      ->capture_default_str();
  cmd->add_option("--bandwidth-gbs", args->cluster.bandwidth_gbs, "memory bandwidth per box, GB/s")
      ->capture_default_str();
  cmd->add_option("--link-gbs", args->cluster.link_gbs, "link bandwidth per box, GB/s")
      ->capture_default_str();
  cmd->add_flag("--engram-on-disk,--ngram-on-disk", args->workload.ngram_on_disk,
                "keep Engram / n-gram tables on NVMe");
  cmd->add_flag("--json", args->json, "print the report as JSON");
  cmd->callback([args, &ctx] {
    // The environment is read here, at the command's edge, never inside the library.
    if (args->token.empty()) {
      if (const char* t = std::getenv("HF_TOKEN")) args->token = t;
    }
    ctx.exit_code = run_fit(*args);
  });
}

}  // namespace arc::cli
