// Streaming parser of model output. One state machine over a buffer of not-yet-certain text:
// each step finds the earliest complete marker of the current state, or emits everything that
// cannot be the beginning of a marker (nor the middle of a UTF-8 character) and holds the rest.
#include "arc/output_parser.h"

#include <nlohmann/json.hpp>

#include "chat/xml_tool_calls.h"

namespace arc {
namespace {

using json = nlohmann::ordered_json;

constexpr std::string_view kThinkOpen = "<think>";
constexpr std::string_view kThinkClose = "</think>";
constexpr std::string_view kQwenOpen = "<tool_call>";
constexpr std::string_view kQwenClose = "</tool_call>";
constexpr std::string_view kPythonTag = "<|python_tag|>";
constexpr std::string_view kLlamaEom = "<|eom_id|>";
constexpr std::string_view kDsCallsBegin = "<｜tool▁calls▁begin｜>";
constexpr std::string_view kDsCallsEnd = "<｜tool▁calls▁end｜>";
constexpr std::string_view kDsCallBegin = "<｜tool▁call▁begin｜>";
constexpr std::string_view kDsCallEnd = "<｜tool▁call▁end｜>";
constexpr std::string_view kDsSep = "<｜tool▁sep｜>";
constexpr std::string_view kHStart = "<|start|>";
constexpr std::string_view kHChannel = "<|channel|>";
constexpr std::string_view kHMessage = "<|message|>";
constexpr std::string_view kHEnd = "<|end|>";
constexpr std::string_view kHCall = "<|call|>";
constexpr std::string_view kHReturn = "<|return|>";
constexpr size_t kMaxHarmonyHeader = 512;
constexpr std::string_view kMiniMaxOpen = "<minimax:tool_call>";
constexpr std::string_view kMiniMaxClose = "</minimax:tool_call>";
constexpr std::string_view kKimiSectionBegin = "<|tool_calls_section_begin|>";
constexpr std::string_view kKimiSectionEnd = "<|tool_calls_section_end|>";
constexpr std::string_view kKimiCallBegin = "<|tool_call_begin|>";
constexpr std::string_view kKimiCallEnd = "<|tool_call_end|>";
constexpr std::string_view kKimiArgBegin = "<|tool_call_argument_begin|>";

bool is_ws(char c) {
  return c == ' ' || c == '\n' || c == '\t' || c == '\r';
}

std::string trim(std::string_view s) {
  size_t b = 0, e = s.size();
  while (b < e && is_ws(s[b])) ++b;
  while (e > b && is_ws(s[e - 1])) --e;
  return std::string(s.substr(b, e - b));
}

// Length of the longest suffix of `s` that is a proper prefix of `marker`.
size_t partial_suffix(std::string_view s, std::string_view marker) {
  size_t best = 0;
  for (size_t k = 1; k < marker.size() && k <= s.size(); ++k) {
    if (s.substr(s.size() - k) == marker.substr(0, k)) best = k;
  }
  return best;
}

// Shortens n so that s[0, n) does not end inside a UTF-8 sequence.
size_t utf8_safe(std::string_view s, size_t n) {
  size_t i = n;
  size_t back = 0;
  while (i > 0 && back < 4 && (static_cast<unsigned char>(s[i - 1]) & 0xc0) == 0x80) {
    --i;
    ++back;
  }
  if (i == 0) return n;
  unsigned char lead = static_cast<unsigned char>(s[i - 1]);
  size_t need = lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : lead >= 0xc0 ? 2 : 1;
  if (need > 1 && back + 1 < need) return i - 1;
  return n;
}

struct Found {
  size_t pos = std::string::npos;
  std::string_view marker;
};

Found earliest(std::string_view s, std::initializer_list<std::string_view> markers) {
  Found f;
  for (auto m : markers) {
    if (m.empty()) continue;
    size_t p = s.find(m);
    if (p != std::string::npos && (f.pos == std::string::npos || p < f.pos)) f = {p, m};
  }
  return f;
}

size_t hold_for(std::string_view s, std::initializer_list<std::string_view> markers) {
  size_t h = 0;
  for (auto m : markers) h = std::max(h, partial_suffix(s, m));
  return h;
}

// End of the first complete JSON object in s (which starts with '{'), or npos.
size_t json_object_end(std::string_view s) {
  int depth = 0;
  bool in_str = false, esc = false;
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (in_str) {
      if (esc) {
        esc = false;
      } else if (c == '\\') {
        esc = true;
      } else if (c == '"') {
        in_str = false;
      }
      continue;
    }
    if (c == '"') in_str = true;
    if (c == '{' || c == '[') ++depth;
    if (c == '}' || c == ']') {
      if (--depth == 0) return i + 1;
    }
  }
  return std::string::npos;
}

OutputEvent delta(OutputEvent::Kind k, std::string text) {
  OutputEvent e;
  e.kind = k;
  e.text = std::move(text);
  return e;
}

OutputEvent call_error(std::string raw, std::string why) {
  OutputEvent e;
  e.kind = OutputEvent::Kind::kToolCallError;
  e.text = std::move(raw);
  e.error = std::move(why);
  return e;
}

OutputEvent call_event(std::string raw, std::string name, const json& args) {
  OutputEvent e;
  e.kind = OutputEvent::Kind::kToolCall;
  e.text = std::move(raw);
  e.name = std::move(name);
  // A string holding the arguments is already JSON text (as in OpenAI's API).
  e.arguments = args.is_string() ? args.get<std::string>() : args.dump();
  return e;
}

// {"name": ..., "arguments"|"parameters": {...}} -> call, anything else -> error.
OutputEvent json_call(const std::string& raw, std::string_view body) {
  json j = json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return call_error(raw, "tool call is not valid JSON");
  if (j.is_object() && j.contains("function") && j["function"].is_object()) j = j["function"];
  if (!j.is_object() || !j.contains("name") || !j["name"].is_string()) {
    return call_error(raw, "tool call JSON has no string \"name\"");
  }
  json args = json::object();
  if (j.contains("arguments")) {
    args = j["arguments"];
  } else if (j.contains("parameters")) {
    args = j["parameters"];
  }
  if (!args.is_object() && !args.is_string()) {
    return call_error(raw, "tool call arguments are not a JSON object");
  }
  return call_event(raw, j["name"].get<std::string>(), args);
}

}  // namespace

