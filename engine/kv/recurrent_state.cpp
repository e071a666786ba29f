// Recurrent state slots and prefix-cache snapshots of the Gated DeltaNet layers.
#include "arc/recurrent_state.h"

#include <string>

namespace arc {

Result<std::unique_ptr<RecurrentState>> RecurrentState::create(Backend& backend,
                                                               const RecurrentStateOptions& opt) {
  if (opt.n_layers <= 0 || opt.conv_floats < 0 || opt.delta_floats <= 0 || opt.n_seqs <= 0 ||
      opt.n_snapshots < 0) {
    return invalid_argument(
        "recurrent state: layers, state sizes and sequence slots must be positive");
  }
  if (!backend.has_delta_net_ops()) {
    return unimplemented("the " + std::string(backend.name()) +
                         " backend has no Gated DeltaNet ops (qwen3next); run this model on the "
                         "CPU backend");
  }
  std::unique_ptr<RecurrentState> rs(new RecurrentState(backend, opt));
  const int64_t slots = 1 + opt.n_seqs + opt.n_snapshots;
  for (int64_t l = 0; l < opt.n_layers; ++l) {
    ARC_ASSIGN_OR_RETURN(
        auto c, backend.alloc(sizeof(float) *
                              static_cast<size_t>(std::max<int64_t>(slots * opt.conv_floats, 1))));
    ARC_ASSIGN_OR_RETURN(
        auto d, backend.alloc(sizeof(float) * static_cast<size_t>(slots * opt.delta_floats)));
    rs->conv_.push_back(std::move(c));
    rs->delta_.push_back(std::move(d));
  }
  ARC_ASSIGN_OR_RETURN(rs->copy_ids_, backend.alloc(2 * sizeof(int32_t)));
  return rs;
}

RecurrentState::RecurrentState(Backend& be, const RecurrentStateOptions& opt) : be_(be), opt_(opt) {
  for (int64_t i = opt.n_seqs; i >= 1; --i) free_seq_.push_back(static_cast<int32_t>(i));
  snaps_.resize(static_cast<size_t>(opt.n_snapshots));
  for (int64_t i = opt.n_snapshots - 1; i >= 0; --i) free_snaps_.push_back(i);
  h_copy_.resize(2);
}

void RecurrentState::copy_slot(int32_t src, int32_t dst) {
  h_copy_[0] = src;
  h_copy_[1] = dst;
  int32_t* ids = copy_ids_->as<int32_t>();
  be_.upload(ids, h_copy_.data(), 2 * sizeof(int32_t));
  for (int64_t l = 0; l < opt_.n_layers; ++l) {
    kernels::DeltaStateCopyArgs a;
    a.conv_states = opt_.conv_floats > 0 ? conv(l) : nullptr;
    a.delta_states = delta(l);
    a.src = ids;
    a.dst = ids + 1;
    a.n = 1;
    a.conv_slot_floats = opt_.conv_floats;
    a.delta_slot_floats = opt_.delta_floats;
    be_.delta_state_copy(a);
  }
  // The staging word is reused by the next copy: wait for this one (copies happen once per
  // request, between steps).
  (void)be_.sync();
}

Status RecurrentState::acquire(int32_t seq) {
  if (seq < 0) return invalid_argument("recurrent state: bad sequence id");
  if (static_cast<size_t>(seq) >= seq_slot_.size()) {
    seq_slot_.resize(static_cast<size_t>(seq) + 1, -1);
    seq_consumed_.resize(static_cast<size_t>(seq) + 1, 0);
  }
  if (seq_slot_[seq] < 0) {
    if (free_seq_.empty()) {
      return resource_exhausted("recurrent state: all " + std::to_string(opt_.n_seqs) +
                                " sequence slots are in use");
    }
    seq_slot_[seq] = free_seq_.back();
    free_seq_.pop_back();
  }
  seq_consumed_[seq] = 0;
  copy_slot(0, seq_slot_[seq]);
  return ok_status();
}

void RecurrentState::release(int32_t seq) {
  if (seq < 0 || static_cast<size_t>(seq) >= seq_slot_.size() || seq_slot_[seq] < 0) return;
  free_seq_.push_back(seq_slot_[seq]);
  seq_slot_[seq] = -1;
  seq_consumed_[seq] = 0;
  for (size_t i = 0; i < snaps_.size(); ++i) {
    Snapshot& s = snaps_[i];
    if (s.state == Snapshot::State::kPending && s.seq == seq) {
      s = Snapshot{};
      free_snaps_.push_back(static_cast<int64_t>(i));
    }
  }
}

int32_t RecurrentState::slot(int32_t seq) const {
  return seq >= 0 && static_cast<size_t>(seq) < seq_slot_.size() ? seq_slot_[seq] : -1;
}

int64_t RecurrentState::consumed(int32_t seq) const {
  return seq >= 0 && static_cast<size_t>(seq) < seq_consumed_.size() ? seq_consumed_[seq] : 0;
}

void RecurrentState::advance(int32_t seq, int64_t n) {
  if (seq >= 0 && static_cast<size_t>(seq) < seq_consumed_.size()) seq_consumed_[seq] += n;
}

int32_t RecurrentState::take(int32_t seq, int64_t n_blocks) {
  for (size_t i = 0; i < snaps_.size(); ++i) {
    const Snapshot& s = snaps_[i];
    if (s.state == Snapshot::State::kPending && s.seq == seq && s.n_blocks == n_blocks) {
      return snapshot_slot(static_cast<int64_t>(i));
    }
  }
  int64_t i = -1;
  if (!free_snaps_.empty()) {
    i = free_snaps_.back();
    free_snaps_.pop_back();
  } else if (!lru_.empty()) {  // evict the least recently used filed snapshot
    i = lru_.front();
    lru_.pop_front();
    by_hash_.erase(snaps_[static_cast<size_t>(i)].hash);
  } else {
    return -1;
  }
  Snapshot& s = snaps_[static_cast<size_t>(i)];
  s = Snapshot{};
  s.state = Snapshot::State::kPending;
  s.seq = seq;
  s.n_blocks = n_blocks;
  return snapshot_slot(i);
}

void RecurrentState::file(int32_t seq, int64_t n_blocks, uint64_t hash) {
  for (size_t i = 0; i < snaps_.size(); ++i) {
    Snapshot& s = snaps_[i];
    if (s.state != Snapshot::State::kPending || s.seq != seq || s.n_blocks != n_blocks) continue;
    if (by_hash_.count(hash) != 0) {  // the same prefix is already filed: keep that one
      s = Snapshot{};
      free_snaps_.push_back(static_cast<int64_t>(i));
      return;
    }
    s.state = Snapshot::State::kFiled;
    s.seq = -1;
    s.hash = hash;
    s.lru = lru_.insert(lru_.end(), static_cast<int64_t>(i));
    by_hash_[hash] = static_cast<int64_t>(i);
    return;
  }
}

bool RecurrentState::restore(int32_t seq, uint64_t hash, int64_t n_tokens) {
  auto it = by_hash_.find(hash);
  if (it == by_hash_.end() || slot(seq) < 0) return false;
  Snapshot& s = snaps_[static_cast<size_t>(it->second)];
  lru_.splice(lru_.end(), lru_, s.lru);  // most recently used
  copy_slot(snapshot_slot(it->second), slot(seq));
  seq_consumed_[seq] = n_tokens;
  return true;
}

int64_t RecurrentState::n_snapshots_pending() const {
  int64_t n = 0;
  for (const Snapshot& s : snaps_) n += s.state == Snapshot::State::kPending ? 1 : 0;
  return n;
}

int64_t RecurrentState::n_live() const {
  return opt_.n_seqs - static_cast<int64_t>(free_seq_.size());
}

}  // namespace arc
