#include "grammar/token_mask.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <numeric>

namespace arc::grammar {

namespace {

constexpr size_t kMaxWalkStates = 16384;

void set_bit(TokenMask& m, int32_t id) {
  m[static_cast<size_t>(id) >> 6] |= uint64_t{1} << (id & 63);
}

}  // namespace

// ---- TokenVocab ------------------------------------------------------------------------------

TokenVocab::TokenVocab(std::vector<std::string> bytes, const std::vector<bool>& usable,
                       std::vector<int32_t> stops)
    : bytes_(std::move(bytes)), stops_(std::move(stops)) {
  for (size_t i = 0; i < bytes_.size(); ++i) {
    // An empty token could be drawn forever without moving the document on.
    if (i < usable.size() && usable[i] && !bytes_[i].empty()) {
      sorted_.push_back(static_cast<int32_t>(i));
    }
  }
  std::sort(sorted_.begin(), sorted_.end(),
            [&](int32_t a, int32_t b) { return bytes_[a] < bytes_[b]; });
  lcp_.assign(sorted_.size(), 0);
  for (size_t i = 1; i < sorted_.size(); ++i) {
    const std::string& a = bytes_[static_cast<size_t>(sorted_[i - 1])];
    const std::string& b = bytes_[static_cast<size_t>(sorted_[i])];
    size_t n = 0;
    while (n < a.size() && n < b.size() && n < 0xFFFF && a[n] == b[n]) ++n;
    lcp_[i] = static_cast<uint16_t>(n);
  }
  std::erase_if(stops_, [&](int32_t id) { return id < 0 || id >= n_vocab(); });
}

// ---- TokenMasker -----------------------------------------------------------------------------

size_t TokenMasker::ContextHash::operator()(const Context& c) const {
  uint64_t h = 0x9E3779B97F4A7C15ull;
  for (int32_t p : c.pos) h = (h ^ static_cast<uint32_t>(p)) * 0x100000001B3ull;
  for (int32_t f : c.frames) h = (h ^ static_cast<uint32_t>(f)) * 0x100000001B3ull;
  return static_cast<size_t>(h ^ (c.open ? 0x5bd1e995u : 0u));
}

TokenMasker::TokenMasker(std::shared_ptr<const Grammar> grammar,
                         std::shared_ptr<const TokenVocab> vocab)
    : grammar_(std::move(grammar)), vocab_(std::move(vocab)), pda_(grammar_), dfa_(pda_) {}

size_t TokenMasker::n_contexts() const {
  std::lock_guard<std::mutex> lock(mu_);
  return cache_.size();
}

TokenMasker::Context TokenMasker::context_of(Pda& pda, const Head* begin, const Head* end,
                                             int32_t& below) const {
  Context c;
  for (const Head* h = begin; h != end; ++h) c.pos.push_back(h->pos);
  std::sort(c.pos.begin(), c.pos.end());
  int32_t f = begin->frame;
  for (int i = 0; i < kContextFrames; ++i) {
    if (f < 0) {
      c.frames[i] = kRootFrame;
      continue;
    }
    c.frames[i] = pda.frame_at(f).pos;
    f = pda.frame_at(f).parent;
  }
  c.open = f >= 0;
  below = f;
  return c;
}

const TokenMasker::Entry& TokenMasker::entry(const Context& c) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = cache_.find(c);
  if (it == cache_.end()) {
    it = cache_.emplace(c, std::make_unique<Entry>(compute(c))).first;
  }
  return *it->second;
}

