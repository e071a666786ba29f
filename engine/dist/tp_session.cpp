// TpDriver: rank 0 broadcasts each KV change and each step's batch; workers replay them.
#include "arc/tp_session.h"

#include <string>

#include "arc/log.h"

namespace arc {
namespace {

enum Kind : int32_t { kAddSeq = 1, kReserve = 2, kFree = 3, kStep = 4, kStop = 5 };

// Fixed-size control message; a step's token arrays follow in a second broadcast.
struct Header {
  int32_t kind = 0;
  int32_t seq = 0;
  int64_t value = 0;   // kReserve: positions; kStep: n_tokens
  int64_t n_rows = 0;  // kStep: explicit logit rows
};

}  // namespace

Status TpDriver::send(int32_t kind, int32_t seq, int64_t value, std::vector<int32_t>* payload) {
  if (comm_.size() == 1) return ok_status();
  Header h;
  h.kind = kind;
  h.seq = seq;
  h.value = value;
  h.n_rows = payload != nullptr ? static_cast<int64_t>(payload->size()) : 0;
  ARC_RETURN_IF_ERROR(comm_.broadcast(&h, sizeof(h), 0));
  if (payload != nullptr && !payload->empty()) {
    ARC_RETURN_IF_ERROR(comm_.broadcast(
        payload->data(), static_cast<int64_t>(payload->size() * sizeof(int32_t)), 0));
  }
  return ok_status();
}

Result<int32_t> TpDriver::add_sequence() {
  const int32_t seq = kv_.add_sequence();
  ARC_RETURN_IF_ERROR(send(kAddSeq, seq, 0, nullptr));
  return seq;
}

Status TpDriver::reserve(int32_t seq, int64_t n_tokens) {
  ARC_RETURN_IF_ERROR(kv_.reserve(seq, n_tokens));
  return send(kReserve, seq, n_tokens, nullptr);
}

Status TpDriver::free_sequence(int32_t seq) {
  kv_.free_sequence(seq);
  return send(kFree, seq, 0, nullptr);
}

Result<std::vector<float>> TpDriver::step(const ForwardBatch& batch) {
  if (comm_.size() > 1 && (!batch.rope_positions.empty() || !batch.embd_rows.empty())) {
    // The step message carries token ids only; workers would compute without the images.
    return unimplemented("images are not supported with tensor parallelism yet");
  }
  if (comm_.size() > 1) {
    // [tokens | positions | seq_ids | logit_rows]
    std::vector<int32_t> p;
    p.insert(p.end(), batch.tokens.begin(), batch.tokens.end());
    p.insert(p.end(), batch.positions.begin(), batch.positions.end());
    p.insert(p.end(), batch.seq_ids.begin(), batch.seq_ids.end());
    p.insert(p.end(), batch.logit_rows.begin(), batch.logit_rows.end());
    ARC_RETURN_IF_ERROR(send(kStep, 0, static_cast<int64_t>(batch.tokens.size()), &p));
  }
  return fwd_.run(batch);
}

Status TpDriver::stop() {
  if (stopped_) return ok_status();
  stopped_ = true;
  return send(kStop, 0, 0, nullptr);
}

Status TpDriver::worker_loop() {
  auto log = logger("dist");
  for (;;) {
    Header h;
    ARC_RETURN_IF_ERROR(comm_.broadcast_no_deadline(&h, sizeof(h), 0).with_context("worker"));
    std::vector<int32_t> p(static_cast<size_t>(h.n_rows));
    if (!p.empty()) {
      ARC_RETURN_IF_ERROR(comm_.broadcast(p.data(), static_cast<int64_t>(p.size() * 4), 0));
    }
    Status s;
    switch (h.kind) {
      case kAddSeq: {
        const int32_t seq = kv_.add_sequence();
        if (seq != h.seq) {
          s = internal_error("worker KV cache out of step: rank 0 added sequence " +
                             std::to_string(h.seq) + ", this rank " + std::to_string(seq));
        }
        break;
      }
      case kReserve:
        s = kv_.reserve(h.seq, h.value);
        break;
      case kFree:
        kv_.free_sequence(h.seq);
        break;
      case kStep: {
        const size_t t = static_cast<size_t>(h.value);
        if (p.size() < 3 * t) {
          s = internal_error("worker: malformed step message");
          break;
        }
        ForwardBatch b;
        b.tokens = std::span<const int32_t>(p.data(), t);
        b.positions = std::span<const int32_t>(p.data() + t, t);
        b.seq_ids = std::span<const int32_t>(p.data() + 2 * t, t);
        b.logit_rows = std::span<const int32_t>(p.data() + 3 * t, p.size() - 3 * t);
        Result<std::vector<float>> r = fwd_.run(b);
        if (!r.ok()) s = r.status();
        break;
      }
      case kStop:
        return ok_status();
      default:
        s = internal_error("worker: unknown message kind " + std::to_string(h.kind));
    }
    if (!s.ok()) {
      // Rank 0 sees the failure as a collective that never completes (its watchdog fires).
      log->error("rank {}: {}", comm_.rank(), s.to_string());
      return s;
    }
  }
}

}  // namespace arc