struct OutputParser::Impl {
  enum class State {
    kContent,
    kReasoning,
    kQwenCall,
    kLlamaJson,
    kPythonTag,
    kDsCalls,
    kDsCall,
    kHarmonyHeader,
    kHarmonyBody,
    kXmlCall,  // GLM, Qwen3-Coder, MiniMax: call_open ... call_close
  };

  OutputParserOptions opt;
  bool think = false;
  State state = State::kContent;
  std::string buf;
  std::vector<OutputEvent> out;
  bool at_start = true;        // nothing but whitespace seen yet
  bool trim_newlines = false;  // drop '\n' before the next emitted character
  bool ds_outer = false;       // inside <｜tool▁calls▁begin｜>
  size_t call_scanned = 0;     // bytes of buf already searched for a call's end marker
  std::string h_channel, h_recipient;
  std::string_view call_open, call_close;  // kXmlCall, kDsCall: the markers of the open call

  explicit Impl(OutputParserOptions o) : opt(o) {
    think = o.think_tags.value_or(o.syntax != OutputSyntax::kLlama3 &&
                                  o.syntax != OutputSyntax::kGptOss);
    if (o.syntax == OutputSyntax::kGptOss) {
      state = State::kHarmonyHeader;
    } else if (o.starts_in_reasoning) {
      state = State::kReasoning;
      trim_newlines = true;
      at_start = false;
    }
  }

  void emit(OutputEvent::Kind k, std::string_view text) {
    if (trim_newlines) {
      size_t i = 0;
      while (i < text.size() && text[i] == '\n') ++i;
      text.remove_prefix(i);
      if (text.empty()) return;
      trim_newlines = false;
    }
    if (text.empty()) return;
    out.push_back(delta(k, std::string(text)));
  }

  // Emits buf[0, n) as kind k and consumes it.
  void emit_prefix(OutputEvent::Kind k, size_t n) {
    emit(k, std::string_view(buf).substr(0, n));
    buf.erase(0, n);
  }

  void run(bool at_end) {
    while (step(at_end)) {
    }
  }

