// Speculative decoding: who proposes the tokens a step verifies.
//
// A drafter proposes up to k tokens that may follow a sequence; the scheduler runs the last
// token and the k drafts in one forward (k + 1 logit rows) and keeps the drafts the target
// model itself would have produced (sched/speculation.h). Every drafter here is deterministic
// given the sequence: its proposal is a point mass q = δ(draft), so speculative sampling's
// rule (accept with min(1, p/q), else draw from the normalised residual max(0, p - q)) is the
// same as drawing t ~ p from the row and accepting iff t equals the draft. That keeps the output
// distribution the target's, and greedy output identical, whatever the drafter proposes.
#pragma once

#include <cstdint>
#include <memory>
#include <random>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "arc/status.h"

namespace arc {

// What `--spec` chose. kScripted is a test and benchmark drafter (it proposes a known
// continuation with a chosen error rate) and is not offered by serve.
enum class SpecKind { kNone, kNgram, kDraftModel, kMtp, kScripted };

struct SpecOptions {
  SpecKind kind = SpecKind::kNone;
  std::string draft_path;  // kDraftModel: the draft GGUF
  double error_rate = 0;   // kScripted: chance that a drafted token is wrong
  // Most tokens drafted per step; 0: the adaptive default (up to kDefaultMaxK, backing off
  // while drafts are rejected).
  int k = 0;
  static constexpr int kDefaultMaxK = 4;
  static constexpr int kMaxK = 16;
  int max_k() const { return k > 0 ? k : kDefaultMaxK; }
  bool adaptive() const { return k == 0; }
  bool enabled() const { return kind != SpecKind::kNone; }
};

// "none", "ngram", "draft:PATH", "mtp", "scripted:RATE" (RATE in [0, 1]: the error rate).
Result<SpecOptions> parse_spec(const std::string& text, int k);
// The name /engine/status and /v1/models show: "none", "ngram", "draft", "mtp", "scripted".
const char* spec_kind_name(SpecKind kind);

// The proposals for one sequence. Not thread-safe: the scheduler's loop owns it.
class SequenceDrafter {
 public:
  virtual ~SequenceDrafter() = default;
  // tokens: [n] the sequence so far (prompt then output). Appends at most `k` proposals for
  // positions n, n + 1, ... to `out`.
  virtual void propose(std::span<const int32_t> tokens, int k, std::vector<int32_t>& out) = 0;

  // Drafters that read the target model's hidden states (mtp) say so; the scheduler then hands
  // them, after each step, the final hidden state (before the output norm) of every position
  // whose K/V the step confirmed: prompt chunks, the last token and the accepted drafts.
  virtual bool wants_hidden() const { return false; }
  // Prefix reuse: how many leading positions of `tokens` the drafter's own state covers when the
  // sequence is admitted (again, after a preemption). The target reuses no longer a cached
  // prefix, so a drafter never needs hidden states of positions the target skipped. Drafters
  // without such state: all of them.
  virtual int64_t reusable_prefix(std::span<const int32_t> tokens) {
    return static_cast<int64_t>(tokens.size());
  }
  // tokens: [n] the sequence so far; rows: [m, n_embd] of positions [first, first + m).
  virtual void observe_hidden(std::span<const int32_t> /*tokens*/, int64_t /*first*/,
                              std::span<const float> /*rows*/) {}
};

// One sequence's share of a step's drafting (Drafter::propose_all): as SequenceDrafter::propose.
struct DraftRequest {
  SequenceDrafter* seq = nullptr;   // started by the drafter it is handed to
  std::span<const int32_t> tokens;  // [n] the sequence so far
  int k = 0;                        // at most k proposals
  std::vector<int32_t>* out = nullptr;
};

class Drafter {
 public:
  virtual ~Drafter() = default;
  // A drafter for a new sequence whose prompt is `prompt`.
  virtual std::unique_ptr<SequenceDrafter> start(std::span<const int32_t> prompt) = 0;
  // The drafts of every sequence of a step. By default each sequence proposes on its own; a
  // drafter that runs a model batches them into one forward per draft position
  // (draft_model.h), as the target batches its sequences.
  virtual void propose_all(std::span<const DraftRequest> reqs) {
    for (const DraftRequest& r : reqs) r.seq->propose(r.tokens, r.k, *r.out);
  }
};

// Prompt lookup: the sequence's latest n-gram (n from max_n down to min_n) is looked up in its
// own earlier tokens, and what followed its most recent earlier occurrence is proposed. No
// model: strong where output repeats its input (code edits, JSON, tool calls).
class NgramDrafter final : public Drafter {
 public:
  explicit NgramDrafter(int min_n = 2, int max_n = 4) : min_n_(min_n), max_n_(max_n) {}
  std::unique_ptr<SequenceDrafter> start(std::span<const int32_t> prompt) override;

 private:
  int min_n_, max_n_;
};

// Test and benchmark drafter: proposes `continuation` (the tokens the target is known to
// produce after `prompt`, e.g. from a greedy run), each drafted token replaced by a wrong one
// with probability error_rate (a generator seeded per sequence, so runs repeat).
class ScriptedDrafter final : public Drafter {
 public:
  ScriptedDrafter(std::vector<int32_t> continuation, double error_rate, int64_t n_vocab,
                  uint64_t seed = 1)
      : continuation_(std::move(continuation)),
        error_rate_(error_rate),
        n_vocab_(n_vocab),
        seed_(seed) {}
  std::unique_ptr<SequenceDrafter> start(std::span<const int32_t> prompt) override;

 private:
  std::vector<int32_t> continuation_;
  double error_rate_;
  int64_t n_vocab_;
  uint64_t seed_;
};

// How many tokens to draft next, from how the last drafts fared. Starts at the maximum; a step
// whose drafts were all rejected halves k, one whose drafts were all accepted raises it by one.
// At zero the sequence drafts nothing for a few steps, then probes with one token again, so a
// drafter that never hits costs a verify of two tokens only now and then.
class AdaptiveK {
 public:
  explicit AdaptiveK(int max_k = SpecOptions::kDefaultMaxK, bool adaptive = true)
      : max_k_(max_k), adaptive_(adaptive), k_(max_k) {}
  int next();  // the k for this step (0: do not draft)
  void record(int drafted, int accepted);

 private:
  int max_k_;
  bool adaptive_;
  int k_;
  int idle_ = 0;     // steps left without drafting
  int backoff_ = 4;  // the next idle stretch (doubles while probes fail, up to 32)
};

}  // namespace arc
