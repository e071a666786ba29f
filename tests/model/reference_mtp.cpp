// The multi-token-prediction block of the reference model, written from the published
// definition: DeepSeek-V3 technical report section 2.2 (the MTP module: h'_i = M [RMSNorm(h_i);
// RMSNorm(Emb(t_{i+1}))], a transformer block over the sequence of h', the shared output head)
// and vLLM's DeepSeekMultiTokenPredictorLayer / GLM-4.5's nextn layer (enorm, hnorm, eh_proj,
// the block, shared_head norm and head; embed_tokens and shared_head.head may be absent and are
// then the model's). The block is an ordinary layer of the family: for deepseek2 its attention is
// the reference MLA (reference_deepseek2.cpp: keys and values decompressed per head), so the
// engine's absorbed MLA over the block's own latent cache is checked against it.
#include <stdexcept>

#include "model/reference_forward.h"

namespace arc::testing {

std::vector<std::vector<double>> ReferenceModel::hidden(const std::vector<int32_t>& tokens) const {
  const int64_t n = static_cast<int64_t>(tokens.size());
  const Mat& emb = t("token_embd.weight");
  std::vector<std::vector<double>> x(static_cast<size_t>(n));
  std::vector<std::array<int64_t, 3>> pos(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    x[i].assign(emb.row(tokens[i]), emb.row(tokens[i]) + n_embd_);
    pos[i] = {i, i, i};
  }
  for (int64_t l = 0; l < n_layer_; ++l) layer(l, x, pos, nullptr);
  return x;
}

ReferenceModel::MtpOut ReferenceModel::mtp(const std::vector<std::vector<double>>& h,
                                           const std::vector<int32_t>& next) const {
  if (n_nextn_ < 1) throw std::runtime_error("reference: the model has no nextn block");
  if (h.size() != next.size()) throw std::runtime_error("reference: mtp pairs differ in length");
  const std::string p = "blk." + std::to_string(n_layer_) + ".";
  const Mat& emb = has(p + "nextn.embed_tokens.weight") ? t(p + "nextn.embed_tokens.weight")
                                                        : t("token_embd.weight");
  const int64_t n = static_cast<int64_t>(h.size());
  std::vector<std::vector<double>> x(static_cast<size_t>(n));
  std::vector<std::array<int64_t, 3>> pos(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    const std::vector<double> e(emb.row(next[i]), emb.row(next[i]) + n_embd_);
    // [enorm(embedding); hnorm(hidden)]: the embedding's half first.
    std::vector<double> cat = rms(e, &t(p + "nextn.enorm.weight"), 0, n_embd_);
    const std::vector<double> hn = rms(h[i], &t(p + "nextn.hnorm.weight"), 0, n_embd_);
    cat.insert(cat.end(), hn.begin(), hn.end());
    x[i] = matvec(t(p + "nextn.eh_proj.weight"), cat);
    pos[i] = {i, i, i};
  }
  layer(n_layer_, x, pos, nullptr);
  const Mat& norm = has(p + "nextn.shared_head_norm.weight")
                        ? t(p + "nextn.shared_head_norm.weight")
                        : t("output_norm.weight");
  const Mat& head = has(p + "nextn.shared_head_head.weight")
                        ? t(p + "nextn.shared_head_head.weight")
                    : has("output.weight") ? t("output.weight")
                                           : t("token_embd.weight");
  MtpOut out;
  out.hidden = x;
  for (int64_t i = 0; i < n; ++i) out.logits.push_back(matvec(head, rms(x[i], &norm, 0, n_embd_)));
  return out;
}

}  // namespace arc::testing
