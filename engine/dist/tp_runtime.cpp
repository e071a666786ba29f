// TpRuntime: MPI session + communicator + shard of the model for one command.
#include "arc/tp_runtime.h"

#include <string>

#include "arc/shard_load.h"
#include "arc/tensor_comm.h"

namespace arc {

#ifdef ARC_WITH_MPI
struct TpRuntime::Session {
  std::unique_ptr<MpiSession> mpi;
};
#else
struct TpRuntime::Session {};
#endif

TpRuntime::~TpRuntime() {
  tensor_.reset();
  comm_.reset();  // before MPI_Finalize
  session_.reset();
}

Result<std::unique_ptr<TpRuntime>> TpRuntime::join(int n_ranks,
                                                   std::chrono::milliseconds deadline) {
  std::unique_ptr<TpRuntime> rt(new TpRuntime());
  if (n_ranks < 1) return invalid_argument("--tp must be at least 1");
  if (n_ranks == 1) {
    rt->comm_ = std::make_unique<LocalCommunicator>();
    return rt;
  }
#ifdef ARC_WITH_MPI
  rt->session_ = std::make_unique<Session>();
  ARC_ASSIGN_OR_RETURN(rt->session_->mpi, MpiSession::init(nullptr, nullptr));
  if (rt->session_->mpi->world_size() != n_ranks) {
    return invalid_argument("--tp " + std::to_string(n_ranks) + " but the MPI job has " +
                            std::to_string(rt->session_->mpi->world_size()) +
                            " processes: launch with mpirun -np " + std::to_string(n_ranks));
  }
  ARC_ASSIGN_OR_RETURN(auto comm, MpiCommunicator::create(*rt->session_->mpi, deadline));
  rt->comm_ = std::move(comm);
  return rt;
#else
  (void)deadline;
  return unimplemented("--tp " + std::to_string(n_ranks) +
                       ": this build has no MPI (configure with -DARC_WITH_MPI=ON)");
#endif
}

Result<std::unique_ptr<TpRuntime>> TpRuntime::start(int n_ranks, Model& model, Backend& backend,
                                                    std::chrono::milliseconds deadline,
                                                    MoeSplitMode moe) {
  ARC_ASSIGN_OR_RETURN(auto rt, join(n_ranks, deadline));
  ARC_ASSIGN_OR_RETURN(rt->plan_, make_shard_plan(model, n_ranks, rt->rank(), moe));
  if (n_ranks == 1) {
    rt->rank_bytes_ = model.weight_bytes();
    return rt;
  }
  ARC_ASSIGN_OR_RETURN(rt->rank_bytes_, shard_model(model, backend, rt->plan_));
  return rt;
}

Result<std::unique_ptr<TpRuntime>> TpRuntime::load(int n_ranks, const std::string& path,
                                                   Backend& backend, std::unique_ptr<Model>& model,
                                                   std::chrono::milliseconds deadline,
                                                   MoeSplitMode moe) {
  ARC_ASSIGN_OR_RETURN(auto rt, join(n_ranks, deadline));
  ARC_ASSIGN_OR_RETURN(gguf::File file, gguf::File::open(path));
  ARC_ASSIGN_OR_RETURN(rt->plan_, plan_for_file(file, n_ranks, rt->rank(), moe));
  ARC_ASSIGN_OR_RETURN(model, load_model_shard(std::move(file), backend, rt->plan_));
  rt->rank_bytes_ = model->weight_bytes();
  ARC_ASSIGN_OR_RETURN(rt->tensor_, make_tensor_communicator(*rt->comm_, backend, deadline));
  return rt;
}

}  // namespace arc
