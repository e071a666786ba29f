#include "sched/drafter.h"

#include <algorithm>
#include <charconv>

namespace arc {

Result<SpecOptions> parse_spec(const std::string& text, int k) {
  SpecOptions o;
  if (k < 0 || k > SpecOptions::kMaxK) {
    return invalid_argument("--spec-k must be between 0 (adaptive) and " +
                            std::to_string(SpecOptions::kMaxK) + ", not " + std::to_string(k));
  }
  o.k = k;
  if (text.empty() || text == "none" || text == "off") return o;
  if (text == "ngram") {
    o.kind = SpecKind::kNgram;
  } else if (text == "mtp") {
    o.kind = SpecKind::kMtp;
  } else if (text.rfind("draft:", 0) == 0 && text.size() > 6) {
    o.kind = SpecKind::kDraftModel;
    o.draft_path = text.substr(6);
  } else if (text.rfind("scripted:", 0) == 0) {
    const std::string rate = text.substr(9);
    double r = -1;
    const auto [end, ec] = std::from_chars(rate.data(), rate.data() + rate.size(), r);
    if (ec != std::errc{} || end != rate.data() + rate.size() || r < 0 || r > 1) {
      return invalid_argument("--spec scripted:RATE needs an error rate between 0 and 1, not '" +
                              rate + "'");
    }
    o.kind = SpecKind::kScripted;
    o.error_rate = r;
  } else {
    return invalid_argument("unknown --spec '" + text +
                            "'; use none, ngram, draft:PATH (a small GGUF with the same "
                            "vocabulary) or mtp");
  }
  return o;
}

const char* spec_kind_name(SpecKind kind) {
  switch (kind) {
    case SpecKind::kNone:
      return "none";
    case SpecKind::kNgram:
      return "ngram";
    case SpecKind::kDraftModel:
      return "draft";
    case SpecKind::kMtp:
      return "mtp";
    case SpecKind::kScripted:
      return "scripted";
  }
  return "none";
}

namespace {

uint64_t hash_tokens(std::span<const int32_t> t) {
  uint64_t h = 0x9e3779b97f4a7c15ull ^ t.size();
  for (int32_t x : t) {
    h ^= static_cast<uint32_t>(x);
    h *= 0x100000001b3ull;
    h ^= h >> 29;
  }
  return h;
}

class NgramSequence final : public SequenceDrafter {
 public:
  NgramSequence(int min_n, int max_n) : min_n_(min_n), max_n_(max_n), by_n_(max_n + 1) {}

  void propose(std::span<const int32_t> tokens, int k, std::vector<int32_t>& out) override {
    const int64_t len = static_cast<int64_t>(tokens.size());
    // Index every n-gram that has a following token: tokens[e - n, e) -> e, the latest e wins.
    for (int64_t e = indexed_; e < len; ++e) {
      for (int n = min_n_; n <= max_n_; ++n) {
        if (e < n) continue;
        by_n_[n][hash_tokens(tokens.subspan(e - n, n))] = e;
      }
    }
    indexed_ = std::max<int64_t>(indexed_, len);
    if (k <= 0) return;
    // The current suffix must not find itself: its own entry (e == len) is never indexed, as
    // len has no following token yet. Longer n-grams first: they predict better.
    for (int n = max_n_; n >= min_n_; --n) {
      if (len <= n) continue;
      const auto suffix = tokens.subspan(len - n, n);
      const auto it = by_n_[n].find(hash_tokens(suffix));
      if (it == by_n_[n].end()) continue;
      const int64_t e = it->second;
      if (!std::equal(suffix.begin(), suffix.end(), tokens.begin() + (e - n))) continue;
      // What followed; where it runs into the present, the continuation repeats with the period
      // len - e (a loop keeps looping).
      const int64_t period = len - e;
      for (int i = 0; i < k; ++i) out.push_back(tokens[e + i % period]);
      return;
    }
  }

 private:
  int min_n_, max_n_;
  std::vector<std::unordered_map<uint64_t, int64_t>> by_n_;  // [n] n-gram hash -> end
  int64_t indexed_ = 0;                                      // ends indexed so far
};

class ScriptedSequence final : public SequenceDrafter {
 public:
  ScriptedSequence(const std::vector<int32_t>& continuation, int64_t n_prompt, double error_rate,
                   int64_t n_vocab, uint64_t seed)
      : continuation_(continuation),
        n_prompt_(n_prompt),
        error_rate_(error_rate),
        n_vocab_(n_vocab),
        rng_(seed) {}

  void propose(std::span<const int32_t> tokens, int k, std::vector<int32_t>& out) override {
    std::uniform_real_distribution<double> u(0.0, 1.0);
    for (int i = 0; i < k; ++i) {
      const int64_t at = static_cast<int64_t>(tokens.size()) - n_prompt_ + i;
      if (at < 0 || at >= static_cast<int64_t>(continuation_.size())) return;
      int32_t t = continuation_[static_cast<size_t>(at)];
      if (error_rate_ > 0 && u(rng_) < error_rate_) {
        t = static_cast<int32_t>((t + 1) % n_vocab_);  // any other token: rejected
      }
      out.push_back(t);
    }
  }

 private:
  const std::vector<int32_t>& continuation_;
  int64_t n_prompt_;
  double error_rate_;
  int64_t n_vocab_;
  std::mt19937_64 rng_;
};

}  // namespace

std::unique_ptr<SequenceDrafter> NgramDrafter::start(std::span<const int32_t>) {
  return std::make_unique<NgramSequence>(min_n_, max_n_);
}

std::unique_ptr<SequenceDrafter> ScriptedDrafter::start(std::span<const int32_t> prompt) {
  return std::make_unique<ScriptedSequence>(continuation_, static_cast<int64_t>(prompt.size()),
                                            error_rate_, n_vocab_, seed_);
}

int AdaptiveK::next() {
  if (!adaptive_) return max_k_;
  if (idle_ > 0) {
    --idle_;
    return 0;
  }
  return std::max(k_, 1);
}

void AdaptiveK::record(int drafted, int accepted) {
  if (!adaptive_ || drafted <= 0) return;
  if (accepted == drafted) {
    k_ = std::min(max_k_, k_ + 1);
    backoff_ = 4;
  } else if (accepted == 0) {
    if (k_ <= 1) {
      // A probe of one token missed: stop drafting for a while, longer each time.
      idle_ = backoff_;
      backoff_ = std::min(32, backoff_ * 2);
      k_ = 1;
    } else {
      k_ = std::max(1, k_ / 2);
    }
  } else {
    // Partly accepted: draft one more than what was kept.
    k_ = std::clamp(accepted + 1, 1, max_k_);
    backoff_ = 4;
  }
}

}  // namespace arc
