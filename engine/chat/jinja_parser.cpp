// Recursive-descent parser for the Jinja subset. Operator precedence follows the reference
// renderer: ternary < or < and < not < comparison/in < + - ~ < * / // % < unary < ** <
// is-tests < |filters < calls, attributes and subscripts.
#include "jinja_ast.h"

namespace arc::jinja {
namespace {

constexpr int kMaxNesting = 200;  // bounds recursion on hostile input ("((((((...")

class Parser {
 public:
  explicit Parser(const std::vector<Token>& t) : t_(t) {}

  NodeList program() {
    NodeList body;
    std::string end;
    block(body, {}, end);
    if (!end.empty()) fail("unexpected '{% " + end + " %}' with no block to close", cur());
    return body;
  }

 private:
  struct Guard {
    explicit Guard(Parser& p) : p(p) {
      if (++p.nesting_ > kMaxNesting) p.fail("template nested too deeply", p.cur());
    }
    ~Guard() { --p.nesting_; }
    Parser& p;
  };

  const Token& cur() const { return t_[pos_]; }
  const Token& peek(size_t k = 1) const { return t_[std::min(pos_ + k, t_.size() - 1)]; }
  [[noreturn]] void fail(const std::string& msg, const Token& at) const {
    throw Error(msg, at.line, at.column);
  }
  bool is_punct(const char* p) const { return cur().type == Tok::kPunct && cur().text == p; }
  bool is_name(const char* n) const { return cur().type == Tok::kName && cur().text == n; }
  const Token& advance() { return t_[pos_ < t_.size() - 1 ? pos_++ : pos_]; }
  void expect_punct(const char* p) {
    if (!is_punct(p)) fail(std::string("expected '") + p + "' but found " + describe(cur()), cur());
    advance();
  }
  void expect_name(const char* n) {
    if (!is_name(n)) fail(std::string("expected '") + n + "' but found " + describe(cur()), cur());
    advance();
  }
  void expect(Tok t, const char* what) {
    if (cur().type != t)
      fail(std::string("expected ") + what + " but found " + describe(cur()), cur());
    advance();
  }
  static std::string describe(const Token& t) {
    switch (t.type) {
      case Tok::kEnd:
        return "the end of the template";
      case Tok::kText:
        return "text";
      case Tok::kString:
        return "a string";
      default:
        return "'" + t.text + "'";
    }
  }
  NodePtr node(NodeKind k, const Token& at) {
    auto n = std::make_shared<Node>();
    n->kind = k;
    n->line = at.line;
    n->column = at.column;
    return n;
  }

  // Parses statements into `out` until one of `ends` ({% end... %}, {% else %}, ...) and
  // leaves that keyword in `found` (the tag's name token consumed, the rest not).
  void block(NodeList& out, const std::vector<std::string>& ends, std::string& found) {
    Guard g(*this);
    found.clear();
    while (cur().type != Tok::kEnd) {
      const Token& t = cur();
      if (t.type == Tok::kText) {
        auto n = node(NodeKind::kText, t);
        n->name = t.text;
        out.push_back(n);
        advance();
      } else if (t.type == Tok::kOpenExpr) {
        advance();
        auto n = node(NodeKind::kOutput, t);
        n->a = expression();
        expect(Tok::kCloseExpr, "'}}'");
        out.push_back(n);
      } else if (t.type == Tok::kOpenStmt) {
        advance();
        if (cur().type != Tok::kName) fail("expected a statement name after '{%'", cur());
        const std::string kw = cur().text;
        for (const auto& e : ends) {
          if (kw == e) {
            advance();
            found = kw;
            return;
          }
        }
        out.push_back(statement());
      } else {
        fail("unexpected " + describe(t), t);
      }
    }
    if (!ends.empty()) {
      fail("template ended inside a block: missing '{% " + ends.back() + " %}'", cur());
    }
  }

  NodePtr statement() {
    const Token& t = cur();
    const std::string kw = t.text;
    advance();
    if (kw == "if") return if_statement(t);
    if (kw == "for") return for_statement(t);
    if (kw == "set") return set_statement(t);
    if (kw == "macro") return macro_statement(t);
    if (kw == "call") return call_block(t);
    if (kw == "filter") return filter_block(t);
    if (kw == "break" || kw == "continue") {
      expect(Tok::kCloseStmt, "'%}'");
      return node(kw == "break" ? NodeKind::kBreak : NodeKind::kContinue, t);
    }
    if (kw.rfind("end", 0) == 0 || kw == "else" || kw == "elif") {
      fail("unexpected '{% " + kw + " %}' with no block to close", t);
    }
    fail("unknown statement '{% " + kw + " %}'", t);
  }