  // One transition; false when nothing more can be decided now.
  bool step(bool at_end) {
    switch (state) {
      case State::kContent:
        return step_content(at_end);
      case State::kReasoning:
        return step_reasoning(at_end);
      case State::kQwenCall:
        return step_closed_call(at_end, kQwenOpen, kQwenClose);
      case State::kLlamaJson:
        return step_llama_json(at_end);
      case State::kPythonTag:
        return step_python_tag(at_end);
      case State::kDsCalls:
        return step_ds_calls(at_end);
      case State::kDsCall:
      case State::kXmlCall:
        return step_closed_call(at_end, call_open, call_close);
      case State::kHarmonyHeader:
        return step_harmony_header(at_end);
      case State::kHarmonyBody:
        return step_harmony_body(at_end);
    }
    return false;
  }

  bool step_content(bool at_end) {
    if (buf.empty()) return false;
    const OutputSyntax syn = opt.syntax;
    if (at_start) {
      size_t i = 0;
      while (i < buf.size() && is_ws(buf[i])) ++i;
      if (i == buf.size() && !at_end) return false;  // only whitespace: <think> or '{' may follow
      std::string_view rest = std::string_view(buf).substr(i);
      if (think && !rest.empty()) {
        if (rest.substr(0, kThinkOpen.size()) == kThinkOpen) {
          buf.erase(0, i + kThinkOpen.size());
          state = State::kReasoning;
          trim_newlines = true;
          at_start = false;
          return true;
        }
        if (!at_end && kThinkOpen.substr(0, rest.size()) == rest) return false;
      }
      if (syn == OutputSyntax::kLlama3 && !rest.empty() && rest[0] == '{') {
        buf.erase(0, i);
        state = State::kLlamaJson;
        at_start = false;
        return true;
      }
      at_start = false;
    }
    Found f;
    size_t hold = 0;
    switch (syn) {
      case OutputSyntax::kQwen:
        f = earliest(buf, {kQwenOpen});
        hold = hold_for(buf, {kQwenOpen});
        break;
      case OutputSyntax::kLlama3:
        f = earliest(buf, {kPythonTag});
        hold = hold_for(buf, {kPythonTag});
        break;
      case OutputSyntax::kDeepSeekV3:
        f = earliest(buf, {kDsCallsBegin, kDsCallBegin});
        hold = hold_for(buf, {kDsCallsBegin, kDsCallBegin});
        break;
      case OutputSyntax::kKimiK2:
        f = earliest(buf, {kKimiSectionBegin, kKimiCallBegin});
        hold = hold_for(buf, {kKimiSectionBegin, kKimiCallBegin});
        break;
      case OutputSyntax::kGlm45:
      case OutputSyntax::kQwen3Coder:
        f = earliest(buf, {kQwenOpen});
        hold = hold_for(buf, {kQwenOpen});
        break;
      case OutputSyntax::kMiniMaxM2:
        // Interleaved thinking: a <think> block may open anywhere in the reply.
        f = earliest(buf, {kMiniMaxOpen, kThinkOpen});
        hold = hold_for(buf, {kMiniMaxOpen, kThinkOpen});
        break;
      default:
        break;
    }
    if (f.pos != std::string::npos) {
      emit_prefix(OutputEvent::Kind::kContent, f.pos);
      buf.erase(0, f.marker.size());
      if (f.marker == kThinkOpen) {
        state = State::kReasoning;
        trim_newlines = true;
        return true;
      }
      if (f.marker == kMiniMaxOpen || (f.marker == kQwenOpen && syn != OutputSyntax::kQwen)) {
        state = State::kXmlCall;
        call_open = f.marker;
        call_close = f.marker == kMiniMaxOpen ? kMiniMaxClose : kQwenClose;
        return true;
      }
      if (f.marker == kKimiSectionBegin || f.marker == kKimiCallBegin) {
        state = f.marker == kKimiSectionBegin ? State::kDsCalls : State::kDsCall;
        ds_outer = f.marker == kKimiSectionBegin;
        call_open = kKimiCallBegin;
        call_close = kKimiCallEnd;
        return true;
      }
      if (f.marker == kQwenOpen) state = State::kQwenCall;
      if (f.marker == kPythonTag) state = State::kPythonTag;
      if (f.marker == kDsCallsBegin) {
        state = State::kDsCalls;
        ds_outer = true;
      }
      if (f.marker == kDsCallBegin) {
        state = State::kDsCall;
        ds_outer = false;
      }
      call_open = kDsCallBegin;
      call_close = kDsCallEnd;
      return true;
    }
    size_t n = at_end ? buf.size() : utf8_safe(buf, buf.size() - hold);
    if (n == 0) return false;
    emit_prefix(OutputEvent::Kind::kContent, n);
    return !buf.empty() && at_end;
  }

