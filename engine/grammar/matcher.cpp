#include "grammar/matcher.h"

#include <algorithm>
#include <cstring>

namespace arc::grammar {

namespace {

uint64_t frame_key(int32_t pos, int32_t parent) {
  return (uint64_t{static_cast<uint32_t>(pos)} << 32) | static_cast<uint32_t>(parent);
}

// Past this many states a matcher's DFA starts again (memory: 1 KiB of transitions a state).
constexpr size_t kMaxMatcherStates = 4096;

}  // namespace

Pda::Pda(std::shared_ptr<const Grammar> g) : g_(std::move(g)) {}

int32_t Pda::frame(int32_t pos, int32_t parent) {
  const auto [it, added] = index_.try_emplace(frame_key(pos, parent), 0);
  if (added) {
    it->second = static_cast<int32_t>(frames_.size());
    frames_.push_back({pos, parent});
  }
  return it->second;
}

void Pda::expand(int32_t pos, int32_t frame_id, std::vector<Head>& out, uint8_t& reached) {
  work_.clear();
  visited_.clear();
  work_.push_back({pos, frame_id});
  const std::vector<Element>& el = g_->elements;
  while (!work_.empty()) {
    const Head h = work_.back();
    work_.pop_back();
    const Element& e = el[static_cast<size_t>(h.pos)];
    if (e.kind == ElemKind::kBytes) {
      if (std::find(out.begin(), out.end(), h) == out.end()) out.push_back(h);
      continue;
    }
    // A rule reference or an end seen twice in one expansion with the same stack adds nothing
    // (and would loop if a rule could derive the empty string through itself).
    if (std::find(visited_.begin(), visited_.end(), h) != visited_.end()) continue;
    visited_.push_back(h);
    if (e.kind == ElemKind::kRule) {
      // Tail call: returning to an end would pop at once, so the callee returns to our caller.
      const bool tail = el[static_cast<size_t>(h.pos) + 1].kind == ElemKind::kEnd;
      const int32_t f = tail ? h.frame : frame(h.pos + 1, h.frame);
      const std::vector<int32_t>& alts = g_->alts[static_cast<size_t>(e.arg)];
      // Reverse, so that heads come out in the order of the alternatives.
      for (auto it = alts.rbegin(); it != alts.rend(); ++it) work_.push_back({*it, f});
    } else if (h.frame == kRootFrame) {
      reached |= kReachedRoot;
    } else if (h.frame == kOpenFrame) {
      reached |= kReachedOpen;
    } else {
      const Frame f = frames_[static_cast<size_t>(h.frame)];
      work_.push_back({f.pos, f.parent});
    }
  }
}

void Pda::start(std::vector<Head>& out, uint8_t& reached) {
  out.clear();
  reached = 0;
  for (int32_t a : g_->alts[static_cast<size_t>(g_->root)]) expand(a, kRootFrame, out, reached);
}

void Pda::resume(int32_t frame_id, std::vector<Head>& out, uint8_t& reached) {
  out.clear();
  reached = 0;
  const Frame f = frames_[static_cast<size_t>(frame_id)];
  expand(f.pos, f.parent, out, reached);
}

void Pda::step(const std::vector<Head>& in, uint8_t b, std::vector<Head>& out, uint8_t& reached) {
  out.clear();
  reached = 0;
  const std::vector<Element>& el = g_->elements;
  for (const Head& h : in) {
    if (g_->sets[static_cast<size_t>(el[static_cast<size_t>(h.pos)].arg)].has(b)) {
      expand(h.pos + 1, h.frame, out, reached);
    }
  }
}

// ---- LazyDfa ---------------------------------------------------------------------------------

LazyDfa::LazyDfa(Pda& pda) : pda_(pda) {
  clear();
}

void LazyDfa::clear() {
  states_.clear();
  trans_.clear();
  index_.clear();
  states_.push_back({});
  trans_.assign(256, kDead);  // the dead state stays dead
  index_.emplace(std::string(1, '\0'), kDead);
}

int32_t LazyDfa::intern(std::vector<Head> heads, uint8_t reached) {
  std::sort(heads.begin(), heads.end(), [](const Head& a, const Head& b) {
    return a.pos != b.pos ? a.pos < b.pos : a.frame < b.frame;
  });
  std::string key(1 + heads.size() * sizeof(Head), '\0');
  key[0] = static_cast<char>(reached);
  if (!heads.empty()) std::memcpy(key.data() + 1, heads.data(), heads.size() * sizeof(Head));
  const auto [it, added] = index_.try_emplace(std::move(key), 0);
  if (added) {
    it->second = static_cast<int32_t>(states_.size());
    ByteSet first;
    for (const Head& h : heads) {
      const ByteSet& c =
          pda_.grammar()
              .sets[static_cast<size_t>(pda_.grammar().elements[static_cast<size_t>(h.pos)].arg)];
      for (int i = 0; i < 4; ++i) first.w[i] |= c.w[i];
    }
    states_.push_back({std::move(heads), reached, first});
    trans_.resize(trans_.size() + 256, -1);
  }
  return it->second;
}

int32_t LazyDfa::compute(int32_t state, uint8_t b) {
  if (!states_[static_cast<size_t>(state)].first.has(b)) return kDead;
  uint8_t reached = 0;
  pda_.step(states_[static_cast<size_t>(state)].heads, b, scratch_, reached);
  return intern(scratch_, reached);
}

// ---- Matcher ---------------------------------------------------------------------------------

Matcher::Matcher(std::shared_ptr<const Grammar> g) : pda_(std::move(g)), dfa_(pda_) {
  std::vector<Head> heads;
  uint8_t reached = 0;
  pda_.start(heads, reached);
  state_ = dfa_.intern(std::move(heads), reached);
}

bool Matcher::advance(std::string_view bytes) {
  if (dfa_.n_states() > kMaxMatcherStates) {
    std::vector<Head> heads = dfa_.heads(state_);
    const uint8_t reached = dfa_.reached(state_);
    dfa_.clear();
    state_ = dfa_.intern(std::move(heads), reached);
  }
  int32_t s = state_;
  for (char c : bytes) {
    s = dfa_.next(s, static_cast<uint8_t>(c));
    if (s == LazyDfa::kDead) return false;
  }
  state_ = s;
  return true;
}

bool Matcher::accepts(std::string_view bytes) {
  int32_t s = state_;
  for (char c : bytes) {
    s = dfa_.next(s, static_cast<uint8_t>(c));
    if (s == LazyDfa::kDead) return false;
  }
  return true;
}

}  // namespace arc::grammar
