// A Backend that times each op of another backend (see arc/op_profile.h).
#include "arc/op_profile.h"

#include <chrono>

#include "arc/step_candidates.h"

namespace arc {

void OpProfile::add(const char* op, double seconds) {
  for (OpTime& t : times_) {
    if (t.op == op) {
      t.seconds += seconds;
      ++t.calls;
      return;
    }
  }
  times_.push_back({op, seconds, 1});
}

namespace {

class ProfilingBackend : public Backend {
 public:
  ProfilingBackend(Backend& inner, OpProfile* profile) : in_(inner), prof_(profile) {}

  std::string_view name() const override { return in_.name(); }
  int num_threads() const override { return in_.num_threads(); }
  Result<std::unique_ptr<DeviceBuffer>> alloc(size_t bytes) override { return in_.alloc(bytes); }
  Result<const void*> map_weights(std::span<const uint8_t> host) override {
    return in_.map_weights(host);
  }
  void upload(void* dst, const void* src, size_t bytes) override {
    time("upload", [&] { in_.upload(dst, src, bytes); });
  }
  void download(void* dst, const void* src, size_t bytes) override {
    time("download", [&] { in_.download(dst, src, bytes); });
  }
  Status sync() override {
    Status s = in_.sync();
    if (s.ok() && !error_.ok()) s = error_;
    error_ = ok_status();
    return s;
  }

  void matmul(const kernels::MatmulArgs& a) override {
    time("matmul", [&] { in_.matmul(a); });
  }
  void matmul_multi(std::span<const kernels::MatmulArgs> a) override {
    time("matmul_multi", [&] { in_.matmul_multi(a); });
  }
  void matmul_batch(std::span<const kernels::MatmulArgs> a) override {
    time("matmul_batch", [&] { in_.matmul_batch(a); });
  }
  void rms_norm(const float* x, const float* w, float* y, int64_t n_rows, int64_t d,
                float eps) override {
    time("rms_norm", [&] { in_.rms_norm(x, w, y, n_rows, d, eps); });
  }
  void sum_squares(const float* x, float* ss, int64_t n_rows, int64_t d) override {
    time("sum_squares", [&] { in_.sum_squares(x, ss, n_rows, d); });
  }
  void rms_norm_sumsq(const float* x, const float* w, const float* ss, float* y, int64_t n_rows,
                      int64_t d, int64_t n_total, float eps) override {
    time("rms_norm_sumsq", [&] { in_.rms_norm_sumsq(x, w, ss, y, n_rows, d, n_total, eps); });
  }
  void rope(const kernels::RopeArgs& a) override {
    time("rope", [&] { in_.rope(a); });
  }
  void add(const float* a, const float* b, float* y, int64_t n) override {
    time("add", [&] { in_.add(a, b, y, n); });
  }
  void add_bias(float* x, const float* bias, int64_t n_rows, int64_t d) override {
    time("add_bias", [&] { in_.add_bias(x, bias, n_rows, d); });
  }
  void swiglu(const float* gate, const float* up, float* y, int64_t n) override {
    time("swiglu", [&] { in_.swiglu(gate, up, y, n); });
  }
  void add_sigmoid_gated(float* y, const float* s, const float* g, int64_t n_rows,
                         int64_t d) override {
    time("add_sigmoid_gated", [&] { in_.add_sigmoid_gated(y, s, g, n_rows, d); });
  }
  void get_rows(DType t, const void* table, int64_t n_rows, int64_t d, const int32_t* ids,
                int64_t n_ids, float* out) override {
    time("get_rows", [&] { in_.get_rows(t, table, n_rows, d, ids, n_ids, out); });
  }
  void gather(const float* x, const int32_t* rows, int64_t n, int64_t d, float* out) override {
    time("gather", [&] { in_.gather(x, rows, n, d, out); });
  }
  void kv_store(const kernels::KvStoreArgs& a) override {
    time("kv_store", [&] { in_.kv_store(a); });
  }
  void paged_attention(const kernels::PagedAttentionArgs& a) override {
    time("paged_attention", [&] { in_.paged_attention(a); });
  }
  bool has_mla_ops() const override { return in_.has_mla_ops(); }
  void mla_kv_store(const kernels::MlaKvStoreArgs& a) override {
    time("mla_kv_store", [&] { in_.mla_kv_store(a); });
  }
  void mla_attention(const kernels::MlaAttentionArgs& a) override {
    time("mla_attention", [&] { in_.mla_attention(a); });
  }
  bool has_mla_plain() const override { return in_.has_mla_plain(); }
  void mla_plain_attention(const kernels::MlaPlainAttentionArgs& a) override {
    time("mla_plain_attention", [&] { in_.mla_plain_attention(a); });
  }
  bool has_delta_net_ops() const override { return in_.has_delta_net_ops(); }
  void delta_net_conv(const kernels::DeltaConvArgs& a) override {
    time("delta_net_conv", [&] { in_.delta_net_conv(a); });
  }
  void gated_delta_rule(const kernels::GatedDeltaRuleArgs& a) override {
    time("gated_delta_rule", [&] { in_.gated_delta_rule(a); });
  }
  void gated_rms_norm(const kernels::GatedRmsNormArgs& a) override {
    time("gated_rms_norm", [&] { in_.gated_rms_norm(a); });
  }
  void delta_state_copy(const kernels::DeltaStateCopyArgs& a) override {
    time("delta_state_copy", [&] { in_.delta_state_copy(a); });
  }
  void sigmoid_mul(const kernels::SigmoidMulArgs& a) override {
    time("sigmoid_mul", [&] { in_.sigmoid_mul(a); });
  }
  void moe_route(const kernels::RouterArgs& a) override {
    time("moe_route", [&] { in_.moe_route(a); });
  }
  void moe_ffn(const kernels::MoeFfnArgs& a) override {
    time("moe_ffn", [&] { in_.moe_ffn(a); });
  }

 protected:
  // Runs one op and, while profiling, waits for it and adds its time. A failure the wait
  // reports is kept for this backend's sync().
  template <class F>
  void time(const char* op, F&& run) {
    if (!prof_->enabled) {
      run();
      return;
    }
    const auto t0 = std::chrono::steady_clock::now();
    run();
    Status s = in_.sync();
    if (!s.ok() && error_.ok()) error_ = s;
    prof_->add(op, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }

  Backend& in_;
  OpProfile* prof_;
  Status error_;
};

// A backend that selects sampling candidates where the logits are (the CUDA backend) keeps doing
// so under the profile: the profiled steps are the steps users run, sampling included.
class ProfilingSelectingBackend final : public ProfilingBackend, public CandidateSelector {
 public:
  ProfilingSelectingBackend(Backend& inner, CandidateSelector& selector, OpProfile* profile)
      : ProfilingBackend(inner, profile), sel_(selector) {}
  void top_candidates(const kernels::TopCandidatesArgs& a) override {
    time("top_candidates", [&] { sel_.top_candidates(a); });
  }

 private:
  CandidateSelector& sel_;
};

}  // namespace

std::unique_ptr<Backend> make_profiling_backend(Backend& inner, OpProfile* profile) {
  if (auto* selector = dynamic_cast<CandidateSelector*>(&inner)) {
    return std::make_unique<ProfilingSelectingBackend>(inner, *selector, profile);
  }
  return std::make_unique<ProfilingBackend>(inner, profile);
}

}  // namespace arc
