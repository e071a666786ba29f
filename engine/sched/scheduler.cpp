#include "sched/scheduler.h"

#include <algorithm>
#include <cmath>
#include <optional>

#include "arc/kv_window.h"
#include "arc/log.h"
#include "sched/reasoning_budget.h"

namespace arc {

namespace {

// Blocks of both pools (the windowed one of sliding-window layers, when there is one).
void kv_stats(const KvCache& kv, SchedulerStats& s) {
  s.kv_blocks_total = static_cast<int32_t>(kv.options().n_blocks);
  s.kv_blocks_used = kv.n_used_blocks();
  s.kv_blocks_cached = kv.n_cached_blocks();
  if (const WindowedBlocks* w = kv.window()) {
    s.kv_window_blocks_total = w->n_blocks();
    s.kv_window_blocks_used = w->n_used();
    s.kv_window_blocks_cached = w->n_cached();
  }
  if (const RecurrentState* st = kv.state()) {
    s.state_slots_total = static_cast<int32_t>(st->options().n_seqs);
    s.state_slots_used = static_cast<int32_t>(st->n_live());
    s.state_snapshots_total = static_cast<int32_t>(st->options().n_snapshots);
    s.state_snapshots_filed = static_cast<int32_t>(st->n_snapshots_filed());
    s.state_snapshots_pending = static_cast<int32_t>(st->n_snapshots_pending());
  }
}

}  // namespace

// ---- RequestHandle -------------------------------------------------------------------------

bool RequestHandle::next(std::vector<TokenOutput>& out, std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait_for(lock, timeout, [&] { return !queue_.empty() || done_; });
  bool got = !queue_.empty();
  while (!queue_.empty()) {
    out.push_back(std::move(queue_.front()));
    queue_.pop_front();
  }
  return got || !done_;
}

RequestHandle::Timing RequestHandle::timing() const {
  std::lock_guard<std::mutex> lock(mu_);
  return timing_;
}

void RequestHandle::push(TokenOutput o) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (done_) return;
    if (o.finished) {
      done_ = true;
      timing_.finished = Clock::now();
    }
    queue_.push_back(std::move(o));
  }
  cv_.notify_all();
}

// ---- Scheduler -------------------------------------------------------------------------------

struct Scheduler::Sequence {
  std::shared_ptr<RequestHandle> handle;
  SequenceRequest req;
  std::vector<int32_t> tokens;  // prompt, then generated tokens
  std::vector<int32_t> keys;    // prefix-cache identity of `tokens` (image tokens by content)
  int64_t n_prompt = 0;
  int64_t n_computed = 0;  // leading positions whose K/V is written
  int32_t kv_seq = -1;
  int64_t generated = 0;
  uint64_t order = 0;  // admission order: the youngest is preempted first
  bool admitted_once = false;
  bool done = false;
  Sampler sampler;
  std::unique_ptr<grammar::Matcher> matcher;  // with req.masker
  grammar::TokenMask mask;                    // the next token's, filled by fill_masks
  // Speculative decoding: this step's drafts (verified after tokens.back()), how many of them
  // the model produced itself so far in the step, and whether one was rejected.
  std::unique_ptr<SequenceDrafter> drafter;
  AdaptiveK k_ctl;
  std::vector<int32_t> draft;
  int accepted = 0;
  bool rejected = false;

  // The token at position p: the sequence's own, or this step's draft.
  int32_t token_at(int64_t p) const {
    const auto n = static_cast<int64_t>(tokens.size());
    return p < n ? tokens[static_cast<size_t>(p)] : draft[static_cast<size_t>(p - n)];
  }

  ReasoningBudget budget;

  explicit Sequence(SequenceRequest r)
      : req(std::move(r)),
        sampler(req.sampling),
        budget(req.reasoning_budget, req.reasoning_close, req.reasoning_tag) {
    if (req.masker) matcher = std::make_unique<grammar::Matcher>(req.masker->grammar());
  }
};