  NodePtr if_statement(const Token& at) {
    auto n = node(NodeKind::kIf, at);
    n->a = expression();
    expect(Tok::kCloseStmt, "'%}'");
    std::string end;
    block(n->body, {"elif", "else", "endif"}, end);
    if (end == "elif") {
      n->orelse.push_back(if_statement(t_[pos_ - 1]));
    } else if (end == "else") {
      expect(Tok::kCloseStmt, "'%}'");
      block(n->orelse, {"endif"}, end);
      expect(Tok::kCloseStmt, "'%}'");
    } else {
      expect(Tok::kCloseStmt, "'%}'");
    }
    return n;
  }

  NodePtr for_statement(const Token& at) {
    auto n = node(NodeKind::kFor, at);
    do {
      if (cur().type != Tok::kName) fail("expected a loop variable name", cur());
      n->names.push_back(advance().text);
      if (!is_punct(",")) break;
      advance();
    } while (true);
    expect_name("in");
    n->a = or_expr();  // no ternary here: "if" after the iterable filters the items
    if (is_name("if")) {
      advance();
      n->b = expression();
    }
    if (is_name("recursive")) fail("recursive loops are not supported", cur());
    expect(Tok::kCloseStmt, "'%}'");
    std::string end;
    block(n->body, {"else", "endfor"}, end);
    expect(Tok::kCloseStmt, "'%}'");
    if (end == "else") {
      block(n->orelse, {"endfor"}, end);
      expect(Tok::kCloseStmt, "'%}'");
    }
    return n;
  }

  NodePtr set_statement(const Token& at) {
    auto n = node(NodeKind::kSet, at);
    NodePtr target = primary_postfix();
    if (is_punct(",")) {
      auto tuple = node(NodeKind::kTuple, at);
      tuple->items.push_back(target);
      while (is_punct(",")) {
        advance();
        tuple->items.push_back(primary_postfix());
      }
      target = tuple;
    }
    n->a = target;
    if (is_punct("=")) {
      advance();
      n->b = expression();
      expect(Tok::kCloseStmt, "'%}'");
    } else {
      expect(Tok::kCloseStmt, "'=' or '%}'");
      std::string end;
      block(n->body, {"endset"}, end);
      expect(Tok::kCloseStmt, "'%}'");
    }
    return n;
  }

  void parameters(NodePtr& n) {
    expect_punct("(");
    while (!is_punct(")")) {
      if (cur().type != Tok::kName) fail("expected a parameter name", cur());
      std::string pname = advance().text;
      NodePtr def;
      if (is_punct("=")) {
        advance();
        def = expression();
      }
      n->params.emplace_back(pname, def);
      if (!is_punct(",")) break;
      advance();
    }
    expect_punct(")");
  }

  NodePtr macro_statement(const Token& at) {
    auto n = node(NodeKind::kMacro, at);
    if (cur().type != Tok::kName) fail("expected a macro name", cur());
    n->name = advance().text;
    parameters(n);
    expect(Tok::kCloseStmt, "'%}'");
    std::string end;
    block(n->body, {"endmacro"}, end);
    if (cur().type == Tok::kName) advance();  // {% endmacro name %}
    expect(Tok::kCloseStmt, "'%}'");
    return n;
  }

  NodePtr call_block(const Token& at) {
    auto n = node(NodeKind::kCallBlock, at);
    if (is_punct("(")) parameters(n);
    n->a = expression();
    if (n->a->kind != NodeKind::kCall) fail("'{% call %}' needs a macro call", at);
    expect(Tok::kCloseStmt, "'%}'");
    std::string end;
    block(n->body, {"endcall"}, end);
    expect(Tok::kCloseStmt, "'%}'");
    return n;
  }

  NodePtr filter_block(const Token& at) {
    auto n = node(NodeKind::kFilterBlock, at);
    n->a = filter_tail(nullptr, at);
    expect(Tok::kCloseStmt, "'%}'");
    std::string end;
    block(n->body, {"endfilter"}, end);
    expect(Tok::kCloseStmt, "'%}'");
    return n;
  }

