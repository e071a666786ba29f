#include "sched/draft_model.h"

#include <algorithm>
#include <filesystem>
#include <numeric>
#include <optional>

#include "arc/log.h"
#include "arc/model_config.h"
#include "sched/sampler.h"

namespace arc {

namespace {

uint64_t kv_bytes_per_token(const ModelConfig& c, DType t) {
  return static_cast<uint64_t>(c.kv_values_per_token()) * (t == DType::F16 ? 2 : 4);
}

}  // namespace

class DraftModelDrafter::Sequence final : public SequenceDrafter {
 public:
  explicit Sequence(DraftModelDrafter& d) : d_(d) {}
  ~Sequence() override {
    if (seq_ >= 0) d_.kv_->free_sequence(seq_);
  }

  // On its own: a batch of one.
  void propose(std::span<const int32_t> tokens, int k, std::vector<int32_t>& out) override {
    const DraftRequest r{this, tokens, k, &out};
    d_.propose_all(std::span(&r, 1));
  }

  // Brings the draft cache's view of the sequence up to `tokens`: what the target did not
  // accept is stale from its first difference on. The first position to run; the last token
  // always runs (its logits give the first draft).
  int64_t sync(std::span<const int32_t> tokens) {
    const auto len = static_cast<int64_t>(tokens.size());
    KvCache& kv = *d_.kv_;
    if (seq_ < 0) {
      seq_ = kv.add_sequence();
      const int64_t cached = kv.attach_cached_prefix(seq_, tokens.first(len - 1));
      computed_.assign(tokens.begin(), tokens.begin() + cached);
      confirmed_ = cached;
    }
    const auto same =
        std::mismatch(computed_.begin(), computed_.end(), tokens.begin(), tokens.end());
    const auto n_same = static_cast<int64_t>(same.first - computed_.begin());
    computed_.resize(static_cast<size_t>(std::min(n_same, len - 1)));
    return static_cast<int64_t>(computed_.size());
  }

