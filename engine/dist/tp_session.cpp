// TpDriver: rank 0 broadcasts each step's batch with its block tables; workers replay them.
#include "arc/tp_session.h"

#include <algorithm>
#include <climits>
#include <string>

#include "arc/kv_window.h"
#include "arc/log.h"
#include "arc/tp_control.h"

namespace arc {
namespace {

// Kinds 1-3 (KV operations) were retired when the block tables joined the step message.
enum Kind : int32_t { kStep = 4, kStop = 5 };

// Fixed-size control message; a step's int32 arrays follow in a second broadcast (and its image
// rows, if any, in a third: the layout is above TpDriver::step).
struct Header {
  int32_t kind = 0;
  int32_t seq = 0;
  int64_t value = 0;   // kReserve: positions; kStep: n_tokens
  int64_t n_rows = 0;  // int32 values in the payload that follows (kStep)
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
  return kv_.add_sequence();
}

Status TpDriver::reserve(int32_t seq, int64_t n_tokens) {
  return kv_.reserve(seq, n_tokens);
}

Status TpDriver::free_sequence(int32_t seq) {
  kv_.free_sequence(seq);
  return ok_status();
}

// The step message (kStep), rank 0 to every worker, in two or three broadcasts:
//   1. Header {kStep, 0, value = n_tokens t, n_rows = int32 words in 2}
//   2. int32 words:
//        tokens [t] | positions [t] | seq_ids [t]
//        | n_logit_rows, logit_rows [n_logit_rows]
//        | n_tables, then per sequence of the batch: seq, n_blocks, blocks [n_blocks]
//          (with a windowed pool for sliding-window layers, kv_window.h, each followed by
//          n_window, window blocks [n_window], -1 behind the window)
//        | n_rope (0 or 3t), rope_positions [n_rope]          (image inputs; 0 for text)
//        | n_embd_rows (0 or t), embd_rows [n_embd_rows]
//        | n_embd_lo, n_embd_hi: floats in 3 (the low and high 32 bits)
//   3. Only when n_embd > 0: the embedding rows the batch's image tokens take, n_embd floats
//      ([n_embd_rows', (1 + n_deepstack) * n_embd] as in ForwardBatch::embd). Only rank 0 runs
//      the vision encoder (it alone holds the projector); the workers take its output from here.
// A text step costs 4 more words in 2 and no third broadcast.
Result<std::vector<float>> TpDriver::step(const ForwardBatch& batch) {
  if (comm_.size() > 1) {
    const size_t t = batch.tokens.size();
    if (batch.positions.size() != t || batch.seq_ids.size() != t) {
      return invalid_argument("step: tokens, positions and seq_ids differ in length");
    }
    // Shapes the workers rely on to read the message (the forward checks the rest, on every
    // rank alike, before any collective).
    if (!batch.rope_positions.empty() && batch.rope_positions.size() != 3 * t) {
      return invalid_argument("step: rope_positions must hold 3 positions per token");
    }
    if (!batch.embd_rows.empty() && batch.embd_rows.size() != t) {
      return invalid_argument("step: embd_rows must hold one row per token");
    }
    if (batch.embd_rows.empty() && !batch.embd.empty()) {
      return invalid_argument("step: embedding rows without embd_rows");
    }
    if (batch.embd.size() * sizeof(float) > static_cast<uint64_t>(INT32_MAX)) {
      return invalid_argument(
          "step: the image rows of one step exceed the 2 GiB a broadcast takes; lower "
          "--max-batch-tokens");
    }
    std::vector<int32_t> p;
    p.insert(p.end(), batch.tokens.begin(), batch.tokens.end());
    p.insert(p.end(), batch.positions.begin(), batch.positions.end());
    p.insert(p.end(), batch.seq_ids.begin(), batch.seq_ids.end());
    p.push_back(static_cast<int32_t>(batch.logit_rows.size()));
    p.insert(p.end(), batch.logit_rows.begin(), batch.logit_rows.end());
    std::vector<int32_t> seqs(batch.seq_ids.begin(), batch.seq_ids.end());
    std::sort(seqs.begin(), seqs.end());
    seqs.erase(std::unique(seqs.begin(), seqs.end()), seqs.end());
    p.push_back(static_cast<int32_t>(seqs.size()));
    for (int32_t s : seqs) {
      if (s < 0) return invalid_argument("step: negative sequence id");
      const std::vector<int32_t>& table = kv_.blocks(s);
      p.push_back(s);
      p.push_back(static_cast<int32_t>(table.size()));
      p.insert(p.end(), table.begin(), table.end());
      if (kv_.window() != nullptr) {
        const std::vector<int32_t>& w = kv_.window_blocks(s);
        p.push_back(static_cast<int32_t>(w.size()));
        p.insert(p.end(), w.begin(), w.end());
      }
    }
    p.push_back(static_cast<int32_t>(batch.rope_positions.size()));
    p.insert(p.end(), batch.rope_positions.begin(), batch.rope_positions.end());
    p.push_back(static_cast<int32_t>(batch.embd_rows.size()));
    p.insert(p.end(), batch.embd_rows.begin(), batch.embd_rows.end());
    const uint64_t n_embd = batch.embd.size();
    p.push_back(static_cast<int32_t>(n_embd & 0xffffffffu));
    p.push_back(static_cast<int32_t>(n_embd >> 32));
    ARC_RETURN_IF_ERROR(send(kStep, 0, static_cast<int64_t>(t), &p));
    if (n_embd > 0) {
      // The root's buffer is only read by a broadcast.
      ARC_RETURN_IF_ERROR(comm_.broadcast(const_cast<float*>(batch.embd.data()),
                                          static_cast<int64_t>(n_embd * sizeof(float)), 0));
    }
  }
  return fwd_.run(batch);
}

namespace {

// Reads a step message (layout above TpDriver::step) into `b` and stores its block tables in
// `kv`; the spans point into `p`. `n_embd`: the floats of the broadcast that follows (0: none).
Status apply_step(std::span<const int32_t> p, size_t t, KvCache& kv, ForwardBatch& b,
                  uint64_t& n_embd) {
  const int32_t n_blocks = static_cast<int32_t>(kv.options().n_blocks);
  size_t at = 3 * t;
  auto malformed = [] { return internal_error("worker: malformed step message"); };
  if (p.size() < at + 1) return malformed();
  b.tokens = p.subspan(0, t);
  b.positions = p.subspan(t, t);
  b.seq_ids = p.subspan(2 * t, t);
  const size_t n_rows = static_cast<size_t>(p[at++]);
  if (p.size() < at + n_rows + 1) return malformed();
  b.logit_rows = p.subspan(at, n_rows);
  at += n_rows;
  const int32_t n_tables = p[at++];
  for (int32_t i = 0; i < n_tables; ++i) {
    if (p.size() < at + 2) return malformed();
    const int32_t seq = p[at];
    const size_t n = static_cast<size_t>(p[at + 1]);
    at += 2;
    if (seq < 0 || p.size() < at + n) return malformed();
    auto table = p.subspan(at, n);
    for (int32_t blk : table) {
      if (blk < 0 || blk >= n_blocks) {
        return internal_error("worker: block " + std::to_string(blk) + " outside the pool of " +
                              std::to_string(n_blocks) + " (the ranks' KV pools differ in size)");
      }
    }
    kv.set_blocks(seq, table);
    at += n;
    if (kv.window() != nullptr) {
      // The windowed pool's table of the same sequence.
      if (p.size() < at + 1) return malformed();
      const size_t nw = static_cast<size_t>(p[at++]);
      if (p.size() < at + nw) return malformed();
      auto window = p.subspan(at, nw);
      const int32_t n_window = kv.window()->n_blocks();
      for (int32_t blk : window) {
        if (blk < -1 || blk >= n_window) {
          return internal_error("worker: windowed block " + std::to_string(blk) +
                                " outside the pool of " + std::to_string(n_window) +
                                " (the ranks' KV pools differ in size)");
        }
      }
      kv.set_window_blocks(seq, window);
      at += nw;
    }
  }
  // Image inputs.
  if (p.size() < at + 1) return malformed();
  const size_t n_rope = static_cast<size_t>(p[at++]);
  if ((n_rope != 0 && n_rope != 3 * t) || p.size() < at + n_rope + 1) return malformed();
  b.rope_positions = p.subspan(at, n_rope);
  at += n_rope;
  const size_t n_embd_rows = static_cast<size_t>(p[at++]);
  if ((n_embd_rows != 0 && n_embd_rows != t) || p.size() != at + n_embd_rows + 2) {
    return malformed();
  }
  b.embd_rows = p.subspan(at, n_embd_rows);
  at += n_embd_rows;
  n_embd = static_cast<uint32_t>(p[at]) |
           (static_cast<uint64_t>(static_cast<uint32_t>(p[at + 1])) << 32);
  if (n_embd > 0 && n_embd_rows == 0) return malformed();
  return ok_status();
}

}  // namespace

Status TpDriver::stop() {
  if (stopped_) return ok_status();
  stopped_ = true;
  return send(kStop, 0, 0, nullptr);
}

Status TpDriver::worker_loop() {
  auto log = logger("dist");
  int64_t steps_seen = 0;
  for (;;) {
    Header h;
    ARC_RETURN_IF_ERROR(comm_.broadcast_no_deadline(&h, sizeof(h), 0).with_context("worker"));
    std::vector<int32_t> p(static_cast<size_t>(h.n_rows));
    if (!p.empty()) {
      ARC_RETURN_IF_ERROR(comm_.broadcast(p.data(), static_cast<int64_t>(p.size() * 4), 0));
    }
    Status s;
    switch (h.kind) {
      case kStep: {
        if (fault_step_ > 0 && ++steps_seen == fault_step_) {
          return cancelled("rank " + std::to_string(comm_.rank()) +
                           ": test fault injected before step " + std::to_string(fault_step_));
        }
        ForwardBatch b;
        uint64_t n_embd = 0;
        s = apply_step(p, static_cast<size_t>(h.value), kv_, b, n_embd);
        if (!s.ok()) break;
        std::vector<float> embd;
        if (n_embd > 0) {
          if (n_embd * sizeof(float) > static_cast<uint64_t>(INT32_MAX)) {
            s = internal_error("worker: step message announces " + std::to_string(n_embd) +
                               " embedding values");
            break;
          }
          embd.resize(n_embd);
          s = comm_.broadcast(embd.data(), static_cast<int64_t>(n_embd * sizeof(float)), 0);
          if (!s.ok()) break;
          b.embd = embd;
        }
        Result<std::vector<float>> r = fwd_.run(b);
        if (r.status().code() == StatusCode::kInvalidArgument) {
          // The forward checks its inputs before any collective, alike on every rank: rank 0
          // refused the same batch and carries on, so this rank does too.
          log->warn("rank {}: step refused: {}", comm_.rank(), r.status().message());
          break;
        }
        if (!r.ok()) s = r.status();
        break;
      }
      case kStop:
        return ok_status();
      default:
        // A probe or link test from rank 0 between steps.
        s = is_tp_cluster_message(h.kind)
                ? tp_answer_cluster_message(comm_, h.kind, h.value)
                : internal_error("worker: unknown message kind " + std::to_string(h.kind));
    }
    if (!s.ok()) {
      // Rank 0 sees the failure as a collective that never completes (its watchdog fires).
      log->error("rank {}: {}", comm_.rank(), s.to_string());
      return s;
    }
  }
}

}  // namespace arc
