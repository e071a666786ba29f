// Tree-walking evaluator of the Jinja subset. Internal to arc_chat; the public entry point is
// arc::ChatTemplate (arc/chat_template.h).
#pragma once

#include <ctime>
#include <memory>
#include <string>
#include <unordered_map>

#include "jinja_ast.h"

namespace arc::jinja {

struct Limits {
  int max_depth = 300;                  // nested evaluation + macro calls
  uint64_t max_steps = 20'000'000;      // statements, loop iterations and calls
  size_t max_output_bytes = 64u << 20;  // the rendered text and any string built on the way
  size_t max_range = 1'000'000;         // items range() may produce
};

struct Scope {
  explicit Scope(std::shared_ptr<Scope> parent) : parent(std::move(parent)) {}
  const Value* lookup(const std::string& name) const {
    for (const Scope* s = this; s; s = s->parent.get()) {
      auto it = s->vars.find(name);
      if (it != s->vars.end()) return &it->second;
    }
    return nullptr;
  }
  std::shared_ptr<Scope> parent;
  std::unordered_map<std::string, Value> vars;
};
using ScopePtr = std::shared_ptr<Scope>;

class Interpreter {
 public:
  Interpreter(Limits limits, std::time_t now) : limits_(limits), now_(now) {}

  // Renders a program with `globals` as the outermost scope (builtins below it).
  std::string render(const NodeList& program, const Value& context);

  Value eval(const Node& n, const ScopePtr& scope);
  void exec(const NodeList& body, const ScopePtr& scope, std::string& out);

  // Builtins (jinja_builtins.cpp). `at` gives the position for error messages.
  Value apply_filter(const std::string& name, Value operand, std::vector<Value>& args,
                     KwArgs& kwargs, const Node& at);
  bool apply_test(const std::string& name, const Value& v, std::vector<Value>& args,
                  const Node& at);
  // A method call on a value ("abc".upper(), d.items(), xs.append(1)); false if no such method.
  bool call_method(const Value& self, const std::string& name, std::vector<Value>& args,
                   KwArgs& kwargs, const Node& at, Value& result);
  void install_globals(Scope& scope);

  [[noreturn]] static void fail(const Node& at, const std::string& msg) {
    throw Error(msg, at.line, at.column);
  }
  void check_size(size_t bytes, const Node& at) const {
    if (bytes > limits_.max_output_bytes) {
      fail(at, "string grows past the " + std::to_string(limits_.max_output_bytes >> 20) +
                   " MiB limit");
    }
  }
  void step(const Node& at) {
    if (++steps_ > limits_.max_steps) fail(at, "template runs too long (step limit reached)");
  }
  const Limits& limits() const { return limits_; }
  std::time_t now() const { return now_; }

  struct DepthGuard {
    DepthGuard(Interpreter& in, const Node& at) : in(in) {
      if (++in.depth_ > in.limits_.max_depth) {
        fail(at, "template recursion too deep (more than " + std::to_string(in.limits_.max_depth) +
                     " levels)");
      }
    }
    ~DepthGuard() { --in.depth_; }
    Interpreter& in;
  };

 private:
  Value binary(const Node& n, const ScopePtr& scope);
  Value call(const Node& n, const ScopePtr& scope);
  Value make_macro(const Node& n, const ScopePtr& scope);
  void exec_for(const Node& n, const ScopePtr& scope, std::string& out);
  void exec_set(const Node& n, const ScopePtr& scope);
  void assign(const Node& target, const Value& v, const ScopePtr& scope);

  Limits limits_;
  std::time_t now_;
  uint64_t steps_ = 0;
  int depth_ = 0;
};

// String helpers shared by filters and methods.
std::string py_strip(const std::string& s, const std::string* chars, bool left, bool right);
Value py_slice(const Value& v, const Value& start, const Value& stop, const Value& step,
               const Node& at);

}  // namespace arc::jinja
