// Continuous batching. Requests wait in a queue; every step the scheduler builds one flattened
// batch under a token budget: one token for each decoding sequence, then prefill chunks of the
// sequences still reading their prompt, then newly admitted requests (whose cached prefix
// blocks are reused). When KV blocks run out it preempts the youngest running sequence by
// recompute. Generated tokens go to each request's handle; the HTTP thread turns them into text.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "arc/forward.h"
#include "arc/kv_cache.h"
#include "arc/service.h"
#include "grammar/token_mask.h"
#include "sched/drafter.h"
#include "sched/sampler.h"

namespace arc {

using Clock = std::chrono::steady_clock;

struct SchedulerOptions {
  int64_t max_batch_tokens = 512;  // tokens per step: decodes plus prefill chunks
  int max_running = 64;            // sequences decoding at once
  int64_t ctx_size = 4096;         // longest sequence (prompt + output)
  // Runs one step instead of the executor when set: tensor parallelism (TpDriver::step sends
  // the batch and its block tables to the other ranks first). Logits: [n_rows, n_vocab].
  std::function<Result<std::vector<float>>(const ForwardBatch&)> forward;
  // Speculative decoding (sched/drafter.h): each decoding sequence without a grammar drafts up
  // to spec.max_k() tokens per step, verified in the same forward. Null: none.
  std::shared_ptr<Drafter> drafter;
  SpecOptions spec;
};

struct SequenceRequest {
  std::vector<int32_t> prompt;
  SamplingParams sampling;
  std::vector<int32_t> stop_tokens;  // end-of-generation ids (EOS, <|im_end|>, ...)
  // Structured output: every sampled token must continue the grammar's document (null: free).
  std::shared_ptr<grammar::TokenMasker> masker;
  int64_t max_new_tokens = 256;
  // Reasoning budget (sched/reasoning_budget.h): after this many tokens inside the reasoning
  // block the prompt opened, the engine writes reasoning_close. -1: none.
  int64_t reasoning_budget = -1;
  std::vector<int32_t> reasoning_close;  // "\n</think>\n\n"
  std::vector<int32_t> reasoning_tag;    // "</think>": the model closed it itself
  bool prompt_logprobs = false;          // report the logprob of every prompt token (echo)
  int top_logprobs = -1;                 // -1: none

  // Images (engine/sched/image_inputs.h); all empty for text.
  std::vector<int32_t> rope_positions;             // [3, prompt size] multi-axis rotary positions
  int64_t rope_next = 0;                           // rotary position of the first generated token
  std::vector<int32_t> embd_rows;                  // [prompt size] row of embd, or -1
  std::shared_ptr<const std::vector<float>> embd;  // [rows, embd_width]
  int64_t embd_width = 0;                          // (1 + n_deepstack) * n_embd
  // Prefix-cache identity of the prompt tokens (image tokens by content hash); empty: the
  // tokens themselves.
  std::vector<int32_t> cache_keys;
  bool has_images() const { return !rope_positions.empty(); }
};

// One scheduler output: a generated token (or, with prompt_logprobs, a prompt token's score).
struct TokenOutput {
  int32_t token = 0;
  float logprob = 0.0f;
  std::vector<TokenScore> top;
  bool is_prompt = false;
  bool finished = false;
  std::string finish_reason;  // with finished: stop | length | cancelled | error
  // finished with "stop" because the grammar's document is complete: the token is text (an
  // end-of-generation token ends with "stop" too, and shows nothing).
  bool keeps_text = false;
  Status error;
};

// Shared between the scheduler (producer) and the request's consumer.
class RequestHandle {
 public:
  // Waits up to `timeout` for outputs; appends them to `out`. False once finished and drained.
  bool next(std::vector<TokenOutput>& out, std::chrono::milliseconds timeout);
  // Asks the scheduler to stop this request and free its blocks (thread-safe, idempotent).
  void cancel() { cancelled_.store(true); }
  bool cancelled() const { return cancelled_.load(); }

  // Filled in by the scheduler.
  struct Timing {
    Clock::time_point arrival;
    Clock::time_point admitted;     // first scheduled
    Clock::time_point first_token;  // first generated token sampled
    Clock::time_point finished;
    int64_t prompt_tokens = 0;
    int64_t cached_tokens = 0;  // prompt tokens whose K/V came from the prefix cache
    int64_t generated = 0;
    int preemptions = 0;
    int64_t draft_tokens = 0;     // tokens proposed by the drafter and verified
    int64_t accepted_tokens = 0;  // of those, the ones the model produced itself
  };
  Timing timing() const;

