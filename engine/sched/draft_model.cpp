#include "sched/draft_model.h"

#include <algorithm>
#include <filesystem>
#include <numeric>

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

  void propose(std::span<const int32_t> tokens, int k, std::vector<int32_t>& out) override {
    const auto len = static_cast<int64_t>(tokens.size());
    if (k <= 0 || len == 0) return;
    KvCache& kv = *d_.kv_;
    if (seq_ < 0) {
      seq_ = kv.add_sequence();
      // The last token is always run: its logits give the first draft.
      const int64_t cached = kv.attach_cached_prefix(seq_, tokens.first(len - 1));
      computed_.assign(tokens.begin(), tokens.begin() + cached);
      confirmed_ = cached;
    }
    // What the target did not accept is stale from its first difference on.
    const auto same =
        std::mismatch(computed_.begin(), computed_.end(), tokens.begin(), tokens.end());
    computed_.resize(static_cast<size_t>(same.first - computed_.begin()));
    if (!kv.reserve(seq_, len + k).ok()) return;  // the draft pool is full: no drafts now
    const auto n_done = static_cast<int64_t>(computed_.size());
    const int64_t todo = len - n_done;
    if (todo > d_.opt_.catch_up_chunk) {
      // A long stretch (a prompt): read part of it now, draft once caught up.
      (void)run(tokens.subspan(n_done, d_.opt_.catch_up_chunk), n_done);
      return;
    }
    auto logits = run(tokens.subspan(n_done, todo), n_done);
    if (!logits) return;
    // Only tokens the target produced go into the shared prefix index: a rejected draft's
    // position is written again.
    confirmed_ = std::max(confirmed_, len);
    kv.commit(seq_, tokens, confirmed_);
    int32_t t = argmax(*logits);
    out.push_back(t);
    for (int i = 1; i < k; ++i) {
      logits = run(std::span(&t, 1), len + i - 1);
      if (!logits) return;
      t = argmax(*logits);
      out.push_back(t);
    }
  }

 private:
  // Runs `toks` from position `start`; appends them to computed_. The last token's logits.
  std::optional<std::vector<float>> run(std::span<const int32_t> toks, int64_t start) {
    pos_.resize(toks.size());
    std::iota(pos_.begin(), pos_.end(), static_cast<int32_t>(start));
    seqs_.assign(toks.size(), seq_);
    auto l = d_.exec_->run({toks, pos_, seqs_, {}});
    if (!l.ok()) {
      logger("sched")->warn("draft model step failed: {}", l.status().to_string());
      computed_.resize(static_cast<size_t>(std::min<int64_t>(start, computed_.size())));
      return std::nullopt;
    }
    computed_.resize(static_cast<size_t>(start));
    computed_.insert(computed_.end(), toks.begin(), toks.end());
    return std::move(*l);
  }

  DraftModelDrafter& d_;
  int32_t seq_ = -1;
  std::vector<int32_t> computed_;  // tokens whose K/V the draft cache holds, in order
  int64_t confirmed_ = 0;          // of those, the leading ones the target produced
  std::vector<int32_t> pos_, seqs_;
};

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