  bool step_reasoning(bool at_end) {
    if (buf.empty()) return false;
    size_t p = buf.find(kThinkClose);
    if (p != std::string::npos) {
      size_t e = p;
      while (e > 0 && buf[e - 1] == '\n') --e;  // "...\n</think>": the newline is layout
      emit(OutputEvent::Kind::kReasoning, std::string_view(buf).substr(0, e));
      buf.erase(0, p + kThinkClose.size());
      state = State::kContent;
      trim_newlines = true;
      return true;
    }
    if (at_end) {
      emit_prefix(OutputEvent::Kind::kReasoning, buf.size());
      return false;
    }
    size_t n = buf.size() - partial_suffix(buf, kThinkClose);
    while (n > 0 && buf[n - 1] == '\n') --n;  // held: they may precede </think>
    n = utf8_safe(buf, n);
    if (n == 0) return false;
    emit_prefix(OutputEvent::Kind::kReasoning, n);
    return false;
  }

  // A call closed by an end marker (Qwen <tool_call>, DeepSeek <｜tool▁call▁begin｜>).
  bool step_closed_call(bool at_end, std::string_view open, std::string_view close) {
    // Resume the search where the last one stopped: a long call arriving token by token must
    // not be rescanned from its start each time.
    size_t from = call_scanned > close.size() ? call_scanned - close.size() : 0;
    size_t p = buf.find(close, from);
    call_scanned = p == std::string::npos ? buf.size() : 0;
    if (p == std::string::npos) {
      if (buf.size() > opt.max_tool_call_bytes) {
        out.push_back(call_error(std::string(open) + buf, "tool call longer than the limit"));
        buf.clear();
        call_scanned = 0;
        state = State::kContent;
        return false;
      }
      if (!at_end) return false;
      out.push_back(
          call_error(std::string(open) + buf, "tool call not closed with " + std::string(close)));
      buf.clear();
      state = State::kContent;
      return false;
    }
    std::string body = buf.substr(0, p);
    std::string raw = std::string(open) + body + std::string(close);
    buf.erase(0, p + close.size());
    if (state == State::kQwenCall) {
      out.push_back(json_call(raw, trim(body)));
      state = State::kContent;
    } else if (state == State::kXmlCall) {
      xml_calls(body);
      state = State::kContent;
    } else if (opt.syntax == OutputSyntax::kKimiK2) {
      out.push_back(kimi_call(raw, body));
      state = ds_outer ? State::kDsCalls : State::kContent;
    } else {
      out.push_back(deepseek_call(raw, body));
      state = ds_outer ? State::kDsCalls : State::kContent;
    }
    trim_newlines = true;
    return true;
  }

  // "function<｜tool▁sep｜>NAME\n```json\n{...}\n```" (V3) or "NAME<｜tool▁sep｜>{...}" (V3.1).
  static OutputEvent deepseek_call(const std::string& raw, const std::string& body) {
    size_t sep = body.find(kDsSep);
    if (sep == std::string::npos)
      return call_error(raw, "DeepSeek tool call has no tool separator");
    std::string before = trim(body.substr(0, sep));
    std::string after = body.substr(sep + kDsSep.size());
    std::string name, args;
    size_t nl = after.find('\n');
    if (before == "function" && nl != std::string::npos) {
      name = trim(after.substr(0, nl));
      args = trim(after.substr(nl + 1));
      if (args.rfind("```json", 0) == 0)
        args.erase(0, 7);
      else if (args.rfind("```", 0) == 0)
        args.erase(0, 3);
      if (args.size() >= 3 && args.compare(args.size() - 3, 3, "```") == 0)
        args.erase(args.size() - 3);
      args = trim(args);
    } else {
      name = before;
      args = trim(after);
    }
    if (name.empty()) return call_error(raw, "DeepSeek tool call has no function name");
    json j = json::parse(args, nullptr, false);
    if (j.is_discarded() || !j.is_object()) {
      return call_error(raw, "DeepSeek tool call arguments are not a JSON object");
    }
    return call_event(raw, name, j);
  }