Scheduler::Scheduler(ForwardExecutor& exec, KvCache& kv, int64_t n_vocab, SchedulerOptions options)
    : exec_(exec), kv_(kv), n_vocab_(n_vocab), opt_(options) {
  opt_.max_batch_tokens = std::max<int64_t>(1, opt_.max_batch_tokens);
  opt_.max_running = std::max(1, opt_.max_running);
  thread_ = std::thread([this] { loop(); });
}

Scheduler::~Scheduler() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
  const Status gone = unavailable("the engine is unloading the model; send the request again");
  for (auto& s : running_) {
    if (s && !s->done) finish(*s, "error", gone);
  }
  for (auto& s : waiting_) finish(*s, "error", gone);
  std::lock_guard<std::mutex> lock(mu_);
  for (auto& s : incoming_) finish(*s, "error", gone);
}

std::shared_ptr<RequestHandle> Scheduler::submit(SequenceRequest request) {
  auto seq = std::make_unique<Sequence>(std::move(request));
  seq->handle = std::make_shared<RequestHandle>();
  seq->tokens = seq->req.prompt;
  seq->keys = seq->req.cache_keys.empty() ? seq->tokens : seq->req.cache_keys;
  if (seq->keys.size() != seq->tokens.size() ||
      (seq->req.has_images() && seq->req.rope_positions.size() != 3 * seq->tokens.size())) {
    auto handle = seq->handle;
    finish(*seq, "error", internal_error("image inputs do not match the prompt"));
    return handle;
  }
  seq->n_prompt = static_cast<int64_t>(seq->tokens.size());
  if (opt_.drafter && !seq->matcher) {
    // Structured output does not draft: its masks would have to follow every draft.
    seq->drafter = opt_.drafter->start(seq->tokens);
    seq->k_ctl = AdaptiveK(opt_.spec.max_k(), opt_.spec.adaptive());
  }
  seq->handle->timing_.arrival = Clock::now();
  seq->handle->timing_.prompt_tokens = seq->n_prompt;
  auto handle = seq->handle;
  if (seq->tokens.empty()) {
    finish(*seq, "error", invalid_argument("the prompt is empty"));
    return handle;
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    incoming_.push_back(std::move(seq));
  }
  cv_.notify_all();
  return handle;
}

SchedulerStats Scheduler::stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  return stats_;
}

void Scheduler::finish(Sequence& s, std::string reason, Status error) {
  if (s.done) return;
  s.done = true;
  if (s.kv_seq >= 0) {
    kv_.free_sequence(s.kv_seq);
    s.kv_seq = -1;
  }
  TokenOutput o;
  o.finished = true;
  o.finish_reason = std::move(reason);
  o.error = std::move(error);
  s.handle->push(std::move(o));
}

void Scheduler::preempt(Sequence& s) {
  // Recompute later: drop the K/V (its indexed blocks stay cached, so re-admission is cheap).
  if (s.kv_seq >= 0) kv_.free_sequence(s.kv_seq);
  s.kv_seq = -1;
  s.n_computed = 0;
  {
    std::lock_guard<std::mutex> lock(s.handle->mu_);
    s.handle->timing_.preemptions++;
  }
  std::lock_guard<std::mutex> lock(mu_);
  stats_.preemptions++;
}

void Scheduler::fill_masks(const std::vector<RowRef>& rows) {
  for (const RowRef& r : rows) {
    Sequence& s = *r.s;
    if (s.matcher && r.position + 1 == static_cast<int64_t>(s.tokens.size())) {
      s.req.masker->fill(*s.matcher, s.mask);
    }
  }
}

