// make_tensor_communicator: NCCL on the CUDA backend's stream, else the control communicator.
#include "arc/tensor_comm.h"

#include "arc/backend_caps.h"
#include "arc/log.h"
#ifdef ARC_WITH_NCCL
#include "arc/nccl_communicator.h"
#endif

namespace arc {

Result<std::unique_ptr<Communicator>> make_tensor_communicator(Communicator& control,
                                                               Backend& backend,
                                                               std::chrono::milliseconds deadline) {
  auto* native = dynamic_cast<NativeStream*>(&backend);
  if (control.size() == 1 || native == nullptr) return std::unique_ptr<Communicator>();
#ifdef ARC_WITH_NCCL
  ARC_ASSIGN_OR_RETURN(auto nccl, NcclCommunicator::create(control, native->native_device(),
                                                           native->native_stream(), deadline));
  nccl->set_stream_ordered(true);
  logger("dist")->info("rank {}/{}: NCCL on CUDA device {}", control.rank(), control.size(),
                       native->native_device());
  return std::unique_ptr<Communicator>(std::move(nccl));
#else
  (void)deadline;
  return unimplemented(
      "--backend cuda with --tp > 1 needs NCCL, which this build does not have (install NCCL "
      "and rebuild), or run every rank with --backend cpu");
#endif
}

}  // namespace arc
