// Which tokens of a model's vocabulary may come next under a grammar: a bit per token id.
//
// TokenVocab (once per model): every token's bytes, the usable ones sorted, with the length of
// the prefix each shares with the one before it, so that one walk over the sorted list visits
// each distinct prefix once (a token trie, flattened). Special tokens are never usable; the
// end-of-generation ids are allowed only where the document is complete.
//
// TokenMasker (once per grammar and vocabulary, shared by the requests that use the grammar):
// the matcher's heads are grouped by their stack; a group's positions and the return positions
// of the stack's top kContextFrames frames are a "context". For one context it walks the whole
// vocabulary once, on the first use, and sorts every token into
//   accepted:  some path consumes all its bytes inside the context;
//   rejected:  every path fails inside the context;
//   uncertain: a path leaves the context (returns past its frames) with bytes left over; what
//              follows depends on the rest of the stack. It is stored as the bytes left over.
// Per step only the uncertain tokens' leftovers are matched, from the state the real stack
// gives after leaving the context; the accepted ones are an OR of a cached bitset. Inside a
// JSON string (most of a document) nearly every token is accepted and only those that close the
// string and go on (`",`, `"}`) are uncertain.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "grammar/matcher.h"

namespace arc::grammar {

class TokenVocab {
 public:
  // bytes: [n_vocab] each token's bytes; usable: [n_vocab] false for special tokens (never
  // allowed); stops: ids that end the generation (allowed when the document is complete).
  TokenVocab(std::vector<std::string> bytes, const std::vector<bool>& usable,
             std::vector<int32_t> stops);

  int64_t n_vocab() const { return static_cast<int64_t>(bytes_.size()); }
  std::string_view bytes(int32_t id) const { return bytes_[static_cast<size_t>(id)]; }
  const std::vector<int32_t>& sorted() const { return sorted_; }  // usable ids by their bytes
  const std::vector<uint16_t>& lcp() const { return lcp_; }  // [sorted] prefix shared with prior
  const std::vector<int32_t>& stops() const { return stops_; }

 private:
  std::vector<std::string> bytes_;
  std::vector<int32_t> sorted_;
  std::vector<uint16_t> lcp_;
  std::vector<int32_t> stops_;
};

// A mask over the vocabulary: bit i of word i / 64 set when token i is allowed.
using TokenMask = std::vector<uint64_t>;

class TokenMasker {
 public:
  static constexpr int kContextFrames = 2;

  TokenMasker(std::shared_ptr<const Grammar> grammar, std::shared_ptr<const TokenVocab> vocab);

  const std::shared_ptr<const Grammar>& grammar() const { return grammar_; }
  const TokenVocab& vocab() const { return *vocab_; }

  // The tokens that may follow the matcher's state ([(n_vocab + 63) / 64] words; n_vocab of
  // the vocabulary, which may be below the model's logit rows). Thread-safe (the cache has a
  // lock); the matcher belongs to the caller.
  void fill(Matcher& m, TokenMask& mask);

  size_t n_contexts() const;

 private:
  struct Context {
    std::vector<int32_t> pos;             // the heads' positions, sorted
    int32_t frames[kContextFrames] = {};  // return positions, top first; kRootFrame past the end
    bool open = false;                    // the real stack goes on below the frames
    bool operator==(const Context&) const = default;
  };
  struct ContextHash {
    size_t operator()(const Context& c) const;
  };
  struct Entry {
    TokenMask bits;                 // accepted, when many
    std::vector<int32_t> accepted;  // accepted, when few (bits empty)
    // Leftovers of uncertain tokens: sorted distinct byte strings, each with its tokens.
    std::vector<std::string> leftovers;
    std::vector<uint16_t> leftover_lcp;
    std::vector<uint32_t> leftover_tokens_begin;  // [leftovers + 1] into leftover_tokens
    std::vector<int32_t> leftover_tokens;
  };
  // The context of the heads [begin, end) that share one frame.
  Context context_of(Pda& pda, const Head* begin, const Head* end, int32_t& below) const;
  const Entry& entry(const Context& c);
  Entry compute(const Context& c);

  std::shared_ptr<const Grammar> grammar_;
  std::shared_ptr<const TokenVocab> vocab_;
  mutable std::mutex mu_;
  std::unordered_map<Context, std::unique_ptr<Entry>, ContextHash> cache_;
  // The walks of compute(): their own automaton, whose stacks end in kOpenFrame.
  Pda pda_;
  LazyDfa dfa_;
  std::vector<int32_t> depth_states_;
};

// Sets logits of tokens the mask does not allow to -inf. logits: [n] (n may exceed the
// mask's vocabulary: the ids past it are disallowed).
void apply_mask(const TokenMask& mask, int64_t n_mask_vocab, std::span<float> logits);

}  // namespace arc::grammar