Status Scheduler::run_step(const ForwardBatch& batch, const std::vector<RowRef>& rows,
                           StepCandidates& out) {
  if (opt_.forward) {
    fill_masks(rows);
    // Tensor parallelism: every rank returns whole rows.
    auto logits = opt_.forward(batch);
    if (!logits.ok()) return logits.status();
    if (rows.empty()) {  // a prompt chunk run for its K/V: its default row is not wanted
      out = StepCandidates{};
      out.n_vocab = n_vocab_;
      return ok_status();
    }
    out.n_rows = static_cast<int64_t>(rows.size());
    out.n_vocab = n_vocab_;
    out.k_stride = 0;
    out.k.assign(rows.size(), 0);
    out.full_at.resize(rows.size());
    for (size_t r = 0; r < rows.size(); ++r) out.full_at[r] = static_cast<int64_t>(r);
    out.full = std::move(*logits);
    if (out.full.size() != rows.size() * static_cast<size_t>(n_vocab_)) {
      return internal_error("forward step returned " + std::to_string(out.full.size()) +
                            " logits for " + std::to_string(rows.size()) + " rows");
    }
    return ok_status();
  }
  // Candidates for generated tokens; prompt scores (echo with logprobs) need whole rows.
  StepSampling sampling;
  sampling.rows.resize(rows.size());
  const bool on_device = exec_.selects_on_device();
  for (size_t r = 0; r < rows.size(); ++r) {
    const Sequence& s = *rows[r].s;
    kernels::CandidateRow& row = sampling.rows[r];
    const bool prompt_row =
        rows[r].verify < 0 && rows[r].position + 1 < static_cast<int64_t>(s.tokens.size());
    // A verify row is sampled after the drafts before it (if they are accepted): its penalties
    // count them.
    std::span<const int32_t> history = s.tokens;
    if (rows[r].verify > 0) {
      history_.assign(s.tokens.begin(), s.tokens.end());
      history_.insert(history_.end(), s.draft.begin(), s.draft.begin() + rows[r].verify);
      history = history_;
    }
    // A constrained row is masked before sampling: it comes back whole.
    if (prompt_row || s.matcher ||
        !s.sampler.candidate_row(history, s.n_prompt, n_vocab_, s.req.top_logprobs, row,
                                 sampling.pen_tokens, sampling.pen_counts)) {
      row = kernels::CandidateRow{};
      row.k = 0;
    } else if (!on_device && (row.k > 1 || row.flags != 0)) {
      // Host selection: the whole row is here anyway; the sampler walks it (sched/row_walk.h)
      // faster than a selection of up to 1024 candidates with their mass.
      sampling.pen_tokens.resize(static_cast<size_t>(row.pen_begin));
      sampling.pen_counts.resize(static_cast<size_t>(row.pen_begin));
      row = kernels::CandidateRow{};
      row.k = 0;
    }
  }
  const Status submitted = exec_.submit(batch, sampling);
  fill_masks(rows);                       // while the forward runs
  const Status waited = exec_.wait(out);  // also after a failed submit: the backend is idle
  return submitted.ok() ? waited : submitted;
}

void Scheduler::loop() {
  for (;;) {
    bool busy = step();
    std::unique_lock<std::mutex> lock(mu_);
    if (stop_) return;
    if (!busy) {
      // Idle: wake on a new request, or poll for cancellations of queued ones.
      cv_.wait_for(lock, std::chrono::milliseconds(50),
                   [&] { return stop_ || !incoming_.empty(); });
      if (stop_) return;
    }
  }
}

int64_t Scheduler::draft_k(Sequence& s, int64_t budget) {
  if (!s.drafter) return 0;
  // Room for the drafts and the token after them: the step's token budget, the request's
  // max_tokens and the context.
  int64_t k = s.k_ctl.next();
  k = std::min(k, budget);
  k = std::min(k, s.req.max_new_tokens - s.generated - 1);
  k = std::min(k, opt_.ctx_size - static_cast<int64_t>(s.tokens.size()) - 1);
  return std::max<int64_t>(k, 0);
}

