// Saved reference logits (--save-logits / --reference-logits): what one run of a reference model
// over a text leaves for later comparisons, so several builds are measured against one run of
// the big model.
//
// Layout (little-endian): "ARCEVLG1", uint64 header length, the header as JSON (model, tokenizer
// fingerprint, text name, ctx, stride, top_k, tail_target, samples, n_vocab, windows done, row,
// entry and sample counts, the text's token ids), then per scored token in window order: float
// target_logp, double tail_mass, double tail_plogp, int32 count, count pairs (int32 id, float
// logp), int32 sample count, that many pairs (int32 id, float logp): 28 bytes a token plus 8 per
// kept entry and per tail sample.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "arc/eval/token_metrics.h"
#include "arc/status.h"

namespace arc::eval {

struct ReferenceLogits {
  std::string model;                  // the reference model's file name, for the report
  std::string tokenizer_fingerprint;  // tokenizer_fingerprint() of its tokenizer
  std::string text_name;              // "built-in" or the text file's name
  int64_t ctx = 0;
  int64_t stride = 0;
  int64_t n_vocab = 0;
  int64_t windows_done = 0;     // windows whose rows follow (fewer than planned if stopped)
  std::vector<int32_t> tokens;  // the whole text's tokens, window first tokens as in the text
  CompressedLogits rows;        // the scored tokens of the first windows_done windows
};

Status write_reference_logits(const std::string& path, const ReferenceLogits& ref);
// Validates everything it reads (sizes, ids within n_vocab, finite values): a truncated or
// foreign file is a DATA_LOSS error naming the file.
Result<ReferenceLogits> read_reference_logits(const std::string& path);

}  // namespace arc::eval
