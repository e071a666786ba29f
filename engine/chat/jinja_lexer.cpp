// Tokenizer for the Jinja subset. Whitespace handling reproduces @huggingface/jinja (the
// reference the fixtures were rendered with): it drops one trailing newline of the template,
// applies lstrip_blocks and trim_blocks as text substitutions before tokenizing, and handles
// {%- / -%} / {{- / -}} / {#- / -#} by trimming the neighbouring text.
#include <cstring>

#include "jinja_ast.h"

namespace arc::jinja {
namespace {

bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}
bool is_digit(char c) {
  return c >= '0' && c <= '9';
}
bool is_word(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || is_digit(c) || c == '_';
}

// Removes "{% generation %}" / "{% endgeneration %}" markers (training-only), with the
// whitespace before (when "{%-") and after (when "-%}") them.
std::string strip_generation_tags(const std::string& s) {
  std::string out;
  size_t i = 0;
  while (i < s.size()) {
    size_t open = s.find("{%", i);
    if (open == std::string::npos) break;
    size_t p = open + 2;
    bool lstrip = p < s.size() && s[p] == '-';
    if (lstrip) ++p;
    while (p < s.size() && is_space(s[p])) ++p;
    if (s.compare(p, 3, "end") == 0) p += 3;
    bool match = s.compare(p, 10, "generation") == 0;
    if (match) {
      p += 10;
      while (p < s.size() && is_space(s[p])) ++p;
      bool rstrip = p < s.size() && s[p] == '-';
      if (rstrip) ++p;
      match = s.compare(p, 2, "%}") == 0;
      if (match) {
        p += 2;
        size_t before = open;
        while (before > i && is_space(s[before - 1])) --before;
        out.append(s, i, before - i);
        if (!lstrip) out.append(s, before, open - before);
        size_t after = p;
        while (after < s.size() && is_space(s[after])) ++after;
        if (!rstrip) out.append(s, p, after - p);
        i = after;
        continue;
      }
    }
    out.append(s, i, open + 2 - i);
    i = open + 2;
  }
  out.append(s, i, std::string::npos);
  return out;
}

std::string preprocess(std::string s) {
  if (!s.empty() && s.back() == '\n') s.pop_back();
  // lstrip_blocks: /^[ \t]*({[#%-])/gm -> "$1"
  std::string t;
  t.reserve(s.size());
  size_t i = 0;
  while (i < s.size()) {
    // i is at a line start here
    size_t j = i;
    while (j < s.size() && (s[j] == ' ' || s[j] == '\t')) ++j;
    if (j + 1 < s.size() && s[j] == '{' &&
        (s[j + 1] == '#' || s[j + 1] == '%' || s[j + 1] == '-')) {
      i = j;
    }
    size_t nl = s.find('\n', i);
    size_t end = nl == std::string::npos ? s.size() : nl + 1;
    t.append(s, i, end - i);
    i = end;
  }
  // trim_blocks: /([#%-]})\n/g -> "$1"
  std::string u;
  u.reserve(t.size());
  for (size_t k = 0; k < t.size(); ++k) {
    if (t[k] == '\n' && k >= 2 && t[k - 1] == '}' &&
        (t[k - 2] == '#' || t[k - 2] == '%' || t[k - 2] == '-')) {
      continue;
    }
    u += t[k];
  }
  return strip_generation_tags(u);
}

class Lexer {
 public:
  explicit Lexer(std::string src) : src_(std::move(src)) {}