TokenMasker::Entry TokenMasker::compute(const Context& c) {
  // The DFA only serves walks inside compute(): start again rather than grow without end (1 KiB
  // of transitions a state).
  if (dfa_.n_states() > kMaxWalkStates) dfa_.clear();
  // The context's stack in this masker's own automaton, ending in the unknown rest.
  int32_t f = c.open ? kOpenFrame : kRootFrame;
  for (int i = kContextFrames - 1; i >= 0; --i) {
    if (c.frames[i] != kRootFrame) f = pda_.frame(c.frames[i], f);
  }
  std::vector<Head> heads;
  for (int32_t p : c.pos) heads.push_back({p, f});
  const int32_t start = dfa_.intern(std::move(heads), 0);

  const TokenVocab& v = *vocab_;
  const std::vector<int32_t>& sorted = v.sorted();
  const std::vector<uint16_t>& lcp = v.lcp();
  std::vector<int32_t>& st = depth_states_;  // [depth] state after that many bytes
  Entry e;
  std::vector<std::pair<std::string_view, int32_t>> leftovers;
  size_t valid = 0;             // depths of st that hold the previous token's path
  size_t dead_from = SIZE_MAX;  // first dead depth on that path
  bool opened_before_dead = false;
  st.assign(1, start);
  for (size_t i = 0; i < sorted.size(); ++i) {
    const int32_t id = sorted[i];
    const std::string_view tok = v.bytes(id);
    size_t d = i == 0 ? 0 : std::min<size_t>(lcp[i], valid);
    // Shares a dead prefix with the previous token, and nothing left the context before it:
    // rejected without a look.
    if (i > 0 && lcp[i] >= dead_from && !opened_before_dead) continue;
    if (st.size() < tok.size() + 1) st.resize(tok.size() + 1);
    for (; d < tok.size(); ++d) {
      st[d + 1] =
          st[d] == LazyDfa::kDead ? LazyDfa::kDead : dfa_.next(st[d], static_cast<uint8_t>(tok[d]));
    }
    valid = tok.size();
    dead_from = SIZE_MAX;
    opened_before_dead = false;
    for (size_t k = 1; k <= tok.size(); ++k) {
      if (st[k] == LazyDfa::kDead) {
        dead_from = k;
        break;
      }
      if (k < tok.size() && (dfa_.reached(st[k]) & kReachedOpen) != 0) opened_before_dead = true;
    }
    if (st[tok.size()] != LazyDfa::kDead) {
      e.accepted.push_back(id);
      continue;
    }
    for (size_t k = 1; k < tok.size() && st[k] != LazyDfa::kDead; ++k) {
      if ((dfa_.reached(st[k]) & kReachedOpen) != 0) leftovers.emplace_back(tok.substr(k), id);
    }
  }
  const int64_t n = v.n_vocab();
  if (static_cast<int64_t>(e.accepted.size()) > n / 64) {
    e.bits.assign(static_cast<size_t>((n + 63) / 64), 0);
    for (int32_t id : e.accepted) set_bit(e.bits, id);
    e.accepted.clear();
    e.accepted.shrink_to_fit();
  }
  std::sort(leftovers.begin(), leftovers.end());
  for (size_t i = 0; i < leftovers.size(); ++i) {
    if (i == 0 || leftovers[i].first != leftovers[i - 1].first) {
      const std::string_view cur = leftovers[i].first;
      uint16_t shared = 0;
      if (!e.leftovers.empty()) {
        const std::string& prev = e.leftovers.back();
        while (shared < prev.size() && shared < cur.size() && shared < 0xFFFF &&
               prev[shared] == cur[shared]) {
          ++shared;
        }
      }
      e.leftovers.emplace_back(cur);
      e.leftover_lcp.push_back(shared);
      e.leftover_tokens_begin.push_back(static_cast<uint32_t>(e.leftover_tokens.size()));
    }
    e.leftover_tokens.push_back(leftovers[i].second);
  }
  e.leftover_tokens_begin.push_back(static_cast<uint32_t>(e.leftover_tokens.size()));
  return e;
}