  DraftModelDrafter& d_;
  int32_t seq_ = -1;
  std::vector<int32_t> computed_;  // tokens whose K/V the draft cache holds, in order
  int64_t confirmed_ = 0;          // of those, the leading ones the target produced
};

void DraftModelDrafter::propose_all(std::span<const DraftRequest> reqs) {
  // Per sequence: the stretch it runs in the first forward, and whether it drafts this step.
  struct Plan {
    Sequence* s;
    const DraftRequest* r;
    int64_t from, n;  // positions [from, from + n) run first
    bool drafts;      // caught up with the target: drafts r->k tokens
    int32_t t = -1;   // its latest draft
  };
  std::vector<Plan> plans;
  toks_.clear();
  pos_.clear();
  seqs_.clear();
  rows_.clear();
  // Sequences caught up with the target (a few tokens to run: the last token, accepted drafts)
  // draft this step; longer stretches (a prompt) are read a chunk per step, so a prompt never
  // stalls the batch. The first forward holds at most max_batch_tokens: the drafting sequences
  // first, then the chunks in what room is left.
  int64_t room = opt_.max_batch_tokens;
  std::vector<std::pair<const DraftRequest*, int64_t>> behind;  // catching up: request, from
  auto add = [&](const DraftRequest& r, int64_t from, int64_t n, bool drafts) {
    auto* s = static_cast<Sequence*>(r.seq);
    for (int64_t p = from; p < from + n; ++p) {
      toks_.push_back(r.tokens[static_cast<size_t>(p)]);
      pos_.push_back(static_cast<int32_t>(p));
      seqs_.push_back(s->seq_);
    }
    if (drafts) rows_.push_back(static_cast<int32_t>(toks_.size() - 1));
    plans.push_back({s, &r, from, n, drafts});
    room -= n;
  };
  for (const DraftRequest& r : reqs) {
    const auto len = static_cast<int64_t>(r.tokens.size());
    if (r.k <= 0 || len == 0) continue;
    auto* s = static_cast<Sequence*>(r.seq);  // started by this drafter
    const int64_t from = s->sync(r.tokens);
    if (!kv_->reserve(s->seq_, len + r.k).ok()) continue;  // the pool is full: no drafts now
    const int64_t todo = len - from;
    if (todo > opt_.catch_up_chunk || todo > room) {
      behind.emplace_back(&r, from);
    } else {
      add(r, from, todo, true);
    }
  }
  for (const auto& [r, from] : behind) {
    const int64_t n =
        std::min({opt_.catch_up_chunk, room, static_cast<int64_t>(r->tokens.size()) - from - 1});
    if (n > 0) add(*r, from, n, false);
  }
  if (plans.empty()) return;
  // Forward 1: every sequence's catch-up, the logits of the drafting ones' last tokens.
  auto l = run();
  if (!l) return;
  size_t row = 0;
  const auto v = static_cast<size_t>(model_->config().n_vocab);
  for (Plan& p : plans) {
    const auto toks = p.r->tokens.subspan(static_cast<size_t>(p.from), static_cast<size_t>(p.n));
    p.s->computed_.insert(p.s->computed_.end(), toks.begin(), toks.end());
    if (!p.drafts) continue;
    // Only tokens the target produced go into the shared prefix index: a rejected draft's
    // position is written again.
    const auto len = static_cast<int64_t>(p.r->tokens.size());
    p.s->confirmed_ = std::max(p.s->confirmed_, len);
    kv_->commit(p.s->seq_, p.r->tokens, p.s->confirmed_);
    p.t = argmax(std::span<const float>(*l).subspan(row++ * v, v));
    p.r->out->push_back(p.t);
  }
  // Forwards 2 .. k: the latest draft of every sequence that drafts more, one token each.
  for (int i = 1;; ++i) {
    toks_.clear();
    pos_.clear();
    seqs_.clear();
    rows_.clear();
    for (Plan& p : plans) {
      if (!p.drafts || i >= p.r->k) continue;
      rows_.push_back(static_cast<int32_t>(toks_.size()));
      toks_.push_back(p.t);
      pos_.push_back(static_cast<int32_t>(p.r->tokens.size()) + i - 1);
      seqs_.push_back(p.s->seq_);
    }
    if (toks_.empty()) return;
    l = run();
    row = 0;
    for (Plan& p : plans) {
      if (!p.drafts || i >= p.r->k) continue;
      if (!l) {  // no drafts past this one; the cache holds what ran before
        p.drafts = false;
        continue;
      }
      p.s->computed_.push_back(p.t);
      p.t = argmax(std::span<const float>(*l).subspan(row++ * v, v));
      p.r->out->push_back(p.t);
    }
    if (!l) return;
  }
}

std::optional<std::vector<float>> DraftModelDrafter::run() {
  ++forwards_;
  ForwardBatch b{toks_, pos_, seqs_, rows_};
  auto l = exec_->run(b);
  if (!l.ok()) {
    logger("sched")->warn("draft model step failed: {}", l.status().to_string());
    return std::nullopt;
  }
  return std::move(*l);
}

Result<uint64_t> draft_model_bytes(const std::string& path, int64_t kv_tokens, DType kv_type) {
  ARC_ASSIGN_OR_RETURN(gguf::File f, gguf::File::open(path));
  ARC_ASSIGN_OR_RETURN(ModelConfig c, config_from_gguf(f));
  return f.file_bytes() + kv_bytes_per_token(c, kv_type) * static_cast<uint64_t>(kv_tokens);
}

Result<std::shared_ptr<DraftModelDrafter>> DraftModelDrafter::load(const DraftModelOptions& opt,
                                                                   Backend& backend,
                                                                   const gguf::File& target) {
  auto f = gguf::File::open(opt.path);
  if (!f.ok()) return f.status().with_context("the draft model " + opt.path);
  // Drafts are token ids: they mean something only in the target's vocabulary.
  const auto mine = f->get_string_array("tokenizer.ggml.tokens");
  const auto theirs = target.get_string_array("tokenizer.ggml.tokens");
  if (!mine || !theirs || *mine != *theirs) {
    const size_t a = mine ? mine->size() : 0, b = theirs ? theirs->size() : 0;
    return invalid_argument("the draft model " + opt.path + " does not share the model's " +
                            "vocabulary (" + std::to_string(a) + " tokens against " +
                            std::to_string(b) + (a == b ? ", different tokens" : "") +
                            "); use a smaller model of the same family");
  }
  std::shared_ptr<DraftModelDrafter> d(new DraftModelDrafter());
  d->opt_ = opt;
  d->name_ =
      f->get_string("general.name").value_or(std::filesystem::path(opt.path).stem().string());
  auto m = Model::from_file(std::move(*f), backend);
  if (!m.ok()) return m.status().with_context("the draft model " + opt.path);
  d->model_ = std::move(*m);
  const ModelConfig& c = d->model_->config();
  const int64_t block = std::max<int64_t>(1, opt.block_size);
  const KvCacheOptions kvo =
      kv_cache_options(c, block, (opt.kv_tokens + block - 1) / block, opt.kv_type);
  auto kv = KvCache::create(backend, kvo);
  if (!kv.ok()) return kv.status().with_context("the draft model's KV cache");
  d->kv_ = std::move(*kv);
  d->exec_ = std::make_unique<ForwardExecutor>(*d->model_, backend, *d->kv_);
  return d;
}

DraftModelDrafter::~DraftModelDrafter() = default;

std::unique_ptr<SequenceDrafter> DraftModelDrafter::start(std::span<const int32_t>) {
  return std::make_unique<Sequence>(*this);
}

}  // namespace arc
