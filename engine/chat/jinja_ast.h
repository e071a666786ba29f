// Tokens and syntax tree of the chat-template Jinja subset.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "jinja_value.h"

namespace arc::jinja {

enum class Tok : uint8_t {
  kText,       // literal template text
  kOpenStmt,   // {%
  kCloseStmt,  // %}
  kOpenExpr,   // {{
  kCloseExpr,  // }}
  kName,       // identifier or keyword
  kString,     // string literal (escapes resolved)
  kInt,
  kFloat,
  kPunct,  // operators and brackets: ( ) [ ] { } , . : | + - * / // % ** ~ == != < > <= >= =
  kEnd,
};

struct Token {
  Tok type;
  std::string text;
  int line;
  int column;
};

// The reference renderer's preprocessing (trailing newline, lstrip_blocks, trim_blocks, the
// {% generation %} markers) followed by tokenization. Throws Error on bad input.
std::vector<Token> tokenize(const std::string& source);

enum class NodeKind : uint8_t {
  // statements
  kText,
  kOutput,  // {{ a }}
  kIf,      // a: condition, body, orelse
  kFor,     // names: loop variables, a: iterable, b: filter condition, body, orelse
  kSet,     // a: target (name, attribute or tuple), b: value or null with body (block set)
  kMacro,   // name, params (names + defaults), body
  kBreak,
  kContinue,
  kCallBlock,    // a: call expression, params: caller's parameters, body: caller()
  kFilterBlock,  // a: filter expression applied to body's output (operand left null)
  // expressions
  kLiteral,
  kName,
  kList,
  kTuple,
  kDict,     // items: keys, items2: values
  kAttr,     // a.name
  kIndex,    // a[b]
  kSlice,    // a[b:c:d], any of b/c/d may be null
  kCall,     // a(items, kwargs)
  kFilter,   // a | name(items, kwargs)
  kTest,     // a is [not] name(items)
  kUnary,    // name: "-", "+", "not"
  kBinary,   // name: operator
  kTernary,  // a if b else c
};

struct Node;
using NodePtr = std::shared_ptr<Node>;
using NodeList = std::vector<NodePtr>;

struct Node {
  NodeKind kind;
  int line = 0;
  int column = 0;
  std::string name;
  Value literal;
  NodePtr a, b, c, d;
  NodeList items;
  NodeList items2;
  NodeList body;
  NodeList orelse;
  std::vector<std::pair<std::string, NodePtr>> kwargs;
  std::vector<std::string> names;
  std::vector<std::pair<std::string, NodePtr>> params;
  bool negated = false;
};

// Parses a token stream into the template's statement list. Throws Error.
NodeList parse(const std::vector<Token>& tokens);

}  // namespace arc::jinja
