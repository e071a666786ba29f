#include "jinja_interp.h"

#include <cctype>
#include <cmath>

namespace arc::jinja {
namespace {

// Control flow of {% break %} / {% continue %}: unwinds to the innermost loop.
struct BreakSignal {};
struct ContinueSignal {};

int64_t floor_div(int64_t a, int64_t b) {
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}

}  // namespace

std::string Interpreter::render(const NodeList& program, const Value& context) {
  auto globals = std::make_shared<Scope>(nullptr);
  install_globals(*globals);
  auto top = std::make_shared<Scope>(globals);
  if (context.is_object()) {
    for (const auto& [k, v] : context.obj()) top->vars[k] = v;
  }
  std::string out;
  try {
    exec(program, top, out);
  } catch (const BreakSignal&) {
    throw Error("'{% break %}' outside a loop");
  } catch (const ContinueSignal&) {
    throw Error("'{% continue %}' outside a loop");
  }
  return out;
}

void Interpreter::exec(const NodeList& body, const ScopePtr& scope, std::string& out) {
  for (const NodePtr& np : body) {
    const Node& n = *np;
    step(n);
    switch (n.kind) {
      case NodeKind::kText:
        out += n.name;
        break;
      case NodeKind::kOutput: {
        Value v = eval(*n.a, scope);
        out += v.to_output();
        break;
      }
      case NodeKind::kIf: {
        DepthGuard g(*this, n);
        if (eval(*n.a, scope).truthy()) {
          exec(n.body, scope, out);
        } else {
          exec(n.orelse, scope, out);
        }
        break;
      }
      case NodeKind::kFor: {
        DepthGuard g(*this, n);
        exec_for(n, scope, out);
        break;
      }
      case NodeKind::kSet:
        exec_set(n, scope);
        break;
      case NodeKind::kMacro:
        scope->vars[n.name] = make_macro(n, scope);
        break;
      case NodeKind::kBreak:
        throw BreakSignal{};
      case NodeKind::kContinue:
        throw ContinueSignal{};
      case NodeKind::kCallBlock: {
        // {% call m(args) %}body{% endcall %}: m runs with caller() returning the body.
        auto caller_node = std::make_shared<Node>(n);
        caller_node->kind = NodeKind::kMacro;
        caller_node->name = "caller";
        Value callee = eval(*n.a->a, scope);
        if (!callee.is_function()) fail(n, "'{% call %}' needs a macro");
        std::vector<Value> args;
        KwArgs kwargs;
        for (const auto& a : n.a->items) args.push_back(eval(*a, scope));
        for (const auto& [k, a] : n.a->kwargs) kwargs.emplace_back(k, eval(*a, scope));
        kwargs.emplace_back("caller", make_macro(*caller_node, scope));
        out += callee.fn()(*this, args, kwargs).to_output();
        break;
      }
      case NodeKind::kFilterBlock: {
        std::string body_out;
        exec(n.body, scope, body_out);
        std::vector<Value> args;
        KwArgs kwargs;
        for (const auto& a : n.a->items) args.push_back(eval(*a, scope));
        for (const auto& [k, a] : n.a->kwargs) kwargs.emplace_back(k, eval(*a, scope));
        out += apply_filter(n.a->name, Value::string(body_out), args, kwargs, n).to_output();
        break;
      }
      default:
        fail(n, "internal error: expression used as a statement");
    }
    check_size(out.size(), n);
  }
}

void Interpreter::exec_for(const Node& n, const ScopePtr& scope, std::string& out) {
  auto loop_scope = std::make_shared<Scope>(scope);
  Value iterable = eval(*n.a, loop_scope);
  Array source;
  if (iterable.is_array()) {
    source = iterable.arr();
  } else if (iterable.is_object()) {
    for (const auto& [k, v] : iterable.obj()) source.push_back(Value::string(k));
  } else if (iterable.is_string()) {
    auto cps = utf8_decode(iterable.str());
    for (size_t i = 0; i < cps.size(); ++i)
      source.push_back(Value::string(utf8_encode(cps, i, i + 1)));
  } else if (iterable.is_undefined() || iterable.is_none()) {
    // The reference raises here; a clear message names the position.
    fail(*n.a, std::string("cannot loop over ") + iterable.type_name() + " value");
  } else {
    fail(*n.a, std::string("cannot loop over a ") + iterable.type_name());
  }
  auto bind = [&](const ScopePtr& s, const Value& item) {
    if (n.names.size() == 1) {
      s->vars[n.names[0]] = item;
      return;
    }
    if (!item.is_array())
      fail(n, "cannot unpack a " + std::string(item.type_name()) + " into loop variables");
    if (item.arr().size() != n.names.size()) {
      fail(n, "loop expects " + std::to_string(n.names.size()) + " values per item, got " +
                  std::to_string(item.arr().size()));
    }
    for (size_t i = 0; i < n.names.size(); ++i) s->vars[n.names[i]] = item.arr()[i];
  };
  Array items;
  if (n.b) {
    for (const Value& item : source) {
      step(n);
      auto test_scope = std::make_shared<Scope>(loop_scope);
      bind(test_scope, item);
      if (eval(*n.b, test_scope).truthy()) items.push_back(item);
    }
  } else {
    items = std::move(source);
  }
  bool iterated = false;
  const int64_t len = static_cast<int64_t>(items.size());
  for (int64_t i = 0; i < len; ++i) {
    step(n);
    Value loop = Value::object({
        {"index", Value::integer(i + 1)},
        {"index0", Value::integer(i)},
        {"revindex", Value::integer(len - i)},
        {"revindex0", Value::integer(len - i - 1)},
        {"first", Value::boolean(i == 0)},
        {"last", Value::boolean(i == len - 1)},
        {"length", Value::integer(len)},
        {"previtem", i > 0 ? items[i - 1] : Value()},
        {"nextitem", i < len - 1 ? items[i + 1] : Value()},
    });
    loop.set("cycle", Value::function([i](Interpreter&, std::vector<Value>& args, KwArgs&) {
               if (args.empty()) return Value();
               return args[static_cast<size_t>(i) % args.size()];
             }));
    loop_scope->vars["loop"] = loop;
    bind(loop_scope, items[i]);
    try {
      exec(n.body, loop_scope, out);
    } catch (const ContinueSignal&) {
      iterated = true;
      continue;
    } catch (const BreakSignal&) {
      iterated = true;
      break;
    }
    iterated = true;
  }
  if (!iterated) exec(n.orelse, loop_scope, out);
}

void Interpreter::assign(const Node& target, const Value& v, const ScopePtr& scope) {
  switch (target.kind) {
    case NodeKind::kName:
      scope->vars[target.name] = v;
      return;
    case NodeKind::kAttr: {
      Value obj = eval(*target.a, scope);
      if (!obj.is_object()) {
        fail(target, "cannot set attribute '" + target.name + "' on a " + obj.type_name() +
                         " (use namespace() for values changed inside loops)");
      }
      obj.set(target.name, v);
      return;
    }
    case NodeKind::kIndex: {
      Value obj = eval(*target.a, scope);
      Value key = eval(*target.b, scope);
      if (obj.is_object() && key.is_string()) {
        obj.set(key.str(), v);
        return;
      }
      fail(target, "cannot assign to an item of a " + std::string(obj.type_name()));
    }
    case NodeKind::kTuple: {
      if (!v.is_array() || v.arr().size() != target.items.size()) {
        fail(target, "cannot unpack value into " + std::to_string(target.items.size()) + " names");
      }
      for (size_t i = 0; i < target.items.size(); ++i) assign(*target.items[i], v.arr()[i], scope);
      return;
    }
    default:
      fail(target, "cannot assign to this expression");
  }
}

void Interpreter::exec_set(const Node& n, const ScopePtr& scope) {
  if (n.b) {
    assign(*n.a, eval(*n.b, scope), scope);
    return;
  }
  std::string body;
  exec(n.body, scope, body);
  assign(*n.a, Value::string(std::move(body)), scope);
}

Value Interpreter::make_macro(const Node& n, const ScopePtr& scope) {
  // The macro keeps its node and defining scope alive; calls bind arguments in a fresh scope.
  auto def = std::make_shared<Node>(n);
  // A weak reference: the scope holds the macro, so a strong one would leak both.
  std::weak_ptr<Scope> weak = scope;
  return Value::function([def, weak](Interpreter& in, std::vector<Value>& args, KwArgs& kwargs) {
    DepthGuard g(in, *def);
    ScopePtr parent = weak.lock();
    if (!parent) fail(*def, "macro '" + def->name + "' called after the block defining it ended");
    auto local = std::make_shared<Scope>(parent);
    const auto& params = def->params;
    if (args.size() > params.size()) {
      fail(*def, "macro '" + def->name + "' takes " + std::to_string(params.size()) +
                     " arguments but got " + std::to_string(args.size()));
    }
    std::vector<bool> bound(params.size(), false);
    for (size_t i = 0; i < args.size(); ++i) {
      local->vars[params[i].first] = args[i];
      bound[i] = true;
    }
    Object extra;
    for (auto& [k, v] : kwargs) {
      bool found = false;
      for (size_t i = 0; i < params.size(); ++i) {
        if (params[i].first == k) {
          local->vars[k] = v;
          bound[i] = true;
          found = true;
        }
      }
      if (!found && k == "caller") {
        local->vars[k] = v;
      } else if (!found) {
        extra.emplace_back(k, v);
      }
    }
    for (size_t i = 0; i < params.size(); ++i) {
      if (bound[i]) continue;
      local->vars[params[i].first] = params[i].second ? in.eval(*params[i].second, local) : Value();
    }
    local->vars["kwargs"] = Value::object(std::move(extra));
    std::string out;
    in.exec(def->body, local, out);
    return Value::string(std::move(out));
  });
}

Value Interpreter::call(const Node& n, const ScopePtr& scope) {
  step(n);
  std::vector<Value> args;
  KwArgs kwargs;
  for (const auto& a : n.items) args.push_back(eval(*a, scope));
  for (const auto& [k, a] : n.kwargs) kwargs.emplace_back(k, eval(*a, scope));
  const Node& callee = *n.a;
  if (callee.kind == NodeKind::kAttr) {
    Value self = eval(*callee.a, scope);
    if (const Value* member = self.find(callee.name); member && member->is_function()) {
      return member->fn()(*this, args, kwargs);
    }
    Value result;
    if (call_method(self, callee.name, args, kwargs, n, result)) return result;
    fail(n, std::string("no method '") + callee.name + "' on a " + self.type_name());
  }
  Value f = eval(callee, scope);
  if (!f.is_function()) {
    std::string what = callee.kind == NodeKind::kName ? "'" + callee.name + "'" : "this value";
    fail(n, what + " is not callable (it is " + (f.is_undefined() ? "undefined" : f.type_name()) +
                ")");
  }
  return f.fn()(*this, args, kwargs);
}

Value Interpreter::eval(const Node& n, const ScopePtr& scope) {
  DepthGuard g(*this, n);
  switch (n.kind) {
    case NodeKind::kLiteral:
      return n.literal;
    case NodeKind::kName: {
      const Value* v = scope->lookup(n.name);
      return v ? *v : Value();
    }
    case NodeKind::kList:
    case NodeKind::kTuple: {
      Array a;
      for (const auto& e : n.items) a.push_back(eval(*e, scope));
      return Value::array(std::move(a));
    }
    case NodeKind::kDict: {
      Value d = Value::object();
      for (size_t i = 0; i < n.items.size(); ++i) {
        Value k = eval(*n.items[i], scope);
        if (!k.is_string() && !k.is_number() && !k.is_bool())
          fail(*n.items[i], "dictionary keys must be strings");
        d.set(k.to_output(), eval(*n.items2[i], scope));
      }
      return d;
    }
    case NodeKind::kAttr: {
      Value obj = eval(*n.a, scope);
      if (const Value* v = obj.find(n.name)) return *v;
      if (obj.is_array() && !n.name.empty() &&
          std::isdigit(static_cast<unsigned char>(n.name[0]))) {
        size_t idx = std::stoul(n.name);
        return idx < obj.arr().size() ? obj.arr()[idx] : Value();
      }
      return Value();
    }
    case NodeKind::kIndex: {
      Value obj = eval(*n.a, scope);
      Value key = eval(*n.b, scope);
      if (obj.is_object()) {
        if (!key.is_string() && !key.is_number()) return Value();
        const Value* v = obj.find(key.to_output());
        return v ? *v : Value();
      }
      if (obj.is_array() || obj.is_string()) {
        if (!key.is_int())
          fail(n, std::string("list and string indices must be integers, not ") + key.type_name());
        if (obj.is_array()) {
          int64_t len = static_cast<int64_t>(obj.arr().size());
          int64_t i = key.as_int() < 0 ? key.as_int() + len : key.as_int();
          return i >= 0 && i < len ? obj.arr()[i] : Value();
        }
        auto cps = utf8_decode(obj.str());
        int64_t len = static_cast<int64_t>(cps.size());
        int64_t i = key.as_int() < 0 ? key.as_int() + len : key.as_int();
        return i >= 0 && i < len ? Value::string(utf8_encode(cps, i, i + 1)) : Value();
      }
      return Value();  // indexing undefined/none yields undefined, as in the reference
    }
    case NodeKind::kSlice: {
      Value obj = eval(*n.a, scope);
      Value b = n.b ? eval(*n.b, scope) : Value();
      Value c = n.c ? eval(*n.c, scope) : Value();
      Value d = n.d ? eval(*n.d, scope) : Value();
      return py_slice(obj, b, c, d, n);
    }
    case NodeKind::kCall:
      return call(n, scope);
    case NodeKind::kFilter: {
      Value operand = eval(*n.a, scope);
      std::vector<Value> args;
      KwArgs kwargs;
      for (const auto& a : n.items) args.push_back(eval(*a, scope));
      for (const auto& [k, a] : n.kwargs) kwargs.emplace_back(k, eval(*a, scope));
      return apply_filter(n.name, std::move(operand), args, kwargs, n);
    }
    case NodeKind::kTest: {
      Value v = eval(*n.a, scope);
      std::vector<Value> args;
      for (const auto& a : n.items) args.push_back(eval(*a, scope));
      bool r = apply_test(n.name, v, args, n);
      return Value::boolean(n.negated ? !r : r);
    }
    case NodeKind::kUnary: {
      Value v = eval(*n.a, scope);
      if (n.name == "not") return Value::boolean(!v.truthy());
      if (!v.is_number()) fail(n, "unary '" + n.name + "' needs a number, not a " + v.type_name());
      if (n.name == "+") return v;
      return v.is_int() ? Value::integer(-v.as_int()) : Value::number(-v.as_double());
    }
    case NodeKind::kBinary:
      return binary(n, scope);
    case NodeKind::kTernary:
      if (eval(*n.b, scope).truthy()) return eval(*n.a, scope);
      return n.c ? eval(*n.c, scope) : Value();
    default:
      fail(n, "internal error: statement used as an expression");
  }
}

Value Interpreter::binary(const Node& n, const ScopePtr& scope) {
  const std::string& op = n.name;
  Value l = eval(*n.a, scope);
  if (op == "and") return l.truthy() ? eval(*n.b, scope) : l;
  if (op == "or") return l.truthy() ? l : eval(*n.b, scope);
  Value r = eval(*n.b, scope);
  if (op == "==") return Value::boolean(values_equal(l, r));
  if (op == "!=") return Value::boolean(!values_equal(l, r));
  if (op == "in" || op == "not in") {
    bool found = false;
    if (r.is_string()) {
      if (!l.is_string())
        fail(n, std::string("'in <string>' needs a string on the left, not a ") + l.type_name());
      found = r.str().find(l.str()) != std::string::npos;
    } else if (r.is_array()) {
      for (const Value& e : r.arr()) found = found || values_equal(l, e);
    } else if (r.is_object()) {
      found = l.is_string() && r.find(l.str()) != nullptr;
    } else if (!r.is_undefined() && !r.is_none()) {
      fail(n, std::string("'in' needs a string, list or mapping on the right, not a ") +
                  r.type_name());
    }
    return Value::boolean(op == "in" ? found : !found);
  }
  if (l.is_undefined() || r.is_undefined()) {
    fail(n, "cannot apply '" + op + "' to an undefined value");
  }
  if ((l.is_string() || r.is_string()) && (op == "~" || op == "+")) {
    // Checked before building: a doubling loop must fail fast, not after allocating.
    check_size(l.to_output().size() + r.to_output().size(), n);
  }
  if (op == "~") {
    std::string s = l.to_output() + r.to_output();
    check_size(s.size(), n);
    return Value::string(std::move(s));
  }
  if (l.is_none() || r.is_none()) fail(n, "cannot apply '" + op + "' to none");
  if (l.is_number() && r.is_number()) {
    const bool ints = l.is_int() && r.is_int();
    const double x = l.as_double(), y = r.as_double();
    if (op == "+") return ints ? Value::integer(l.as_int() + r.as_int()) : Value::number(x + y);
    if (op == "-") return ints ? Value::integer(l.as_int() - r.as_int()) : Value::number(x - y);
    if (op == "*") return ints ? Value::integer(l.as_int() * r.as_int()) : Value::number(x * y);
    if (op == "/") {
      if (y == 0) fail(n, "division by zero");
      return Value::number(x / y);
    }
    if (op == "//") {
      if (y == 0) fail(n, "division by zero");
      return ints ? Value::integer(floor_div(l.as_int(), r.as_int()))
                  : Value::number(std::floor(x / y));
    }
    if (op == "%") {
      if (y == 0) fail(n, "modulo by zero");
      if (ints) {
        int64_t m = l.as_int() % r.as_int();
        if (m != 0 && ((m < 0) != (r.as_int() < 0))) m += r.as_int();
        return Value::integer(m);
      }
      double m = std::fmod(x, y);
      if (m != 0 && ((m < 0) != (y < 0))) m += y;
      return Value::number(m);
    }
    if (op == "**") {
      if (ints && r.as_int() >= 0) {
        double p = std::pow(x, y);
        if (std::fabs(p) < 9.0e18) return Value::integer(static_cast<int64_t>(p));
      }
      return Value::number(std::pow(x, y));
    }
    if (op == "<") return Value::boolean(x < y);
    if (op == ">") return Value::boolean(x > y);
    if (op == "<=") return Value::boolean(x <= y);
    if (op == ">=") return Value::boolean(x >= y);
  }
  if (l.is_string() && r.is_string()) {
    if (op == "<") return Value::boolean(l.str() < r.str());
    if (op == ">") return Value::boolean(l.str() > r.str());
    if (op == "<=") return Value::boolean(l.str() <= r.str());
    if (op == ">=") return Value::boolean(l.str() >= r.str());
  }
  if (op == "+") {
    if (l.is_string() || r.is_string()) {
      std::string s = l.to_output() + r.to_output();
      check_size(s.size(), n);
      return Value::string(std::move(s));
    }
    if (l.is_array() && r.is_array()) {
      Array a = l.arr();
      a.insert(a.end(), r.arr().begin(), r.arr().end());
      return Value::array(std::move(a));
    }
  }
  if (op == "*" && (l.is_string() || l.is_array()) && r.is_int()) {
    int64_t times = std::max<int64_t>(0, r.as_int());
    size_t unit = l.is_string() ? l.str().size() : l.arr().size() * 16;
    if (times > 0 && unit > 0)
      check_size(unit * static_cast<size_t>(std::min<int64_t>(times, INT32_MAX)), n);
    if (l.is_string()) {
      std::string s;
      for (int64_t i = 0; i < times; ++i) s += l.str();
      return Value::string(std::move(s));
    }
    Array a;
    for (int64_t i = 0; i < times; ++i) a.insert(a.end(), l.arr().begin(), l.arr().end());
    return Value::array(std::move(a));
  }
  fail(n, "cannot apply '" + op + "' to a " + l.type_name() + " and a " + r.type_name());
}

}  // namespace arc::jinja