template <typename Entries>
void Scheduler::plan_drafts(Entries& entries, const std::vector<int64_t>& ks, int64_t& budget) {
  std::vector<DraftRequest> reqs;
  for (size_t i = 0; i < ks.size(); ++i) {
    Sequence& s = *entries[i].s;
    if (ks[i] > 0) reqs.push_back({s.drafter.get(), s.tokens, static_cast<int>(ks[i]), &s.draft});
  }
  if (reqs.empty()) return;
  opt_.drafter->propose_all(reqs);
  for (size_t i = 0; i < ks.size(); ++i) {
    Sequence& s = *entries[i].s;
    if (ks[i] <= 0) continue;
    if (static_cast<int64_t>(s.draft.size()) > ks[i]) s.draft.resize(static_cast<size_t>(ks[i]));
    // Drafts never preempt anyone: without free blocks for them the step decodes one token.
    const auto want = s.n_computed + 1 + static_cast<int64_t>(s.draft.size());
    if (!s.draft.empty() && !kv_.reserve(s.kv_seq, want).ok()) s.draft.clear();
    const auto n = static_cast<int64_t>(s.draft.size());
    entries[i].n = 1 + n;
    budget += ks[i] - n;
  }
}

template <typename Entries>
void Scheduler::feed_hidden(const Entries& entries, const std::vector<int64_t>& entry_at) {
  for (size_t i = 0; i < entries.size(); ++i) {
    Sequence& s = *entries[i].s;
    if (s.done || !s.drafter || !s.drafter->wants_hidden()) continue;
    // The positions of the chunk the step confirmed: all of a prompt chunk; of a verify, the
    // last token and the accepted drafts.
    const int64_t n = std::min(s.n_computed, entries[i].start + entries[i].n) - entries[i].start;
    if (n <= 0) continue;
    if (Status f = exec_.fetch_hidden(entry_at[i], n, hidden_); !f.ok()) {
      logger("sched")->warn("hidden states for drafting: {}", f.to_string());
      continue;
    }
    s.drafter->observe_hidden(s.tokens, entries[i].start, hidden_);
  }
}

