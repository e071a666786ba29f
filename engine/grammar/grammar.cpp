#include "grammar/grammar.h"

#include <cstdio>

namespace arc::grammar {

int32_t GrammarBuilder::declare(std::string name) {
  g_.alts.emplace_back();
  g_.names.push_back(std::move(name));
  return static_cast<int32_t>(g_.alts.size()) - 1;
}

void GrammarBuilder::add_alt(int32_t rule, Seq seq) {
  g_.alts[static_cast<size_t>(rule)].push_back(static_cast<int32_t>(g_.elements.size()));
  for (const Sym& s : seq) g_.elements.push_back({s.kind, s.arg});
  g_.elements.push_back({ElemKind::kEnd, rule});
}

Sym GrammarBuilder::rule(std::string name, std::vector<Seq> alts) {
  const int32_t r = declare(std::move(name));
  for (Seq& a : alts) add_alt(r, std::move(a));
  return ref(r);
}

Sym GrammarBuilder::bytes(const ByteSet& set) {
  // Few distinct classes in practice: share them (the matcher's caches key on positions, not
  // classes, so this only saves memory).
  for (size_t i = 0; i < g_.sets.size(); ++i) {
    if (g_.sets[i] == set) return {ElemKind::kBytes, static_cast<int32_t>(i)};
  }
  g_.sets.push_back(set);
  return {ElemKind::kBytes, static_cast<int32_t>(g_.sets.size()) - 1};
}

Sym GrammarBuilder::byte(uint8_t b) {
  return bytes(ByteSet{}.add(b));
}

Seq GrammarBuilder::literal(std::string_view text) {
  Seq s;
  for (char c : text) s.push_back(byte(static_cast<uint8_t>(c)));
  return s;
}

Sym GrammarBuilder::repeat(const std::string& name, Sym s, int64_t min, int64_t max) {
  Seq head;
  for (int64_t i = 0; i < min; ++i) head.push_back(s);
  if (max < 0) {
    // star ::= s star | ε
    const int32_t star = declare(name + "_star");
    add_alt(star, {s, ref(star)});
    add_alt(star, {});
    head.push_back(ref(star));
  } else if (max > min) {
    // opt_k ::= s opt_{k-1} | ε, opt_1 ::= s | ε
    int32_t prev = -1;
    for (int64_t k = 1; k <= max - min; ++k) {
      const int32_t r = declare(name + "_upto" + std::to_string(k));
      Seq a{s};
      if (prev >= 0) a.push_back(ref(prev));
      add_alt(r, std::move(a));
      add_alt(r, {});
      prev = r;
    }
    head.push_back(ref(prev));
  }
  return rule(name, {std::move(head)});
}

Sym GrammarBuilder::until(const std::string& name, std::string_view stop, const Seq& then,
                          bool free_text) {
  const size_t m = stop.size();
  if (m == 0) return rule(name, {then});
  // pi[i]: the longest proper prefix of stop[0..i] that is also its suffix.
  std::vector<size_t> pi(m, 0);
  for (size_t i = 1, k = 0; i < m; ++i) {
    while (k > 0 && stop[i] != stop[k]) k = pi[k - 1];
    if (stop[i] == stop[k]) ++k;
    pi[i] = k;
  }
  std::vector<int32_t> state(m);
  for (size_t i = 0; i < m; ++i) state[i] = declare(name + "_" + std::to_string(i));
  for (size_t i = 0; i < m; ++i) {
    std::vector<ByteSet> to(m + 1);  // [next state]: the bytes that lead there
    for (int c = 0; c < 256; ++c) {
      size_t k = i;
      while (k > 0 && static_cast<uint8_t>(stop[k]) != c) k = pi[k - 1];
      if (static_cast<uint8_t>(stop[k]) == c) ++k;
      to[k].add(static_cast<uint8_t>(c));
    }
    for (size_t k = 0; k <= m; ++k) {
      if (to[k] == ByteSet{}) continue;
      Seq a{bytes(to[k])};
      if (k < m) {
        a.push_back(ref(state[k]));
      } else {
        a.insert(a.end(), then.begin(), then.end());
        if (free_text) a.push_back(ref(state[0]));
      }
      add_alt(state[i], std::move(a));
    }
    if (free_text) add_alt(state[i], {});
  }
  return ref(state[0]);
}

Grammar GrammarBuilder::build(int32_t root) && {
  g_.root = root;
  return std::move(g_);
}

namespace {

std::string set_text(const ByteSet& s) {
  auto one_byte = [](int b) {
    char buf[8];
    if (b >= 0x21 && b < 0x7f && b != ']' && b != '\\' && b != '-' && b != '^') {
      return std::string(1, static_cast<char>(b));
    }
    std::snprintf(buf, sizeof buf, "\\x%02X", b);
    return std::string(buf);
  };
  std::string out = "[";
  for (int b = 0; b < 256; ++b) {
    if (!s.has(static_cast<uint8_t>(b))) continue;
    int e = b;
    while (e + 1 < 256 && s.has(static_cast<uint8_t>(e + 1))) ++e;
    out += one_byte(b);
    if (e > b) out += "-" + one_byte(e);
    b = e;
  }
  return out + "]";
}

}  // namespace

std::string Grammar::to_string() const {
  std::string out;
  for (size_t r = 0; r < alts.size(); ++r) {
    out += names[r] + " ::=";
    for (size_t a = 0; a < alts[r].size(); ++a) {
      if (a > 0) out += " |";
      for (int32_t i = alts[r][a]; elements[static_cast<size_t>(i)].kind != ElemKind::kEnd; ++i) {
        const Element& e = elements[static_cast<size_t>(i)];
        out += " ";
        out += e.kind == ElemKind::kRule ? names[static_cast<size_t>(e.arg)]
                                         : set_text(sets[static_cast<size_t>(e.arg)]);
      }
      if (elements[static_cast<size_t>(alts[r][a])].kind == ElemKind::kEnd) out += " \"\"";
    }
    out += "\n";
  }
  return out;
}

}  // namespace arc::grammar