 private:
  friend class Scheduler;
  void push(TokenOutput o);
  std::atomic<bool> cancelled_{false};
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<TokenOutput> queue_;
  bool done_ = false;
  Timing timing_;
};

struct SchedulerStats {
  int running = 0;
  int waiting = 0;
  int32_t kv_blocks_total = 0;
  int32_t kv_blocks_used = 0;
  int32_t kv_blocks_cached = 0;
  // The windowed pool of sliding-window layers (gpt-oss), all 0 without one.
  int32_t kv_window_blocks_total = 0;
  int32_t kv_window_blocks_used = 0;
  int32_t kv_window_blocks_cached = 0;
  // Hybrid models (qwen3next): recurrent state slots of running sequences, and prefix-cache
  // snapshots of the state (filed under a block hash, or taken this step and not yet filed), all
  // 0 otherwise.
  int32_t state_slots_total = 0;
  int32_t state_slots_used = 0;
  int32_t state_snapshots_total = 0;
  int32_t state_snapshots_filed = 0;
  int32_t state_snapshots_pending = 0;
  uint64_t prompt_tokens = 0;      // scheduled prompt tokens, all time
  uint64_t prefix_hit_tokens = 0;  // of those, served from the prefix cache
  uint64_t generated_tokens = 0;
  uint64_t steps = 0;
  uint64_t preemptions = 0;
  uint64_t draft_tokens = 0;  // speculative decoding: drafted and verified, all time
  uint64_t accepted_tokens = 0;
  uint64_t verify_steps = 0;  // sequence-steps that verified at least one draft
};

class Scheduler {
 public:
  Scheduler(ForwardExecutor& exec, KvCache& kv, int64_t n_vocab, SchedulerOptions options);
  ~Scheduler();  // fails what is still queued or running (finish_reason "error") and joins
  Scheduler(const Scheduler&) = delete;
  Scheduler& operator=(const Scheduler&) = delete;

  std::shared_ptr<RequestHandle> submit(SequenceRequest request);
  SchedulerStats stats() const;
  const SchedulerOptions& options() const { return opt_; }

 private:
  struct Sequence;
  struct RowRef {
    Sequence* s;
    int64_t position;  // position of the token whose logits this row holds
    int verify = -1;   // with drafts: i, the row that decides the token after draft i - 1
  };
  void loop();
  // The token masks of the constrained sequences among `rows` (computed while a step runs).
  void fill_masks(const std::vector<RowRef>& rows);
  // Runs one step; `out`: per logit row its sampling candidates or its whole row.
  Status run_step(const ForwardBatch& batch, const std::vector<RowRef>& rows, StepCandidates& out);
  bool step();  // false when idle
  // Speculative decoding: how many tokens `s` may draft this step (at most `budget`).
  int64_t draft_k(Sequence& s, int64_t budget);
  // Fills each decoding entry's s.draft (all sequences at once: Drafter::propose_all), reserves
  // KV for the drafts and grows the entries by them; `budget` gets back what was not drafted.
  template <typename Entries>
  void plan_drafts(Entries& entries, const std::vector<int64_t>& ks, int64_t& budget);
  // Drafters that read hidden states (mtp): the target's of the positions each entry confirmed.
  // entry_at: [entries] the batch index of each entry's first token.
  template <typename Entries>
  void feed_hidden(const Entries& entries, const std::vector<int64_t>& entry_at);
  void finish(Sequence& s, std::string reason, Status error = {});
  void preempt(Sequence& s);

  ForwardExecutor& exec_;
  KvCache& kv_;
  int64_t n_vocab_;
  SchedulerOptions opt_;

  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  std::deque<std::unique_ptr<Sequence>> incoming_;  // submitted, not yet seen by the loop
  SchedulerStats stats_;

  // Owned by the loop thread.
  std::deque<std::unique_ptr<Sequence>> waiting_;
  std::vector<std::unique_ptr<Sequence>> running_;
  std::vector<float> masked_;     // [n_vocab] a constrained row
  std::vector<int32_t> history_;  // a verify row's history: tokens, then drafts
  std::vector<float> hidden_;     // [n, n_embd] hidden states handed to an mtp drafter
  uint64_t next_order_ = 0;
  std::thread thread_;
};

}  // namespace arc