bool Scheduler::step() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    while (!incoming_.empty()) {
      waiting_.push_back(std::move(incoming_.front()));
      incoming_.pop_front();
    }
  }
  // Cancelled requests free their blocks before anything else is planned.
  for (auto& s : running_) {
    if (s->handle->cancelled()) finish(*s, "cancelled");
  }
  for (auto& s : waiting_) {
    if (s->handle->cancelled()) finish(*s, "cancelled");
  }
  std::erase_if(running_, [](const auto& s) { return s->done; });
  std::erase_if(waiting_, [](const auto& s) { return s->done; });
  if (running_.empty() && waiting_.empty()) {
    std::lock_guard<std::mutex> lock(mu_);
    stats_.running = 0;
    stats_.waiting = 0;
    kv_stats(kv_, stats_);
    return false;
  }

  struct Entry {
    Sequence* s;
    int64_t start;  // first position of the chunk
    int64_t n;      // tokens in the chunk
  };
  std::vector<Entry> entries;
  int64_t budget = opt_.max_batch_tokens;
  auto planned = [&](const Sequence* s) {
    return std::any_of(entries.begin(), entries.end(), [&](const Entry& e) { return e.s == s; });
  };
  // Frees room for `s` by preempting the youngest running sequence not yet in this step.
  auto make_room = [&](Sequence& s, int64_t n_tokens) {
    while (!kv_.reserve(s.kv_seq, n_tokens).ok()) {
      Sequence* victim = nullptr;
      for (auto& r : running_) {
        if (r.get() == &s || r->done || r->kv_seq < 0 || planned(r.get())) continue;
        if (victim == nullptr || r->order > victim->order) victim = r.get();
      }
      if (victim == nullptr || victim->order < s.order) return false;
      preempt(*victim);
    }
    return true;
  };

  std::sort(running_.begin(), running_.end(),
            [](const auto& a, const auto& b) { return a->order < b->order; });
  for (auto& sp : running_) {
    sp->draft.clear();
    sp->accepted = 0;
    sp->rejected = false;
  }
  // 1. Decodes, oldest first: one token each, and the drafts to verify with it (room for k
  // drafts each, proposed for all sequences at once below, then what was not drafted returns).
  std::vector<int64_t> ks;
  for (auto& sp : running_) {
    Sequence& s = *sp;
    if (s.kv_seq < 0 || static_cast<int64_t>(s.tokens.size()) - s.n_computed != 1) continue;
    if (budget <= 0) break;
    if (!make_room(s, s.n_computed + 1)) continue;
    const int64_t k = draft_k(s, budget - 1);
    entries.push_back({&s, s.n_computed, 1});
    ks.push_back(k);
    budget -= 1 + k;
  }
  plan_drafts(entries, ks, budget);
  // 2. Prefill chunks of admitted sequences still reading their prompt.
  for (auto& sp : running_) {
    Sequence& s = *sp;
    const int64_t remaining = static_cast<int64_t>(s.tokens.size()) - s.n_computed;
    if (s.kv_seq < 0 || remaining <= 1 || budget <= 0) continue;
    const int64_t chunk = std::min(remaining, budget);
    if (!make_room(s, s.n_computed + chunk)) continue;
    entries.push_back({&s, s.n_computed, chunk});
    budget -= chunk;
  }
  // Preempted sequences go back to the front of the queue, oldest first.
  std::vector<std::unique_ptr<Sequence>> requeue;
  for (auto& sp : running_) {
    if (sp->kv_seq < 0 && !sp->done) requeue.push_back(std::move(sp));
  }
  std::erase_if(running_, [](const auto& s) { return s == nullptr; });
  std::sort(requeue.begin(), requeue.end(),
            [](const auto& a, const auto& b) { return a->order > b->order; });
  for (auto& s : requeue) waiting_.push_front(std::move(s));

  // 3. Admit waiting requests while budget and blocks last.
  while (budget > 0 && !waiting_.empty() && static_cast<int>(running_.size()) < opt_.max_running &&
         kv_.can_add_sequence()) {  // hybrid models: a free recurrent state slot
    Sequence& s = *waiting_.front();
    s.kv_seq = kv_.add_sequence();
    int64_t cached = 0;
    if (!s.req.prompt_logprobs) {
      std::span<const int32_t> keys = s.keys;
      if (s.drafter) {
        const int64_t covered = s.drafter->reusable_prefix(s.tokens);
        keys = keys.first(static_cast<size_t>(std::min<int64_t>(covered + 1, keys.size())));
      }
      cached = kv_.attach_cached_prefix(s.kv_seq, keys);
    }
    s.n_computed = cached;
    const int64_t chunk = std::min(static_cast<int64_t>(s.tokens.size()) - cached, budget);
    if (!kv_.reserve(s.kv_seq, cached + chunk).ok()) {
      kv_.free_sequence(s.kv_seq);
      s.kv_seq = -1;
      s.n_computed = 0;
      if (running_.empty() && entries.empty()) {
        // Nothing else holds blocks: this request can never fit.
        finish(s, "error",
               resource_exhausted("the KV cache (" + std::to_string(kv_.options().n_blocks) +
                                  " blocks of " + std::to_string(kv_.options().block_size) +
                                  " tokens) cannot hold this request; shorten the prompt or "
                                  "start the engine with a larger --ctx-size"));
        waiting_.pop_front();
        continue;
      }
      break;
    }
    if (!s.admitted_once) {
      s.admitted_once = true;
      s.order = ++next_order_;  // kept across preemptions, so a preempted request is not starved
      std::lock_guard<std::mutex> lock(s.handle->mu_);
      s.handle->timing_.admitted = Clock::now();
      s.handle->timing_.cached_tokens = cached;
      std::lock_guard<std::mutex> lock2(mu_);
      stats_.prompt_tokens += static_cast<uint64_t>(s.n_prompt);
      stats_.prefix_hit_tokens += static_cast<uint64_t>(cached);
    }
    entries.push_back({&s, s.n_computed, chunk});
    budget -= chunk;
    running_.push_back(std::move(waiting_.front()));
    waiting_.pop_front();
  }

  if (entries.empty()) {
    if (!running_.empty()) {
      // The oldest sequence alone does not fit the pool: fail it rather than spin.
      Sequence& s = *running_.front();
      finish(s, "error",
             resource_exhausted("the KV cache is too small to continue this request; start the "
                                "engine with a larger --ctx-size or fewer parallel requests"));
      std::erase_if(running_, [](const auto& r) { return r->done; });
    }
    return !waiting_.empty() || !running_.empty();
  }

  // Build the flattened batch.
  std::vector<int32_t> tok, pos, seq, rows;
  // Image inputs, when any sequence of the step has images: rotary positions per axis for every
  // token (text tokens: the same on each axis) and the image tokens' embedding rows.
  bool images = false;
  for (const Entry& e : entries) images = images || e.s->req.has_images();
  std::vector<int32_t> rope_t, rope_h, rope_w, embd_rows;
  std::vector<float> embd;
  std::vector<RowRef> row_refs;
  std::vector<int64_t> entry_at;  // [entries] index of each entry's first token in the batch
  for (const Entry& e : entries) {
    entry_at.push_back(static_cast<int64_t>(tok.size()));
    const auto n_tokens = static_cast<int64_t>(e.s->tokens.size());
    const bool reaches_end = e.start + e.n == n_tokens + static_cast<int64_t>(e.s->draft.size());
    for (int64_t i = 0; i < e.n; ++i) {
      const int64_t p = e.start + i;
      const bool want_prompt_score = e.s->req.prompt_logprobs && p + 1 < e.s->n_prompt;
      const bool last = reaches_end && i == e.n - 1;
      // With drafts every position from the last token on has a row: row i decides whether
      // draft i is what the model produces there.
      const int verify =
          e.s->draft.empty() || p < n_tokens - 1 ? -1 : static_cast<int>(p - (n_tokens - 1));
      if (want_prompt_score || last || verify >= 0) {
        rows.push_back(static_cast<int32_t>(tok.size()));
        row_refs.push_back({e.s, p, verify});
      }
      tok.push_back(e.s->token_at(p));
      pos.push_back(static_cast<int32_t>(p));
      seq.push_back(e.s->kv_seq);
      if (!images) continue;
      const SequenceRequest& q = e.s->req;
      const int64_t n_prompt = e.s->n_prompt;
      int32_t row = -1;
      if (!q.has_images()) {
        rope_t.push_back(static_cast<int32_t>(p));
        rope_h.push_back(static_cast<int32_t>(p));
        rope_w.push_back(static_cast<int32_t>(p));
      } else if (p < n_prompt) {
        rope_t.push_back(q.rope_positions[p]);
        rope_h.push_back(q.rope_positions[n_prompt + p]);
        rope_w.push_back(q.rope_positions[2 * n_prompt + p]);
        row = q.embd_rows.empty() ? -1 : q.embd_rows[p];
      } else {
        const auto r = static_cast<int32_t>(q.rope_next + (p - n_prompt));
        rope_t.push_back(r);
        rope_h.push_back(r);
        rope_w.push_back(r);
      }
      const int64_t width = q.embd_width;
      if (row >= 0 && q.embd && width > 0 &&
          (row + 1) * width <= static_cast<int64_t>(q.embd->size())) {
        embd_rows.push_back(static_cast<int32_t>(embd.size() / static_cast<size_t>(width)));
        embd.insert(embd.end(), q.embd->begin() + row * width, q.embd->begin() + (row + 1) * width);
      } else {
        embd_rows.push_back(-1);
      }
    }
  }
  ForwardBatch batch{tok, pos, seq, rows};
  std::vector<int32_t> rope;
  if (images) {
    rope.reserve(3 * tok.size());
    rope.insert(rope.end(), rope_t.begin(), rope_t.end());
    rope.insert(rope.end(), rope_h.begin(), rope_h.end());
    rope.insert(rope.end(), rope_w.begin(), rope_w.end());
    batch.rope_positions = rope;
    if (!embd.empty()) {
      batch.embd_rows = embd_rows;
      batch.embd = embd;
    }
  }
  StepCandidates cands;
  const Status step_status = run_step(batch, row_refs, cands);
  if (!step_status.ok()) {
    logger("sched")->error("forward step failed: {}", step_status.to_string());
    for (const Entry& e : entries) finish(*e.s, "error", step_status);
    std::erase_if(running_, [](const auto& r) { return r->done; });
    return true;
  }
  for (const Entry& e : entries) {
    if (!e.s->draft.empty()) continue;  // after verification: only what was accepted counts
    e.s->n_computed += e.n;
    kv_.commit(e.s->kv_seq, e.s->keys, e.s->n_computed);
  }

  uint64_t generated = 0;
  std::vector<float> fetched;
  for (size_t r = 0; r < row_refs.size(); ++r) {
    Sequence& s = *row_refs[r].s;
    const int64_t p = row_refs[r].position;
    const int verify = row_refs[r].verify;
    // A finished sequence, or a verify row after a rejected draft: its logits are of tokens the
    // model did not produce.
    if (s.done || (verify > 0 && s.rejected)) continue;
    std::span<const float> row = cands.full_row(static_cast<int64_t>(r));
    if (p + 1 < static_cast<int64_t>(s.tokens.size())) {
      // A prompt position: score the prompt's next token (echo with logprobs).
      TokenOutput o;
      o.is_prompt = true;
      o.token = s.tokens[static_cast<size_t>(p + 1)];
      o.logprob = token_logprob(row, o.token);
      if (s.req.top_logprobs > 0) o.top = top_logprobs(row, s.req.top_logprobs);
      s.handle->push(std::move(o));
      continue;
    }
    TokenOutput o;
    std::optional<int32_t> picked;
    Candidates c;
    if (cands.k[r] > 0) {
      const size_t at = r * static_cast<size_t>(cands.k_stride);
      const size_t k = static_cast<size_t>(cands.k[r]);
      c.ids = std::span<const int32_t>(cands.ids).subspan(at, k);
      c.values = std::span<const float>(cands.values).subspan(at, k);
      c.lse = cands.stats[3 * r];
      c.mass = cands.stats[3 * r + 2];
      c.n_vocab = n_vocab_;
      picked = s.sampler.sample_candidates(c);
    }
    if (!picked && row.empty()) {
      // The candidates do not decide this token: the whole row, as before device sampling.
      if (Status f = exec_.fetch_row(static_cast<int64_t>(r), fetched); !f.ok()) {
        finish(s, "error", f);
        continue;
      }
      row = fetched;
    }
    if (const auto forced = s.budget.forced()) {
      o.token = *forced;  // the reasoning budget is spent: the engine closes the block
    } else if (s.matcher) {
      // Structured output: tokens that cannot continue the document are out of the draw.
      const bool any = std::any_of(s.mask.begin(), s.mask.end(), [](uint64_t w) { return w != 0; });
      if (!any) {
        finish(s, "error",
               invalid_argument("no token of the vocabulary can continue the structured output "
                                "here; simplify the schema"));
        continue;
      }
      masked_.assign(row.begin(), row.end());
      grammar::apply_mask(s.mask, s.req.masker->vocab().n_vocab(), masked_);
      o.token = s.sampler.sample(masked_, s.tokens, s.n_prompt);
    } else {
      o.token = picked ? *picked : s.sampler.sample(row, s.tokens, s.n_prompt);
    }
    if (s.req.top_logprobs >= 0) {
      // Candidates carry logprobs only for rows without penalties (Sampler::candidate_row).
      if (!row.empty()) {
        o.logprob = token_logprob(row, o.token);
        if (s.req.top_logprobs > 0) o.top = top_logprobs(row, s.req.top_logprobs);
      } else {
        o.logprob = candidate_logprob(c, o.token).value_or(-INFINITY);
        if (s.req.top_logprobs > 0) o.top = candidate_top_logprobs(c, s.req.top_logprobs);
      }
    }
    s.tokens.push_back(o.token);
    s.keys.push_back(o.token);
    s.budget.accept(o.token);
    s.generated++;
    generated++;
    if (verify >= 0) {
      // Drawn from the model's own row: a draft equal to it is accepted, and the next row
      // (computed after that draft) decides the next token. Otherwise this token replaces the
      // draft and the later rows are void.
      if (verify < static_cast<int>(s.draft.size()) &&
          o.token == s.draft[static_cast<size_t>(verify)]) {
        s.accepted++;
      } else {
        s.rejected = true;
      }
    }
    {
      std::lock_guard<std::mutex> lock(s.handle->mu_);
      if (s.generated == 1) s.handle->timing_.first_token = Clock::now();
      s.handle->timing_.generated = s.generated;
    }
    const bool stop_token = std::find(s.req.stop_tokens.begin(), s.req.stop_tokens.end(),
                                      o.token) != s.req.stop_tokens.end();
    const bool is_stop = !s.req.sampling.ignore_eos && stop_token;
    bool document_done = false;
    if (s.matcher && !stop_token) {
      if (!s.matcher->advance(s.req.masker->vocab().bytes(o.token))) {
        finish(s, "error", internal_error("a masked token does not continue the document"));
        continue;
      }
      document_done = !s.matcher->can_continue();  // nothing may follow: end without EOS
    }
    if (is_stop) {
      o.finished = true;
      o.finish_reason = "stop";
    } else if (document_done) {
      o.finished = true;
      o.finish_reason = "stop";
      o.keeps_text = true;
    } else if (s.generated >= s.req.max_new_tokens ||
               static_cast<int64_t>(s.tokens.size()) >= opt_.ctx_size) {
      o.finished = true;
      o.finish_reason = "length";
    }
    const bool finished = o.finished;
    s.handle->push(std::move(o));
    if (finished) {
      s.done = true;
      kv_.free_sequence(s.kv_seq);
      s.kv_seq = -1;
    }
  }
  uint64_t drafted = 0, accepted = 0, verified = 0;
  for (const Entry& e : entries) {
    Sequence& s = *e.s;
    if (s.draft.empty()) continue;
    // The K/V of the last token and of the accepted drafts is the sequence's; the positions of
    // rejected drafts are written again by the next steps before anything reads them.
    if (!s.done) {
      s.n_computed = static_cast<int64_t>(s.tokens.size()) - 1;
      kv_.commit(s.kv_seq, s.keys, s.n_computed);
    }
    const int n_draft = static_cast<int>(s.draft.size());
    s.k_ctl.record(n_draft, s.accepted);
    drafted += static_cast<uint64_t>(n_draft);
    accepted += static_cast<uint64_t>(s.accepted);
    verified++;
    std::lock_guard<std::mutex> lock(s.handle->mu_);
    s.handle->timing_.draft_tokens += n_draft;
    s.handle->timing_.accepted_tokens += s.accepted;
  }
  feed_hidden(entries, entry_at);
  for (const Entry& e : entries) {
    if (e.s->n_computed >= e.s->n_prompt) e.s->req.prompt_logprobs = false;  // scored once
  }
  std::erase_if(running_, [](const auto& r) { return r->done; });

  std::lock_guard<std::mutex> lock(mu_);
  stats_.steps++;
  stats_.generated_tokens += generated;
  stats_.draft_tokens += drafted;
  stats_.accepted_tokens += accepted;
  stats_.verify_steps += verified;
  stats_.running = static_cast<int>(running_.size());
  stats_.waiting = static_cast<int>(waiting_.size() + incoming_.size());
  kv_stats(kv_, stats_);
  return true;
}

}  // namespace arc
