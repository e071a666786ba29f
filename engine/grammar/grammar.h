// A context-free grammar over bytes, the form every structured-output constraint is compiled to
// (JSON Schema, plain JSON, a tool call in a model family's syntax). Rules have alternatives;
// an alternative is a sequence of symbols: a byte class (a set of the 256 byte values) or a
// reference to a rule. The matcher (grammar/matcher.h) runs it as a pushdown automaton.
//
// Grammars are built by GrammarBuilder, never by hand: it has no left recursion and no rule that
// can derive the empty string through itself (the matcher relies on both to terminate).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace arc::grammar {

// A set of byte values.
struct ByteSet {
  uint64_t w[4] = {0, 0, 0, 0};
  bool has(uint8_t b) const { return (w[b >> 6] >> (b & 63)) & 1u; }
  ByteSet& add(uint8_t b) {
    w[b >> 6] |= uint64_t{1} << (b & 63);
    return *this;
  }
  ByteSet& add_range(uint8_t lo, uint8_t hi) {
    for (int b = lo; b <= hi; ++b) add(static_cast<uint8_t>(b));
    return *this;
  }
  bool operator==(const ByteSet&) const = default;
};

enum class ElemKind : uint8_t {
  kBytes = 0,  // arg: index into Grammar::sets
  kRule = 1,   // arg: rule id
  kEnd = 2,    // end of an alternative
};

struct Element {
  ElemKind kind = ElemKind::kEnd;
  int32_t arg = 0;
};

struct Grammar {
  std::vector<Element> elements;           // every alternative's symbols, each followed by kEnd
  std::vector<std::vector<int32_t>> alts;  // [rule] -> first element of each alternative
  std::vector<ByteSet> sets;
  std::vector<std::string> names;  // [rule] for messages and dumps
  int32_t root = 0;

  // Readable form (GBNF-like), for tests and debugging.
  std::string to_string() const;
};

// A symbol of an alternative being built.
struct Sym {
  ElemKind kind = ElemKind::kBytes;
  int32_t arg = 0;
};
using Seq = std::vector<Sym>;

class GrammarBuilder {
 public:
  // A new rule without alternatives yet (so that it can be referenced before it is defined).
  int32_t declare(std::string name);
  void add_alt(int32_t rule, Seq seq);
  // A rule with the given alternatives; returns a symbol referring to it.
  Sym rule(std::string name, std::vector<Seq> alts);
  Sym ref(int32_t rule) const { return {ElemKind::kRule, rule}; }

  Sym bytes(const ByteSet& set);  // one byte of the class
  Sym byte(uint8_t b);
  Seq literal(std::string_view text);  // the exact bytes

  // Repetition of a symbol that never matches the empty string: min..max times (max < 0:
  // unbounded). Counted forms become a chain of rules, so keep max small.
  Sym repeat(const std::string& name, Sym s, int64_t min, int64_t max);

  // Any bytes up to and including the first occurrence of `stop` (a reasoning block up to
  // "</think>"), then `then`: a matcher of the text so far (Knuth-Morris-Pratt), one rule per
  // matched prefix. free_text: the text may also end anywhere, and after `then` it starts again
  // (free text in which `stop` opens a constrained part: tool calls).
  Sym until(const std::string& name, std::string_view stop, const Seq& then = {},
            bool free_text = false);

  int32_t n_rules() const { return static_cast<int32_t>(g_.alts.size()); }
  size_t n_elements() const { return g_.elements.size(); }
  Grammar build(int32_t root) &&;

 private:
  Grammar g_;
};

// Concatenation helpers.
inline Seq cat(std::initializer_list<Seq> parts) {
  Seq out;
  for (const Seq& p : parts) out.insert(out.end(), p.begin(), p.end());
  return out;
}
inline Seq one(Sym s) {
  return Seq{s};
}

}  // namespace arc::grammar
