#include "sched/mtp_drafter.h"

#include <algorithm>
#include <string>

#include "arc/log.h"
#include "arc/model_config.h"
#include "sched/sampler.h"

namespace arc {

class MtpDrafter::Sequence final : public SequenceDrafter {
 public:
  explicit Sequence(MtpDrafter& d) : d_(d), e_(d.block_->config().n_embd) {}
  ~Sequence() override {
    if (seq_ >= 0) d_.kv_->free_sequence(seq_);
  }

  bool wants_hidden() const override { return true; }

  void observe_hidden(std::span<const int32_t> tokens, int64_t first,
                      std::span<const float> rows) override {
    const auto len = static_cast<int64_t>(tokens.size());
    const auto m = static_cast<int64_t>(rows.size()) / e_;
    if (broken_ || m <= 0 || len < 2) return;
    KvCache& kv = *d_.kv_;
    if (seq_ < 0) (void)reusable_prefix(tokens);
    if (first > valid_) {
      // The target's hidden states of [valid_, first) will never come (its prefix was cached,
      // the block's was not): entries there cannot be computed, so this sequence does not draft.
      broken_ = true;
      return;
    }
    // Pairs (h_p, t_{p+1}) for the positions not yet run; p + 1 < len always (the target
    // confirms positions before the last token only).
    const int64_t from = valid_, to = std::min(first + m, len - 1);
    if (to <= from) return;
    const int64_t n = to - from;
    if (!kv.reserve(seq_, to).ok()) {
      broken_ = true;  // the block's pool is full: no drafts for this sequence
      return;
    }
    toks_.assign(tokens.begin() + from + 1, tokens.begin() + to + 1);
    pos_.resize(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) pos_[i] = static_cast<int32_t>(from + i);
    const auto hid =
        rows.subspan(static_cast<size_t>((from - first) * e_), static_cast<size_t>(n * e_));
    if (!run(hid)) {
      broken_ = true;
      return;
    }
    valid_ = to;
    keys_.assign(tokens.begin() + 1, tokens.begin() + valid_ + 1);
    kv.commit(seq_, keys_, valid_);
  }

  int64_t reusable_prefix(std::span<const int32_t> tokens) override {
    if (seq_ < 0 && !broken_ && tokens.size() > 1) {
      KvCache& kv = *d_.kv_;
      seq_ = kv.add_sequence();
      // Entry p is keyed by token p + 1 on a chain rooted in token 0, so a block's hash covers
      // every token its entries depend on; the sentinel keeps attach from holding back a token.
      keys_.assign(tokens.begin() + 1, tokens.end());
      keys_.push_back(-1);
      valid_ = kv.attach_cached_prefix(seq_, keys_, kv_block_hash(0x6d7470, tokens.first(1)));
    }
    return valid_;
  }

  void propose(std::span<const int32_t> tokens, int k, std::vector<int32_t>& out) override {
    const auto len = static_cast<int64_t>(tokens.size());
    // Draft 1 comes from the entry of the position before the last token: it must be the
    // target's, computed at the last observe.
    if (broken_ || k <= 0 || valid_ != len - 1 || logits_.empty()) return;
    int32_t t = argmax(logits_);
    out.push_back(t);
    chain_h_ = hidden_;
    for (int i = 1; i < k; ++i) {
      // The pair (g_p, drafted t_{p+1}) at p = len - 2 + i, past the confirmed entries.
      const int64_t p = len - 2 + i;
      if (!d_.kv_->reserve(seq_, p + 1).ok()) break;
      toks_.assign(1, t);
      pos_.assign(1, static_cast<int32_t>(p));
      std::vector<float> h = chain_h_;
      if (!run(h)) break;
      t = argmax(logits_);
      chain_h_ = hidden_;
      out.push_back(t);
    }
    // The chain overwrote logits_ and hidden_; the next observe computes them again.
    if (k > 1) logits_.clear();
  }

 private:
  // Runs the pairs toks_ / pos_ with hidden states `hid` ([n, n_embd]); on success logits_ and
  // hidden_ hold the last pair's logits and block output.
  bool run(std::span<const float> hid) {
    seqs_.assign(toks_.size(), seq_);
    const auto last = static_cast<int32_t>(toks_.size() - 1);
    ForwardBatch b;
    b.tokens = toks_;
    b.positions = pos_;
    b.seq_ids = seqs_;
    b.logit_rows = std::span(&last, 1);
    b.hidden = hid;
    auto l = d_.exec_->run(b);
    Status s = l.ok() ? d_.exec_->fetch_hidden(last, 1, hidden_) : l.status();
    if (!s.ok()) {
      logger("sched")->warn("multi-token-prediction step failed: {}", s.to_string());
      return false;
    }
    logits_ = std::move(*l);
    return true;
  }

  MtpDrafter& d_;
  const int64_t e_;
  int32_t seq_ = -1;
  int64_t valid_ = 0;           // entries [0, valid_) computed from the target's hidden states
  bool broken_ = false;         // entries this sequence needs cannot be computed: no drafts
  std::vector<float> logits_;   // [n_vocab] of the last entry run
  std::vector<float> hidden_;   // [n_embd] its block output
  std::vector<float> chain_h_;  // [n_embd] the chain's current hidden state
  std::vector<int32_t> toks_, pos_, seqs_, keys_;
};

uint64_t mtp_bytes(const gguf::File& file, const ModelConfig& target, int64_t kv_tokens,
                   DType kv_type) {
  if (target.n_nextn <= 0) return 0;
  uint64_t bytes = 0;
  const std::string prefix = "blk." + std::to_string(target.n_layer) + ".";
  for (const gguf::TensorInfo& t : file.tensors()) {
    if (t.name.rfind(prefix, 0) == 0) bytes += t.n_bytes;
  }
  ModelConfig one = target;
  one.n_layer = 1;
  return bytes + static_cast<uint64_t>(one.kv_values_per_token()) *
                     (kv_type == DType::F16 ? 2 : 4) * static_cast<uint64_t>(kv_tokens);
}

Result<std::shared_ptr<MtpDrafter>> MtpDrafter::load(gguf::File file, const Model& target,
                                                     Backend& backend, const MtpOptions& opt) {
  std::shared_ptr<MtpDrafter> d(new MtpDrafter());
  d->opt_ = opt;
  ARC_ASSIGN_OR_RETURN(d->block_, Model::load_mtp(std::move(file), target, backend));
  const ModelConfig& c = d->block_->config();
  const int64_t block = std::max<int64_t>(1, opt.block_size);
  const KvCacheOptions kvo =
      kv_cache_options(c, block, (opt.kv_tokens + block - 1) / block, opt.kv_type);
  auto kv = KvCache::create(backend, kvo);
  if (!kv.ok()) return kv.status().with_context("the multi-token-prediction block's KV cache");
  d->kv_ = std::move(*kv);
  d->exec_ = std::make_unique<ForwardExecutor>(*d->block_, backend, *d->kv_);
  return d;
}

MtpDrafter::~MtpDrafter() = default;

std::unique_ptr<SequenceDrafter> MtpDrafter::start(std::span<const int32_t>) {
  return std::make_unique<Sequence>(*this);
}

}  // namespace arc
