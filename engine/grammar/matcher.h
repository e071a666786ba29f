// The grammar (grammar/grammar.h) run as a pushdown automaton over bytes.
//
// A parse is a set of heads. A head is a position (an element of an alternative that is a byte
// class, the next byte to match) and a stack of return addresses, stored as a frame id. Frames
// are immutable and hash-consed in an arena ((return position, parent frame) -> id), so two
// heads with the same stack have the same frame id: a loop in the grammar (a string's
// characters, a list's items) reuses the same frames forever instead of growing, duplicate
// heads collapse, and a state is cheap to copy (a few ints per head).
//
// A rule referenced last in an alternative pushes no frame (tail call): a loop written as
// recursion (star ::= x star | "") keeps the same stack however often it turns.
//
// Frame ids below zero are the bottoms: kRootFrame (returning from it means the document is
// complete) and kOpenFrame (the rest of the stack is unknown: used when the token masks of one
// position are computed for every stack at once, grammar/token_mask.h).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "grammar/grammar.h"

namespace arc::grammar {

constexpr int32_t kRootFrame = -1;
constexpr int32_t kOpenFrame = -2;

struct Head {
  int32_t pos = 0;    // element index of a kBytes element
  int32_t frame = 0;  // return stack
  bool operator==(const Head&) const = default;
};

// What an expansion reached besides heads.
enum : uint8_t {
  kReachedRoot = 1,  // the root rule ended: the document is complete here
  kReachedOpen = 2,  // returned into kOpenFrame: the rule of the position ended
};

class Pda {
 public:
  explicit Pda(std::shared_ptr<const Grammar> g);

  const Grammar& grammar() const { return *g_; }

  // The heads of the document's start, or of a position with an unknown stack (kOpenFrame).
  void start(std::vector<Head>& out, uint8_t& reached);
  // Heads after byte `b` from `in` (out is cleared first).
  void step(const std::vector<Head>& in, uint8_t b, std::vector<Head>& out, uint8_t& reached);

  // Heads after returning from `frame` (>= 0): its return position with its parent stack.
  void resume(int32_t frame, std::vector<Head>& out, uint8_t& reached);

  struct Frame {
    int32_t pos;     // where the parent alternative continues
    int32_t parent;  // the frame below
  };
  const Frame& frame_at(int32_t id) const { return frames_[static_cast<size_t>(id)]; }
  // The frame (pos, parent), created unless it exists.
  int32_t frame(int32_t pos, int32_t parent);
  size_t n_frames() const { return frames_.size(); }

 private:
  // Follows rule references and ends from (pos, frame) down to byte-class heads.
  void expand(int32_t pos, int32_t frame, std::vector<Head>& out, uint8_t& reached);

  std::shared_ptr<const Grammar> g_;
  std::vector<Frame> frames_;
  std::unordered_map<uint64_t, int32_t> index_;
  std::vector<Head> work_;     // expand's worklist
  std::vector<Head> visited_;  // rule references and ends already followed in one expand
};

// Sets of heads interned as states, with their transitions per byte computed on first use (a
// lazily built DFA over the PDA's configurations): walking many tokens that share prefixes or
// loop through the same characters costs a table lookup per byte once warm. State 0 is dead
// (no heads, nothing reached).
class LazyDfa {
 public:
  explicit LazyDfa(Pda& pda);
  static constexpr int32_t kDead = 0;

  int32_t intern(std::vector<Head> heads, uint8_t reached);
  int32_t next(int32_t state, uint8_t b) {
    const size_t at = static_cast<size_t>(state) * 256 + b;
    if (trans_[at] >= 0) return trans_[at];
    const int32_t t = compute(state, b);  // may grow trans_
    trans_[at] = t;
    return t;
  }
  const std::vector<Head>& heads(int32_t s) const { return states_[static_cast<size_t>(s)].heads; }
  uint8_t reached(int32_t s) const { return states_[static_cast<size_t>(s)].reached; }
  size_t n_states() const { return states_.size(); }
  void clear();  // forgets every state but the dead one

 private:
  int32_t compute(int32_t state, uint8_t b);
  struct State {
    std::vector<Head> heads;  // sorted
    uint8_t reached = 0;
    ByteSet first;  // bytes some head takes: any other byte leads to the dead state at once
  };
  Pda& pda_;
  std::vector<State> states_;
  std::vector<int32_t> trans_;  // [state * 256 + byte], -1: not computed
  std::unordered_map<std::string, int32_t> index_;
  std::vector<Head> scratch_;
};

// One document being matched: the state of a constrained generation.
class Matcher {
 public:
  explicit Matcher(std::shared_ptr<const Grammar> g);
  Matcher(const Matcher&) = delete;
  Matcher& operator=(const Matcher&) = delete;

  // Consumes all of `bytes` or nothing: false (state unchanged) when they cannot continue a
  // valid document.
  bool advance(std::string_view bytes);
  // Whether advance(bytes) would succeed, without moving.
  bool accepts(std::string_view bytes);
  // The document may end here.
  bool complete() const { return (dfa_.reached(state_) & kReachedRoot) != 0; }
  // More bytes may follow.
  bool can_continue() const { return !dfa_.heads(state_).empty(); }

  Pda& pda() { return pda_; }
  LazyDfa& dfa() { return dfa_; }
  int32_t state() const { return state_; }
  const std::vector<Head>& heads() const { return dfa_.heads(state_); }

 private:
  Pda pda_;
  LazyDfa dfa_;
  int32_t state_ = LazyDfa::kDead;
};

}  // namespace arc::grammar