  // ---- expressions ----
  NodePtr expression() {
    Guard g(*this);
    NodePtr value = or_expr();
    if (is_name("if")) {
      const Token& at = advance();
      auto n = node(NodeKind::kTernary, at);
      n->a = value;
      n->b = or_expr();
      if (is_name("else")) {
        advance();
        n->c = expression();
      }
      return n;
    }
    return value;
  }

  NodePtr binary(const Token& at, const std::string& op, NodePtr l, NodePtr r) {
    auto n = node(NodeKind::kBinary, at);
    n->name = op;
    n->a = std::move(l);
    n->b = std::move(r);
    return n;
  }

  NodePtr or_expr() {
    NodePtr l = and_expr();
    while (is_name("or")) {
      const Token& at = advance();
      l = binary(at, "or", l, and_expr());
    }
    return l;
  }

  NodePtr and_expr() {
    NodePtr l = not_expr();
    while (is_name("and")) {
      const Token& at = advance();
      l = binary(at, "and", l, not_expr());
    }
    return l;
  }

  NodePtr not_expr() {
    if (is_name("not")) {
      Guard g(*this);
      const Token& at = advance();
      auto n = node(NodeKind::kUnary, at);
      n->name = "not";
      n->a = not_expr();
      return n;
    }
    return comparison();
  }

  NodePtr comparison() {
    NodePtr l = additive();
    while (true) {
      const Token& at = cur();
      if (at.type == Tok::kPunct && (at.text == "==" || at.text == "!=" || at.text == "<" ||
                                     at.text == ">" || at.text == "<=" || at.text == ">=")) {
        advance();
        l = binary(at, at.text, l, additive());
      } else if (is_name("in")) {
        advance();
        l = binary(at, "in", l, additive());
      } else if (is_name("not") && peek().type == Tok::kName && peek().text == "in") {
        advance();
        advance();
        l = binary(at, "not in", l, additive());
      } else {
        return l;
      }
    }
  }

  NodePtr additive() {
    NodePtr l = multiplicative();
    while (is_punct("+") || is_punct("-") || is_punct("~")) {
      const Token& at = advance();
      l = binary(at, at.text, l, multiplicative());
    }
    return l;
  }

  NodePtr multiplicative() {
    NodePtr l = unary();
    while (is_punct("*") || is_punct("/") || is_punct("//") || is_punct("%")) {
      const Token& at = advance();
      l = binary(at, at.text, l, unary());
    }
    return l;
  }

  NodePtr unary() {
    if (is_punct("-") || is_punct("+")) {
      Guard g(*this);
      const Token& at = advance();
      auto n = node(NodeKind::kUnary, at);
      n->name = at.text;
      n->a = unary();
      return n;
    }
    return power();
  }

  NodePtr power() {
    NodePtr l = test_expr();
    if (is_punct("**")) {
      const Token& at = advance();
      return binary(at, "**", l, unary());
    }
    return l;
  }

  NodePtr test_expr() {
    NodePtr l = filter_expr();
    while (is_name("is")) {
      const Token& at = advance();
      auto n = node(NodeKind::kTest, at);
      if (is_name("not")) {
        advance();
        n->negated = true;
      }
      if (cur().type != Tok::kName) fail("expected a test name after 'is'", cur());
      n->name = advance().text;
      n->a = l;
      if (is_punct("(")) {
        call_arguments(n);
      } else if (cur().type == Tok::kInt || cur().type == Tok::kFloat ||
                 cur().type == Tok::kString) {
        n->items.push_back(primary());  // "is divisibleby 3"
      }
      l = n;
    }
    return l;
  }

  NodePtr filter_tail(NodePtr operand, const Token& at) {
    auto n = node(NodeKind::kFilter, at);
    if (cur().type != Tok::kName) fail("expected a filter name", cur());
    n->name = advance().text;
    n->a = std::move(operand);
    if (is_punct("(")) call_arguments(n);
    return n;
  }

  NodePtr filter_expr() {
    NodePtr l = primary_postfix();
    while (is_punct("|")) {
      const Token& at = advance();
      l = filter_tail(l, at);
    }
    return l;
  }

  void call_arguments(NodePtr& n) {
    expect_punct("(");
    while (!is_punct(")")) {
      if (cur().type == Tok::kName && peek().type == Tok::kPunct && peek().text == "=") {
        std::string key = advance().text;
        advance();
        n->kwargs.emplace_back(key, expression());
      } else {
        if (!n->kwargs.empty()) fail("positional argument after a keyword argument", cur());
        n->items.push_back(expression());
      }
      if (!is_punct(",")) break;
      advance();
    }
    expect_punct(")");
  }