  std::vector<Token> run() {
    while (pos_ < src_.size()) {
      Tok last = tokens_.empty() ? Tok::kEnd : tokens_.back().type;
      if (tokens_.empty() || last == Tok::kCloseStmt || last == Tok::kCloseExpr || after_comment_) {
        after_comment_ = false;
        size_t start = pos_;
        while (pos_ < src_.size() &&
               !(src_[pos_] == '{' && pos_ + 1 < src_.size() &&
                 (src_[pos_ + 1] == '%' || src_[pos_ + 1] == '{' || src_[pos_ + 1] == '#'))) {
          ++pos_;
        }
        if (pos_ > start) {
          push(Tok::kText, src_.substr(start, pos_ - start), start);
          continue;
        }
      }
      if (starts("{#")) {
        comment();
        continue;
      }
      if (starts("{%-") || starts("{{-")) {
        strip_trailing_text();
        bool stmt = src_[pos_ + 1] == '%';
        push(stmt ? Tok::kOpenStmt : Tok::kOpenExpr, stmt ? "{%" : "{{", pos_);
        depth_ = 0;
        pos_ += 3;
        continue;
      }
      while (pos_ < src_.size() && is_space(src_[pos_])) ++pos_;
      if (pos_ >= src_.size()) break;
      if (starts("-%}") || (starts("-}}") && depth_ == 0)) {
        bool stmt = src_[pos_ + 1] == '%';
        push(stmt ? Tok::kCloseStmt : Tok::kCloseExpr, stmt ? "%}" : "}}", pos_);
        pos_ += 3;
        while (pos_ < src_.size() && is_space(src_[pos_])) ++pos_;
        continue;
      }
      if (operator_token()) continue;
      char c = src_[pos_];
      if (c == '\'' || c == '"') {
        string_literal(c);
        continue;
      }
      if (is_digit(c)) {
        size_t start = pos_;
        while (pos_ < src_.size() && is_digit(src_[pos_])) ++pos_;
        bool after_dot =
            !tokens_.empty() && tokens_.back().type == Tok::kPunct && tokens_.back().text == ".";
        if (!after_dot && pos_ + 1 < src_.size() && src_[pos_] == '.' && is_digit(src_[pos_ + 1])) {
          ++pos_;
          while (pos_ < src_.size() && is_digit(src_[pos_])) ++pos_;
          push(Tok::kFloat, src_.substr(start, pos_ - start), start);
        } else {
          push(Tok::kInt, src_.substr(start, pos_ - start), start);
        }
        continue;
      }
      if (is_word(c)) {
        size_t start = pos_;
        while (pos_ < src_.size() && is_word(src_[pos_])) ++pos_;
        push(Tok::kName, src_.substr(start, pos_ - start), start);
        continue;
      }
      if (static_cast<unsigned char>(c) >= 0x80) {
        // Identifiers beyond ASCII are not supported; report the character, not a byte.
        fail("unexpected non-ASCII character inside a tag", pos_);
      }
      fail(std::string("unexpected character '") + c + "'", pos_);
    }
    Token end{Tok::kEnd, "", 0, 0};
    position(src_.size(), end.line, end.column);
    tokens_.push_back(end);
    return std::move(tokens_);
  }

 private:
  bool starts(const char* s) const { return src_.compare(pos_, std::strlen(s), s) == 0; }

  void position(size_t at, int& line, int& column) {
    // Incremental: positions are asked for in increasing order.
    if (at < line_pos_) {
      line_pos_ = 0;
      line_ = 1;
      line_start_ = 0;
    }
    for (; line_pos_ < at && line_pos_ < src_.size(); ++line_pos_) {
      if (src_[line_pos_] == '\n') {
        ++line_;
        line_start_ = line_pos_ + 1;
      }
    }
    line = line_;
    column = static_cast<int>(at - line_start_) + 1;
  }

  void push(Tok t, std::string text, size_t at) {
    last_was_comment_ = false;
    Token tok{t, std::move(text), 0, 0};
    position(at, tok.line, tok.column);
    tokens_.push_back(std::move(tok));
  }

  [[noreturn]] void fail(const std::string& msg, size_t at) {
    int line, column;
    position(at, line, column);
    throw Error(msg, line, column);
  }

  void strip_trailing_text() {
    if (tokens_.empty() || tokens_.back().type != Tok::kText || last_was_comment_) return;
    std::string& t = tokens_.back().text;
    while (!t.empty() && is_space(t.back())) t.pop_back();
    if (t.empty()) tokens_.pop_back();
  }