  void xml_calls(const std::string& body) {
    std::vector<chat::ParsedCall> calls;
    if (opt.syntax == OutputSyntax::kGlm45) {
      calls.push_back(chat::parse_glm_call(body, opt.tools));
    } else if (opt.syntax == OutputSyntax::kQwen3Coder) {
      calls.push_back(chat::parse_qwen3_coder_call(body, opt.tools));
    } else {
      calls = chat::parse_minimax_calls(body, opt.tools);
    }
    for (auto& c : calls) {
      if (!c.error.empty()) {
        out.push_back(call_error(std::move(c.raw), std::move(c.error)));
        continue;
      }
      OutputEvent e;
      e.kind = OutputEvent::Kind::kToolCall;
      e.text = std::move(c.raw);
      e.name = std::move(c.name);
      e.arguments = std::move(c.arguments);
      out.push_back(std::move(e));
    }
  }

  // "functions.NAME:IDX<|tool_call_argument_begin|>{...}" (Kimi-K2).
  static OutputEvent kimi_call(const std::string& raw, const std::string& body) {
    size_t sep = body.find(kKimiArgBegin);
    if (sep == std::string::npos) return call_error(raw, "Kimi tool call has no argument marker");
    std::string id = trim(body.substr(0, sep));
    size_t colon = id.rfind(':');
    std::string name = id.substr(0, colon);
    if (name.rfind("functions.", 0) == 0) name.erase(0, 10);
    if (name.empty()) return call_error(raw, "Kimi tool call has no function name");
    json j = json::parse(trim(body.substr(sep + kKimiArgBegin.size())), nullptr, false);
    if (j.is_discarded() || !j.is_object()) {
      return call_error(raw, "Kimi tool call arguments are not a JSON object");
    }
    return call_event(raw, name, j);
  }

  bool step_ds_calls(bool at_end) {
    const bool kimi = opt.syntax == OutputSyntax::kKimiK2;
    const std::string_view call_begin = kimi ? kKimiCallBegin : kDsCallBegin;
    Found f = earliest(buf, {call_begin, kimi ? kKimiSectionEnd : kDsCallsEnd});
    if (f.pos != std::string::npos) {
      std::string between = trim(std::string_view(buf).substr(0, f.pos));
      if (!between.empty())
        out.push_back(call_error(between, "unexpected text between tool calls"));
      buf.erase(0, f.pos + f.marker.size());
      state = f.marker == call_begin ? State::kDsCall : State::kContent;
      trim_newlines = true;
      return true;
    }
    if (!at_end) return false;
    std::string rest = trim(buf);
    if (!rest.empty()) out.push_back(call_error(rest, "tool call list not closed"));
    buf.clear();
    state = State::kContent;
    return false;
  }

  bool step_llama_json(bool at_end) {
    // Between calls: separators (';', whitespace) are dropped; anything else ends the calls.
    size_t skip = 0;
    while (skip < buf.size() && (is_ws(buf[skip]) || buf[skip] == ';')) ++skip;
    if (skip == buf.size()) {
      if (at_end) {
        buf.clear();
        state = State::kContent;
      }
      return false;
    }
    buf.erase(0, skip);
    if (buf[0] != '{') {
      state = State::kContent;
      return true;
    }
    size_t end = json_object_end(buf);
    if (end == std::string::npos) {
      if (!at_end && buf.size() <= opt.max_tool_call_bytes) return false;
      // Never completed: a call if it looked like one, else plain text.
      if (buf.find("\"name\"") != std::string::npos) {
        out.push_back(call_error(buf, "tool call JSON is incomplete"));
      } else {
        emit(OutputEvent::Kind::kContent, buf);
      }
      buf.clear();
      state = State::kContent;
      return false;
    }
    std::string obj = buf.substr(0, end);
    json j = json::parse(obj, nullptr, false);
    bool is_call = !j.is_discarded() && j.is_object() && j.contains("name") &&
                   (j.contains("parameters") || j.contains("arguments"));
    if (!is_call) {
      // An ordinary JSON answer: content from here on.
      emit_prefix(OutputEvent::Kind::kContent, end);
      state = State::kContent;
      return true;
    }
    out.push_back(json_call(obj, obj));
    buf.erase(0, end);
    return true;  // several calls may follow, separated by ';' or whitespace
  }

