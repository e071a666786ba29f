// GPUs when the engine is built without CUDA: none, and the reason.
#include "arc/cluster_probe.h"

namespace arc::cluster {

void probe_gpus(NodeProbe& node, bool) {
  node.gpu_note = "built without CUDA";
}

}  // namespace arc::cluster
