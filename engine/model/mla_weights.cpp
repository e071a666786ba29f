// The derived weight of multi-head latent attention's plain form: k_b transposed per head.
// attn_k_b holds per head [kv_lora_rank rows of nope] (the absorbed form's q_lat = k_b q_nope);
// the plain form decompresses keys k_nope = k_b^T latent, a product over rows of kv_lora_rank,
// so each head's block is transposed once here (dequantized to F32: exact for F32 files, and no
// further rounding of quantized ones). Costs n_layer * n_head * kv_lora_rank * nope * 4 bytes of
// backend memory (DeepSeek-V3: 2 GiB, V2-Lite: 113 MiB).
#include <string>
#include <vector>

#include "arc/kernels/quant.h"
#include "arc/model.h"

namespace arc {

Status Model::derive_mla_weights(Backend& backend) {
  const int64_t n_head = cfg_.n_head, r = cfg_.kv_lora_rank, nope = cfg_.qk_nope_dim();
  if (nope <= 0) return ok_status();
  k_b_t_.assign(static_cast<size_t>(cfg_.n_layer), Weight{});
  std::vector<float> row(static_cast<size_t>(nope));
  for (int64_t l = 0; l < cfg_.n_layer; ++l) {
    const std::string name = "blk." + std::to_string(l) + ".attn_k_b.weight";
    const gguf::TensorInfo* t = file_.find_tensor(name);
    if (t == nullptr) return not_found("tensor " + name + " (MLA key up-projection) is missing");
    const std::span<const uint8_t> src = file_.tensor_data(*t);
    const size_t src_row = *dtype_row_bytes(t->type, static_cast<uint64_t>(nope));
    const size_t bytes = static_cast<size_t>(n_head * nope * r) * sizeof(float);
    if (src.size() < src_row * static_cast<size_t>(n_head * r)) {
      return invalid_argument("tensor " + name + " is smaller than its shape");
    }
    auto* dst = reinterpret_cast<float*>(keep_bytes(bytes));
    for (int64_t h = 0; h < n_head; ++h) {
      for (int64_t j = 0; j < r; ++j) {
        if (!kernels::dequantize_row(t->type, src.data() + static_cast<size_t>(h * r + j) * src_row,
                                     row.data(), nope)) {
          return unimplemented("tensor " + name + ": cannot dequantize " +
                               std::string(dtype_name(t->type)));
        }
        for (int64_t d = 0; d < nope; ++d) dst[(h * nope + d) * r + j] = row[d];  // [h][d][j]
      }
    }
    Weight w;
    ARC_ASSIGN_OR_RETURN(w.data, backend.map_weights(std::span<const uint8_t>(
                                     reinterpret_cast<const uint8_t*>(dst), bytes)));
    w.type = DType::F32;
    w.shape = {r, nope, n_head};
    w.row_bytes = static_cast<size_t>(r) * sizeof(float);
    w.slice_bytes = w.row_bytes * static_cast<size_t>(nope);
    w.n_bytes = bytes;
    k_b_t_[static_cast<size_t>(l)] = std::move(w);
  }
  return ok_status();
}

const Weight& Model::mla_k_b_t(int64_t l) const {
  static const Weight kNone{};
  return static_cast<size_t>(l) < k_b_t_.size() ? k_b_t_[static_cast<size_t>(l)] : kNone;
}

}  // namespace arc