  bool step_python_tag(bool at_end) {
    size_t p = buf.find(kLlamaEom);
    if (p == std::string::npos && !at_end) return false;
    std::string body =
        trim(std::string_view(buf).substr(0, p == std::string::npos ? buf.size() : p));
    std::string raw = std::string(kPythonTag) + body;
    buf.erase(0, p == std::string::npos ? buf.size() : p + kLlamaEom.size());
    state = State::kContent;
    trim_newlines = true;
    if (!body.empty() && body[0] == '{') {
      out.push_back(json_call(raw, body));
    } else if (!body.empty()) {
      // Llama 3.1's built-in code interpreter: the body is Python code.
      out.push_back(call_event(raw, "python", json{{"code", body}}));
    } else {
      out.push_back(call_error(raw, "empty <|python_tag|> call"));
    }
    return true;
  }

  bool step_harmony_header(bool at_end) {
    if (buf.empty()) return false;
    std::string_view b = buf;
    bool header_like =
        b.substr(0, 2) == std::string_view("<|").substr(0, std::min<size_t>(2, b.size()));
    if (!header_like) {
      h_channel = "final";  // plain text without a header: content
      h_recipient.clear();
      state = State::kHarmonyBody;
      return true;
    }
    size_t p = b.find(kHMessage);
    if (p == std::string::npos) {
      if (!at_end && b.size() <= kMaxHarmonyHeader) return false;
      emit_prefix(OutputEvent::Kind::kContent, buf.size());
      return false;
    }
    std::string header = buf.substr(0, p);
    buf.erase(0, p + kHMessage.size());
    h_channel.clear();
    h_recipient.clear();
    auto word_after = [&](std::string_view key) {
      size_t k = header.find(key);
      if (k == std::string::npos) return std::string();
      size_t s = k + key.size();
      size_t e = s;
      while (e < header.size() && !is_ws(header[e]) && header.compare(e, 2, "<|") != 0) ++e;
      return header.substr(s, e - s);
    };
    h_channel = word_after(kHChannel);
    h_recipient = word_after("to=");
    if (h_channel.empty()) h_channel = "final";
    state = State::kHarmonyBody;
    return true;
  }

  bool harmony_is_call() const { return !h_recipient.empty() && h_recipient != "assistant"; }

  void harmony_finish_call(const std::string& body) {
    std::string name = h_recipient;
    if (name.rfind("functions.", 0) == 0) name.erase(0, 10);
    std::string raw = "to=" + h_recipient + "<|message|>" + body;
    json j = json::parse(body, nullptr, false);
    if (j.is_discarded() || !(j.is_object())) {
      out.push_back(call_error(raw, "tool call arguments are not a JSON object"));
    } else {
      out.push_back(call_event(raw, name, j));
    }
  }

  bool step_harmony_body(bool at_end) {
    const bool call = harmony_is_call();
    const auto kind =
        h_channel == "analysis" ? OutputEvent::Kind::kReasoning : OutputEvent::Kind::kContent;
    Found f = earliest(buf, {kHEnd, kHCall, kHReturn, kHStart, kHChannel});
    if (f.pos != std::string::npos) {
      if (call) {
        harmony_finish_call(buf.substr(0, f.pos));
        buf.erase(0, f.pos);
      } else {
        emit_prefix(kind, f.pos);
      }
      if (f.marker == kHEnd || f.marker == kHCall || f.marker == kHReturn) {
        buf.erase(0, f.marker.size());
      }
      state = State::kHarmonyHeader;
      return true;
    }
    if (call) {
      if (at_end) {
        harmony_finish_call(buf);  // <|call|> is a stop token: the output may end without it
        buf.clear();
        state = State::kHarmonyHeader;
      } else if (buf.size() > opt.max_tool_call_bytes) {
        out.push_back(call_error(buf, "tool call longer than the limit"));
        buf.clear();
        state = State::kHarmonyHeader;
      }
      return false;
    }
    if (buf.empty()) return false;
    size_t hold = at_end ? 0 : hold_for(buf, {kHEnd, kHCall, kHReturn, kHStart, kHChannel});
    size_t n = at_end ? buf.size() : utf8_safe(buf, buf.size() - hold);
    if (n > 0) emit_prefix(kind, n);
    return false;
  }
};

OutputParser::OutputParser(OutputParserOptions options) : impl_(std::make_unique<Impl>(options)) {}
OutputParser::~OutputParser() = default;
OutputParser::OutputParser(OutputParser&&) noexcept = default;
OutputParser& OutputParser::operator=(OutputParser&&) noexcept = default;