  NodePtr primary_postfix() {
    Guard g(*this);
    NodePtr l = primary();
    while (true) {
      const Token& at = cur();
      if (is_punct(".")) {
        advance();
        if (cur().type != Tok::kName && cur().type != Tok::kInt) {
          fail("expected an attribute name after '.'", cur());
        }
        auto n = node(NodeKind::kAttr, at);
        n->name = advance().text;
        n->a = l;
        l = n;
      } else if (is_punct("[")) {
        advance();
        l = subscript(l, at);
      } else if (is_punct("(")) {
        auto n = node(NodeKind::kCall, at);
        n->a = l;
        call_arguments(n);
        l = n;
      } else {
        return l;
      }
    }
  }

  NodePtr subscript(NodePtr obj, const Token& at) {
    NodePtr parts[3];
    int part = 0;
    bool slice = false;
    while (!is_punct("]")) {
      if (is_punct(":")) {
        slice = true;
        if (++part > 2) fail("too many ':' in slice", cur());
        advance();
        continue;
      }
      if (parts[part]) fail("expected ':' or ']' in subscript", cur());
      parts[part] = expression();
    }
    advance();
    if (!slice) {
      if (!parts[0]) fail("empty subscript '[]'", at);
      auto n = node(NodeKind::kIndex, at);
      n->a = obj;
      n->b = parts[0];
      return n;
    }
    auto n = node(NodeKind::kSlice, at);
    n->a = obj;
    n->b = parts[0];
    n->c = parts[1];
    n->d = parts[2];
    return n;
  }

  NodePtr primary() {
    Guard g(*this);
    const Token& t = cur();
    switch (t.type) {
      case Tok::kInt: {
        advance();
        auto n = node(NodeKind::kLiteral, t);
        try {
          n->literal = Value::integer(std::stoll(t.text));
        } catch (const std::exception&) {
          n->literal = Value::number(std::stod(t.text));
        }
        return n;
      }
      case Tok::kFloat: {
        advance();
        auto n = node(NodeKind::kLiteral, t);
        n->literal = Value::number(std::stod(t.text));
        return n;
      }
      case Tok::kString: {
        std::string s;
        while (cur().type == Tok::kString) s += advance().text;  // "a" "b" concatenates
        auto n = node(NodeKind::kLiteral, t);
        n->literal = Value::string(std::move(s));
        return n;
      }
      case Tok::kName: {
        advance();
        auto n = node(NodeKind::kLiteral, t);
        if (t.text == "true" || t.text == "True") {
          n->literal = Value::boolean(true);
        } else if (t.text == "false" || t.text == "False") {
          n->literal = Value::boolean(false);
        } else if (t.text == "none" || t.text == "None") {
          n->literal = Value::none();
        } else {
          n->kind = NodeKind::kName;
          n->name = t.text;
        }
        return n;
      }
      case Tok::kPunct:
        if (t.text == "(") {
          advance();
          if (is_punct(")")) {
            advance();
            return node(NodeKind::kTuple, t);
          }
          NodePtr first = expression();
          if (is_punct(",")) {
            auto tuple = node(NodeKind::kTuple, t);
            tuple->items.push_back(first);
            while (is_punct(",")) {
              advance();
              if (is_punct(")")) break;
              tuple->items.push_back(expression());
            }
            expect_punct(")");
            return tuple;
          }
          expect_punct(")");
          return first;
        }
        if (t.text == "[") {
          advance();
          auto n = node(NodeKind::kList, t);
          while (!is_punct("]")) {
            n->items.push_back(expression());
            if (!is_punct(",")) break;
            advance();
          }
          expect_punct("]");
          return n;
        }
        if (t.text == "{") {
          advance();
          auto n = node(NodeKind::kDict, t);
          while (!is_punct("}")) {
            n->items.push_back(expression());
            expect_punct(":");
            n->items2.push_back(expression());
            if (!is_punct(",")) break;
            advance();
          }
          expect_punct("}");
          return n;
        }
        break;
      default:
        break;
    }
    fail("expected an expression but found " + describe(t), t);
  }

  const std::vector<Token>& t_;
  size_t pos_ = 0;
  int nesting_ = 0;
};

}  // namespace

NodeList parse(const std::vector<Token>& tokens) {
  return Parser(tokens).program();
}

}  // namespace arc::jinja
