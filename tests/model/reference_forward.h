// A plain reference forward for the test models: scalar, double precision, one sequence, full
// recompute, written from the families' published definitions. It reads the GGUF metadata and
// tensors itself and uses nothing from the engine's model code; from kernels/ only the
// reference dequantizer (to read quantized weights as the numbers they stand for).
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "arc/gguf.h"

namespace arc::testing {

// Image inputs of a qwen3vlmoe forward (transformers' Qwen3VLMoeModel): per token its rotary
// positions (t, h, w), and for image tokens the embedding that replaces the token's and the
// deepstack features added after layers 0 .. n_deepstack - 1.
struct ReferenceImageInputs {
  std::vector<std::array<int64_t, 3>> rope_pos;             // [n_tokens]
  std::vector<std::vector<double>> embd;                    // [n_tokens]: empty = token's own
  std::vector<std::vector<std::vector<double>>> deepstack;  // [n_tokens][n_deepstack] or empty
};

class ReferenceModel {
 public:
  explicit ReferenceModel(const gguf::File& f);
  // Logits for every position of `tokens`: [n_tokens][n_vocab].
  std::vector<std::vector<double>> forward(const std::vector<int32_t>& tokens,
                                           const ReferenceImageInputs* image = nullptr) const;
  int64_t n_vocab() const { return n_vocab_; }
  int64_t n_embd() const { return n_embd_; }

  // Multi-token prediction (reference_mtp.cpp). The final hidden states of `tokens` (the
  // residual stream after the last layer, before the output norm): [n_tokens][n_embd].
  std::vector<std::vector<double>> hidden(const std::vector<int32_t>& tokens) const;
  // The first nextn block over the pairs (h[p], next[p]) at positions p = 0 .. n - 1 (next[p]
  // the token after the one h[p] belongs to): the logits it gives for the token after next[p],
  // [n][n_vocab], and its output before the head's norm, [n][n_embd].
  struct MtpOut {
    std::vector<std::vector<double>> logits, hidden;
  };
  MtpOut mtp(const std::vector<std::vector<double>>& h, const std::vector<int32_t>& next) const;

 private:
  struct Mat {  // [rows][cols] row-major, GGUF shape [cols, rows(, experts)]
    int64_t rows = 0, cols = 0;
    std::vector<double> v;
    const double* row(int64_t r) const { return v.data() + r * cols; }
  };
  const Mat& t(const std::string& name) const;
  bool has(const std::string& name) const { return w_.count(name) != 0; }
  std::vector<double> matvec(const Mat& m, const std::vector<double>& x, int64_t row0 = 0,
                             int64_t n_rows = -1) const;
  std::vector<double> rms(const std::vector<double>& x, const Mat* w, int64_t off, int64_t n) const;
  void rope(std::vector<double>& x, int64_t n_heads, const std::array<int64_t, 3>& pos) const;
  std::vector<double> ffn(const std::string& p, const std::vector<double>& x) const;
  // Layer l ("blk.<l>.") over the rows x, token i at rotary position pos[i].
  void layer(int64_t l, std::vector<std::vector<double>>& x,
             const std::vector<std::array<int64_t, 3>>& pos,
             const ReferenceImageInputs* image) const;
  // gpt-oss (reference_gpt_oss.cpp): the rotation angle of pair i at `pos` with YaRN, and the
  // MoE FFN with router bias, top-k softmax and biased experts with the clamped SwiGLU.
  double rope_angle(int64_t pos, int64_t i) const;
  std::vector<double> ffn_gpt_oss(const std::string& p, const std::vector<double>& x) const;
  // deepseek2 (reference_deepseek2.cpp): its metadata, the interleaved magnitude-1 rotation of
  // n_rot_ values, and the MLA output of layer prefix p for every token ([n][n_embd]).
  void read_mla(const gguf::File& f);
  void rope_mla(double* v, int64_t pos) const;
  std::vector<std::vector<double>> mla_attention(const std::string& p,
                                                 const std::vector<std::vector<double>>& x) const;

  // qwen3next (reference_qwen3next.cpp): its metadata, and the Gated DeltaNet output of layer
  // prefix p for every token ([n][n_embd]) from a zero state. Layer l is one unless
  // (l + 1) % full_attn_interval_ == 0; the others are attention with a sigmoid output gate.
  void read_hybrid(const gguf::File& f);
  std::vector<std::vector<double>> delta_net(const std::string& p,
                                             const std::vector<std::vector<double>>& x) const;
  int64_t full_attn_interval_ = 0, ssm_kernel_ = 0, ssm_hk_ = 0, ssm_hv_ = 0, ssm_dk_ = 0,
          ssm_dv_ = 0;

  std::string arch_;
  int64_t n_nextn_ = 0;  // multi-token-prediction blocks after the n_layer_ forward layers
  int64_t n_layer_ = 0, n_embd_ = 0, n_head_ = 0, n_kv_ = 0, hd_ = 0, n_vocab_ = 0;
  int64_t n_expert_ = 0, n_used_ = 0;
  int64_t n_rot_ = 0;  // rotated dims per head (partial rotary: glm4moe, minimax-m2)
  // Sigmoid routing (transformers' Glm4MoeTopkRouter, MiniMaxM2TopKRouter): top-k of
  // sigmoid(logit) + e_score_correction_bias, weights the unbiased scores, renormalised when
  // norm_topk_, times routed_scale_.
  bool sigmoid_router_ = false;
  double routed_scale_ = 1.0;
  double eps_ = 1e-6, theta_ = 10000.0;
  bool neox_ = true, norm_topk_ = true;
  std::vector<int64_t> sections_;  // multi-axis rope sections (qwen3vlmoe), empty otherwise
  int64_t n_deepstack_ = 0;
  // gpt-oss: sliding window on layers l % swa_period_ < swa_period_ - 1; YaRN (factor 0: none).
  int64_t swa_ = 0, swa_period_ = 0;
  double yarn_factor_ = 0.0, yarn_orig_ctx_ = 0.0, yarn_beta_fast_ = 32.0, yarn_beta_slow_ = 1.0;
  // deepseek2: q / kv LoRA ranks, value head size, softmax scale; group-limited routing
  // (n_group_ groups scored by the sum of their two best, n_group_used_ kept).
  int64_t q_lora_ = 0, kv_lora_ = 0, v_hd_ = 0, n_group_ = 1, n_group_used_ = 1;
  double mla_scale_ = 0.0;
  std::map<std::string, Mat> w_;
};

}  // namespace arc::testing