void TokenMasker::fill(Matcher& m, TokenMask& mask) {
  const TokenVocab& v = *vocab_;
  mask.assign(static_cast<size_t>((v.n_vocab() + 63) / 64), 0);
  // A copy (walks below add states to the matcher's DFA, which may move its storage), grouped
  // by stack.
  std::vector<Head> heads = m.heads();
  std::sort(heads.begin(), heads.end(), [](const Head& a, const Head& b) {
    return a.frame != b.frame ? a.frame < b.frame : a.pos < b.pos;
  });
  std::vector<int32_t> st;
  std::vector<Head> resumed;
  for (size_t g = 0, g_end = 0; g < heads.size(); g = g_end) {
    g_end = g + 1;
    while (g_end < heads.size() && heads[g_end].frame == heads[g].frame) ++g_end;
    int32_t below = -1;
    const Context c = context_of(m.pda(), heads.data() + g, heads.data() + g_end, below);
    const Entry& e = entry(c);
    if (!e.bits.empty()) {
      for (size_t w = 0; w < mask.size(); ++w) mask[w] |= e.bits[w];
    } else {
      for (int32_t id : e.accepted) set_bit(mask, id);
    }
    if (e.leftovers.empty() || !c.open) continue;
    // Leaving the context returns into the real frame below it.
    uint8_t reached = 0;
    m.pda().resume(below, resumed, reached);
    st.assign(1, m.dfa().intern(resumed, reached));
    size_t valid = 0;
    size_t dead_from = SIZE_MAX;
    for (size_t j = 0; j < e.leftovers.size(); ++j) {
      const std::string& tok = e.leftovers[j];
      if (j > 0 && e.leftover_lcp[j] >= dead_from) continue;  // a dead prefix
      size_t d = j == 0 ? 0 : std::min<size_t>(e.leftover_lcp[j], valid);
      if (st.size() < tok.size() + 1) st.resize(tok.size() + 1);
      dead_from = SIZE_MAX;
      for (size_t k = 1; k <= d; ++k) {
        if (st[k] == LazyDfa::kDead) {
          dead_from = k;
          break;
        }
      }
      for (; d < tok.size() && dead_from == SIZE_MAX; ++d) {
        st[d + 1] = m.dfa().next(st[d], static_cast<uint8_t>(tok[d]));
        if (st[d + 1] == LazyDfa::kDead) dead_from = d + 1;
      }
      valid = d;
      if (dead_from != SIZE_MAX) continue;
      for (uint32_t k = e.leftover_tokens_begin[j]; k < e.leftover_tokens_begin[j + 1]; ++k) {
        set_bit(mask, e.leftover_tokens[k]);
      }
    }
  }
  if (m.complete()) {
    for (int32_t id : v.stops()) set_bit(mask, id);
  }
}

void apply_mask(const TokenMask& mask, int64_t n_mask_vocab, std::span<float> logits) {
  const int64_t n = static_cast<int64_t>(logits.size());
  const int64_t covered = std::min(n, n_mask_vocab);
  const int64_t words = (covered + 63) / 64;
  int64_t n_allowed = 0;
  for (int64_t w = 0; w < words; ++w) n_allowed += std::popcount(mask[static_cast<size_t>(w)]);
  if (n_allowed < covered / 2) {
    // Few allowed (a number, a key, a literal): keep them aside, fill the row, put them back.
    thread_local std::vector<std::pair<int64_t, float>> keep;
    keep.clear();
    for (int64_t w = 0; w < words; ++w) {
      uint64_t on = mask[static_cast<size_t>(w)];
      while (on != 0) {
        const int64_t i = w * 64 + std::countr_zero(on);
        on &= on - 1;
        if (i < covered) keep.emplace_back(i, logits[static_cast<size_t>(i)]);
      }
    }
    std::fill(logits.begin(), logits.end(), -INFINITY);
    for (const auto& [i, x] : keep) logits[static_cast<size_t>(i)] = x;
    return;
  }
  for (int64_t w = 0; w < words; ++w) {
    uint64_t off = ~mask[static_cast<size_t>(w)];
    while (off != 0) {
      const int64_t i = w * 64 + std::countr_zero(off);
      off &= off - 1;
      if (i < covered) logits[static_cast<size_t>(i)] = -INFINITY;
    }
  }
  for (int64_t i = covered; i < n; ++i) logits[static_cast<size_t>(i)] = -INFINITY;
}

}  // namespace arc::grammar