  void comment() {
    size_t start = pos_;
    pos_ += 2;
    bool strip_before = pos_ < src_.size() && src_[pos_] == '-';
    size_t close = src_.find("#}", pos_);
    if (close == std::string::npos) fail("comment is never closed: missing '#}'", start);
    bool strip_after = close > pos_ && src_[close - 1] == '-';
    if (strip_before) strip_trailing_text();
    pos_ = close + 2;
    if (strip_after) {
      while (pos_ < src_.size() && is_space(src_[pos_])) ++pos_;
    }
    after_comment_ = true;
    last_was_comment_ = true;
  }

  bool operator_token() {
    static const char* const kOps[] = {"{%", "%}", "{{", "}}", "(",  ")",  "{",  "}",  "[", "]",
                                       ",",  ".",  ":",  "|",  "<=", ">=", "==", "!=", "<", ">",
                                       "+",  "-",  "~",  "**", "*",  "//", "/",  "%",  "="};
    for (const char* op : kOps) {
      if (!starts(op)) continue;
      std::string s(op);
      if (s == "}}" && depth_ > 0) continue;
      Tok t = Tok::kPunct;
      if (s == "{%") t = Tok::kOpenStmt;
      if (s == "%}") t = Tok::kCloseStmt;
      if (s == "{{") t = Tok::kOpenExpr;
      if (s == "}}") t = Tok::kCloseExpr;
      if (t == Tok::kOpenExpr) depth_ = 0;
      if (s == "{") ++depth_;
      if (s == "}") --depth_;
      push(t, s, pos_);
      pos_ += s.size();
      return true;
    }
    return false;
  }

  void string_literal(char quote) {
    size_t start = pos_;
    ++pos_;
    std::string out;
    while (true) {
      if (pos_ >= src_.size()) fail("string literal is never closed", start);
      char c = src_[pos_];
      if (c == quote) break;
      if (c == '\\') {
        if (pos_ + 1 >= src_.size()) fail("string literal is never closed", start);
        char e = src_[pos_ + 1];
        pos_ += 2;
        switch (e) {
          case 'n':
            out += '\n';
            break;
          case 't':
            out += '\t';
            break;
          case 'r':
            out += '\r';
            break;
          case 'b':
            out += '\b';
            break;
          case 'f':
            out += '\f';
            break;
          case 'v':
            out += '\v';
            break;
          case '\'':
            out += '\'';
            break;
          case '"':
            out += '"';
            break;
          case '\\':
            out += '\\';
            break;
          case 'x':
          case 'u': {
            size_t n = e == 'x' ? 2 : 4;
            if (pos_ + n > src_.size()) fail("bad \\x or \\u escape in string literal", pos_);
            uint32_t cp = 0;
            for (size_t k = 0; k < n; ++k) {
              char h = src_[pos_ + k];
              int v = is_digit(h)              ? h - '0'
                      : (h >= 'a' && h <= 'f') ? h - 'a' + 10
                      : (h >= 'A' && h <= 'F') ? h - 'A' + 10
                                               : -1;
              if (v < 0) fail("bad hexadecimal escape in string literal", pos_);
              cp = cp * 16 + static_cast<uint32_t>(v);
            }
            pos_ += n;
            out += utf8_encode({cp}, 0, 1);
            break;
          }
          default:
            fail(std::string("unknown escape '\\") + e + "' in string literal", pos_ - 2);
        }
        continue;
      }
      out += c;
      ++pos_;
    }
    ++pos_;
    push(Tok::kString, std::move(out), start);
  }

  std::string src_;
  size_t pos_ = 0;
  int depth_ = 0;  // curly-bracket depth inside {{ }}: "}}" closes the tag only at depth 0
  bool after_comment_ = false;
  bool last_was_comment_ = false;  // the reference keeps a comment token: no trim across it
  std::vector<Token> tokens_;
  size_t line_pos_ = 0;
  int line_ = 1;
  size_t line_start_ = 0;
};

}  // namespace

std::vector<Token> tokenize(const std::string& source) {
  return Lexer(preprocess(source)).run();
}

}  // namespace arc::jinja