std::vector<OutputEvent> OutputParser::feed(std::string_view chunk) {
  impl_->buf.append(chunk);
  impl_->run(false);
  return std::exchange(impl_->out, {});
}

std::vector<OutputEvent> OutputParser::finish() {
  impl_->run(true);
  return std::exchange(impl_->out, {});
}

const char* output_syntax_name(OutputSyntax syntax) {
  switch (syntax) {
    case OutputSyntax::kPlain:
      return "plain";
    case OutputSyntax::kQwen:
      return "qwen";
    case OutputSyntax::kLlama3:
      return "llama3";
    case OutputSyntax::kDeepSeekV3:
      return "deepseek-v3";
    case OutputSyntax::kGptOss:
      return "harmony";
    case OutputSyntax::kGlm45:
      return "glm-4.5";
    case OutputSyntax::kMiniMaxM2:
      return "minimax-m2";
    case OutputSyntax::kQwen3Coder:
      return "qwen3-coder";
    case OutputSyntax::kKimiK2:
      return "kimi-k2";
  }
  return "unknown";
}

bool output_syntax_reads_token(OutputSyntax syntax, std::string_view t) {
  if (syntax == OutputSyntax::kGptOss) {
    return t == kHStart || t == kHChannel || t == kHMessage || t == kHEnd || t == kHCall ||
           t == kHReturn || t == "<|constrain|>";
  }
  if (t == kThinkOpen || t == kThinkClose) return syntax != OutputSyntax::kLlama3;
  switch (syntax) {
    case OutputSyntax::kDeepSeekV3:
      return t == kDsCallsBegin || t == kDsCallsEnd || t == kDsCallBegin || t == kDsCallEnd ||
             t == kDsSep;
    case OutputSyntax::kKimiK2:
      return t == kKimiSectionBegin || t == kKimiSectionEnd || t == kKimiCallBegin ||
             t == kKimiCallEnd || t == kKimiArgBegin;
    case OutputSyntax::kGlm45:
      return t == kQwenOpen || t == kQwenClose || t == "<arg_key>" || t == "</arg_key>" ||
             t == "<arg_value>" || t == "</arg_value>";
    case OutputSyntax::kMiniMaxM2:
      return t == kMiniMaxOpen || t == kMiniMaxClose;
    case OutputSyntax::kQwen:
    case OutputSyntax::kQwen3Coder:
      return t == kQwenOpen || t == kQwenClose;
    case OutputSyntax::kLlama3:
      return t == kPythonTag || t == kLlamaEom;
    default:
      return false;
  }
}

OutputSyntax output_syntax_for_template(std::string_view src) {
  if (src.find("<|channel|>") != std::string_view::npos) return OutputSyntax::kGptOss;
  if (src.find("<minimax:tool_call>") != std::string_view::npos) return OutputSyntax::kMiniMaxM2;
  if (src.find("<|tool_calls_section_begin|>") != std::string_view::npos) {
    return OutputSyntax::kKimiK2;
  }
  if (src.find("<arg_key>") != std::string_view::npos) return OutputSyntax::kGlm45;
  if (src.find("<function=") != std::string_view::npos &&
      src.find("<tool_call>") != std::string_view::npos) {
    return OutputSyntax::kQwen3Coder;
  }
  if (src.find("tool▁calls▁begin") != std::string_view::npos) return OutputSyntax::kDeepSeekV3;
  if (src.find("<tool_call>") != std::string_view::npos) return OutputSyntax::kQwen;
  if (src.find("<|start_header_id|>") != std::string_view::npos) return OutputSyntax::kLlama3;
  return OutputSyntax::kPlain;
}

bool prompt_opens_reasoning(std::string_view prompt) {
  size_t open = prompt.rfind(kThinkOpen);
  if (open == std::string_view::npos) return false;
  return prompt.find(kThinkClose, open) == std::string_view::npos;
}

std::vector<OutputEvent> merge_deltas(const std::vector<OutputEvent>& events) {
  std::vector<OutputEvent> merged;
  for (const auto& e : events) {
    const bool is_delta =
        e.kind == OutputEvent::Kind::kContent || e.kind == OutputEvent::Kind::kReasoning;
    if (is_delta && !merged.empty() && merged.back().kind == e.kind) {
      merged.back().text += e.text;
    } else {
      merged.push_back(e);
    }
  }
  return merged;
}

}  // namespace arc
