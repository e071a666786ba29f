// TpRuntime: MPI session + communicator + shard of the model for one command.
#include "arc/tp_runtime.h"

#include <string>

namespace arc {

#ifdef ARC_WITH_MPI
struct TpRuntime::Session {
  std::unique_ptr<MpiSession> mpi;
};
#else
struct TpRuntime::Session {};
#endif

TpRuntime::~TpRuntime() {
  comm_.reset();  // before MPI_Finalize
  session_.reset();
}

Result<std::unique_ptr<TpRuntime>> TpRuntime::start(int n_ranks, Model& model, Backend& backend) {
  std::unique_ptr<TpRuntime> rt(new TpRuntime());
  if (n_ranks < 1) return invalid_argument("--tp must be at least 1");
  if (n_ranks == 1) {
    rt->comm_ = std::make_unique<LocalCommunicator>();
    ARC_ASSIGN_OR_RETURN(rt->plan_, make_shard_plan(model, 1, 0));
    rt->rank_bytes_ = model.weight_bytes();
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
  ARC_ASSIGN_OR_RETURN(auto comm, MpiCommunicator::create(*rt->session_->mpi));
  rt->comm_ = std::move(comm);
  ARC_ASSIGN_OR_RETURN(rt->plan_, make_shard_plan(model, n_ranks, rt->comm_->rank()));
  ARC_ASSIGN_OR_RETURN(rt->rank_bytes_, shard_model(model, backend, rt->plan_));
  return rt;
#else
  (void)backend;
  return unimplemented("--tp " + std::to_string(n_ranks) +
                       ": this build has no MPI (configure with -DARC_WITH_MPI=ON)");
#endif
}

}  // namespace arc
