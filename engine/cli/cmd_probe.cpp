// arclight-engine probe: this box's CPU, memory, swap, page cache, GPU and RDMA ports, with the
// problems the seeds warn about (the same probe every rank reports on GET /engine/cluster).
#include <cstdio>
#include <memory>
#include <string>

#include "arc/cluster_probe.h"
#include "commands.h"

namespace arc::cli {

void add_probe_command(CLI::App& app, CliContext& ctx) {
  struct Opts {
    bool json = false;
    std::string root = "/";
    bool no_gpu = false;
  };
  auto o = std::make_shared<Opts>();
  auto* cmd = app.add_subcommand(
      "probe", "Show this box: memory, swap, page cache, GPU, RDMA devices and port states");
  cmd->add_flag("--json", o->json, "print JSON (the shape of GET /engine/cluster's probe)");
  cmd->add_option("--root", o->root, "read proc/ and sys/ under this folder (tests)")
      ->capture_default_str();
  cmd->add_flag("--no-gpu", o->no_gpu, "do not ask the CUDA runtime");
  cmd->callback([o, &ctx] {
    cluster::ProbeOptions po;
    po.root = o->root;
    po.gpu = !o->no_gpu;
    po.gpu_memory = true;  // a short-lived process: the context goes with it
    const cluster::NodeProbe n = cluster::probe_node(po);
    if (o->json) {
      std::printf("%s\n", cluster::to_json(n).dump(2).c_str());
    } else {
      std::fputs(cluster::format_text(n).c_str(), stdout);
    }
    ctx.exit_code = 0;
  });
}

}  // namespace arc::cli
