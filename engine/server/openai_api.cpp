#include "openai_api.h"

#include <memory>
#include <mutex>

#include "api_common.h"
#include "api_constraint.h"
#include "api_images.h"

namespace arc::server {
namespace {

const char* error_type_for(int http) {
  if (http == 401) return "authentication_error";
  if (http == 404) return "not_found_error";
  if (http == 413) return "invalid_request_error";
  if (http >= 500) return "server_error";
  return "invalid_request_error";
}

Status parse_sampling(const json& body, SamplingParams& sp, bool chat) {
  ARC_ASSIGN_OR_RETURN(auto temperature, get_number(body, "temperature", 0.0, 2.0));
  ARC_ASSIGN_OR_RETURN(auto top_p, get_number(body, "top_p", 0.0, 1.0));
  ARC_ASSIGN_OR_RETURN(auto top_k, get_int(body, "top_k", 0, 1000000));
  ARC_ASSIGN_OR_RETURN(auto min_p, get_number(body, "min_p", 0.0, 1.0));
  ARC_ASSIGN_OR_RETURN(auto presence, get_number(body, "presence_penalty", -2.0, 2.0));
  ARC_ASSIGN_OR_RETURN(auto frequency, get_number(body, "frequency_penalty", -2.0, 2.0));
  ARC_ASSIGN_OR_RETURN(auto repetition, get_number(body, "repetition_penalty", 0.01, 10.0));
  ARC_ASSIGN_OR_RETURN(auto seed, get_int(body, "seed", INT64_MIN, INT64_MAX));
  ARC_ASSIGN_OR_RETURN(auto max_tokens, get_int(body, "max_tokens", 1, 1 << 24));
  ARC_ASSIGN_OR_RETURN(auto max_completion, get_int(body, "max_completion_tokens", 1, 1 << 24));
  ARC_ASSIGN_OR_RETURN(auto n, get_int(body, "n", 1, 1 << 20));
  ARC_ASSIGN_OR_RETURN(sp.stop, get_stop_list(body, "stop"));
  if (n && *n != 1)
    return invalid_argument("'n' must be 1: Arclight returns one choice per request");
  if (temperature) sp.temperature = static_cast<float>(*temperature);
  if (top_p) {
    if (*top_p <= 0) return invalid_argument("'top_p' must be greater than 0");
    sp.top_p = static_cast<float>(*top_p);
  }
  if (top_k) sp.top_k = static_cast<int>(*top_k);
  if (min_p) sp.min_p = static_cast<float>(*min_p);
  if (presence) sp.presence_penalty = static_cast<float>(*presence);
  if (frequency) sp.frequency_penalty = static_cast<float>(*frequency);
  if (repetition) sp.repetition_penalty = static_cast<float>(*repetition);
  if (seed) sp.seed = static_cast<uint64_t>(*seed);
  if (max_completion)
    sp.max_tokens = static_cast<int>(*max_completion);
  else if (max_tokens)
    sp.max_tokens = static_cast<int>(*max_tokens);

  if (chat) {
    ARC_ASSIGN_OR_RETURN(auto logprobs, get_bool(body, "logprobs"));
    ARC_ASSIGN_OR_RETURN(auto top_logprobs, get_int(body, "top_logprobs", 0, 20));
    if (top_logprobs && !(logprobs && *logprobs)) {
      return invalid_argument("'top_logprobs' needs 'logprobs': true");
    }
    if (logprobs && *logprobs) sp.top_logprobs = top_logprobs ? static_cast<int>(*top_logprobs) : 0;
  } else {
    // Legacy completions: "logprobs" is the number of alternatives (0..5).
    ARC_ASSIGN_OR_RETURN(auto logprobs, get_int(body, "logprobs", 0, 5));
    if (logprobs) sp.top_logprobs = static_cast<int>(*logprobs);
  }
  ARC_ASSIGN_OR_RETURN(auto ignore_eos, get_bool(body, "ignore_eos"));
  if (ignore_eos) sp.ignore_eos = *ignore_eos;
  return ok_status();
}

Status validate_content_parts(const json& content, size_t index, bool allow_images) {
  for (size_t p = 0; p < content.size(); ++p) {
    const json& part = content[p];
    std::string where =
        "messages[" + std::to_string(index) + "].content[" + std::to_string(p) + "]";
    if (!part.is_object() || !part.contains("type") || !part["type"].is_string()) {
      return invalid_argument(where + " must be an object with a 'type'");
    }
    const std::string type = part["type"];
    if (type == "text") {
      if (!part.contains("text") || !part["text"].is_string()) {
        return invalid_argument(where + ".text must be a string");
      }
    } else if (type == "image_url") {
      if (!allow_images)
        return invalid_argument(where + ": images are only accepted in user messages");
      const json* url = nullptr;
      if (part.contains("image_url") && part["image_url"].is_object() &&
          part["image_url"].contains("url")) {
        url = &part["image_url"]["url"];
      }
      if (url == nullptr || !url->is_string()) {
        return invalid_argument(where + ".image_url.url must be a string");
      }
      // The data URI itself is checked (and decoded) by take_images.
    } else {
      return invalid_argument(where + " has unsupported type '" + type +
                              "'; use 'text' or 'image_url'");
    }
  }
  return ok_status();
}

Status validate_messages(const json& messages) {
  if (!messages.is_array()) return invalid_argument("'messages' must be an array");
  if (messages.empty()) return invalid_argument("'messages' must contain at least one message");
  for (size_t i = 0; i < messages.size(); ++i) {
    const json& m = messages[i];
    std::string where = "messages[" + std::to_string(i) + "]";
    if (!m.is_object()) return invalid_argument(where + " must be an object");
    if (!m.contains("role") || !m["role"].is_string()) {
      return invalid_argument(where + ".role must be a string");
    }
    const std::string role = m["role"];
    if (role != "system" && role != "developer" && role != "user" && role != "assistant" &&
        role != "tool") {
      return invalid_argument(where + ".role '" + role +
                              "' is not one of system, developer, user, assistant, tool");
    }
    bool has_tool_calls = m.contains("tool_calls") && !m["tool_calls"].is_null();
    const json* content = m.contains("content") ? &m["content"] : nullptr;
    if (content == nullptr || content->is_null()) {
      if (!(role == "assistant" && has_tool_calls)) {
        return invalid_argument(where + ".content is missing");
      }
    } else if (content->is_array()) {
      ARC_RETURN_IF_ERROR(validate_content_parts(*content, i, role == "user"));
    } else if (!content->is_string()) {
      return invalid_argument(where + ".content must be a string or an array of parts");
    }
    if (has_tool_calls) {
      if (role != "assistant")
        return invalid_argument(where + ": only assistant messages have tool_calls");
      if (!m["tool_calls"].is_array())
        return invalid_argument(where + ".tool_calls must be an array");
      for (size_t k = 0; k < m["tool_calls"].size(); ++k) {
        const json& tc = m["tool_calls"][k];
        const std::string at = where + ".tool_calls[" + std::to_string(k) + "]";
        if (!tc.is_object() || !tc.contains("function") || !tc["function"].is_object() ||
            !tc["function"].contains("name") || !tc["function"]["name"].is_string()) {
          return invalid_argument(at + " needs function.name");
        }
        ARC_RETURN_IF_ERROR(get_string(tc, "id", at));
        const json& f = tc["function"];
        if (f.contains("arguments") && !f["arguments"].is_null() && !f["arguments"].is_string() &&
            !f["arguments"].is_object()) {
          return invalid_argument("'" + at + ".function.arguments' must be a JSON string");
        }
      }
    }
    if (role == "tool" && (!m.contains("tool_call_id") || !m["tool_call_id"].is_string())) {
      return invalid_argument(where + ": tool messages need a 'tool_call_id' string");
    }
    ARC_RETURN_IF_ERROR(get_string(m, "tool_call_id", where));
    ARC_RETURN_IF_ERROR(get_string(m, "name", where));
    ARC_RETURN_IF_ERROR(get_string(m, "reasoning_content", where));
  }
  return ok_status();
}

Status validate_tools(const json& tools) {
  if (!tools.is_array()) return invalid_argument("'tools' must be an array");
  for (size_t i = 0; i < tools.size(); ++i) {
    const json& t = tools[i];
    std::string where = "tools[" + std::to_string(i) + "]";
    if (!t.is_object() || !t.contains("type") || t["type"] != "function" ||
        !t.contains("function") || !t["function"].is_object()) {
      return invalid_argument(where + " must be {\"type\": \"function\", \"function\": {...}}");
    }
    const json& f = t["function"];
    if (!f.contains("name") || !f["name"].is_string() || f["name"].get<std::string>().empty()) {
      return invalid_argument(where + ".function.name must be a non-empty string");
    }
    if (f.contains("parameters") && !f["parameters"].is_object()) {
      return invalid_argument(where + ".function.parameters must be a JSON schema object");
    }
    ARC_RETURN_IF_ERROR(get_string(f, "description", where + ".function"));
  }
  return ok_status();
}

json logprobs_json(const std::vector<TokenLogprob>& lps) {
  json content = json::array();
  for (const auto& lp : lps) {
    json top = json::array();
    for (const auto& [tok, p] : lp.top) top.push_back({{"token", tok}, {"logprob", p}});
    content.push_back(
        {{"token", lp.token}, {"logprob", lp.logprob}, {"bytes", lp.bytes}, {"top_logprobs", top}});
  }
  return {{"content", content}};
}

json usage_json(const Usage& u) {
  json j = {{"prompt_tokens", u.prompt_tokens},
            {"completion_tokens", u.completion_tokens},
            {"total_tokens", u.prompt_tokens + u.completion_tokens},
            {"prompt_tokens_details", {{"cached_tokens", u.cached_tokens}}}};
  if (u.draft_tokens > 0) {
    // Speculative decoding, in the fields OpenAI uses for predicted outputs.
    j["completion_tokens_details"] = {
        {"accepted_prediction_tokens", u.accepted_tokens},
        {"rejected_prediction_tokens", u.draft_tokens - u.accepted_tokens}};
  }
  return j;
}

json timings_json(const Timings& t) {
  return {{"queue_ms", t.queue_ms},
          {"ttft_ms", t.ttft_ms},
          {"prefill_tokens_per_s", t.prefill_tokens_per_s},
          {"decode_tokens_per_s", t.decode_tokens_per_s},
          {"total_ms", t.total_ms},
          {"host_us_per_token", t.host_us_per_token}};
}

std::string model_name(const InferenceService& service) {
  auto m = service.model();
  return m ? m->id : std::string("none");
}

// Collects a whole answer for the non-streaming form.
struct Collected {
  std::string content;
  std::string reasoning;
  std::vector<ToolCall> tool_calls;
  std::vector<TokenLogprob> logprobs;
  GenerationEvent finish;
  bool finished = false;
};

bool collect(Collected& c, const GenerationEvent& ev) {
  switch (ev.kind) {
    case GenerationEvent::Kind::kContent:
      c.content += ev.text;
      c.logprobs.insert(c.logprobs.end(), ev.logprobs.begin(), ev.logprobs.end());
      break;
    case GenerationEvent::Kind::kReasoning:
      c.reasoning += ev.text;
      c.logprobs.insert(c.logprobs.end(), ev.logprobs.begin(), ev.logprobs.end());
      break;
    case GenerationEvent::Kind::kToolCall:
      c.tool_calls.push_back(ev.tool_call);
      break;
    case GenerationEvent::Kind::kFinish:
      c.finish = ev;
      c.finished = true;
      break;
  }
  return true;
}

json tool_call_json(const ToolCall& tc, int index, bool with_index) {
  json j = {{"id", tc.id},
            {"type", "function"},
            {"function", {{"name", tc.name}, {"arguments", tc.arguments}}}};
  if (with_index) j["index"] = index;
  return j;
}

}  // namespace

void send_openai_error(httplib::Response& res, const Status& status, int http_status) {
  int http = http_status != 0 ? http_status : http_status_for(status);
  json err = {{"message", status.message()},
              {"type", error_type_for(http)},
              {"param", nullptr},
              {"code", nullptr}};
  if (status.code() == StatusCode::kResourceExhausted) err["code"] = "context_length_exceeded";
  res.status = http;
  // The message may quote client text: never let an encoding problem turn a 4xx into a throw.
  res.set_content(json({{"error", err}}).dump(-1, ' ', false, json::error_handler_t::replace),
                  "application/json");
}

Result<ChatRequest> parse_openai_chat(const json& body) {
  ChatRequest req;
  req.client = "openai";
  ARC_ASSIGN_OR_RETURN(auto model, get_string(body, "model"));
  (void)model;  // one model is served; the name is echoed back as loaded
  if (!body.contains("messages")) return invalid_argument("'messages' is required");
  ARC_RETURN_IF_ERROR(validate_messages(body["messages"]));
  req.messages = body["messages"];
  ARC_RETURN_IF_ERROR(take_images(req.messages, req.images));
  if (body.contains("tools") && !body["tools"].is_null()) {
    ARC_RETURN_IF_ERROR(validate_tools(body["tools"]));
    req.tools = body["tools"];
  }
  if (body.contains("tool_choice") && body["tool_choice"].is_string() &&
      body["tool_choice"] == "none") {
    req.tools = json::array();
  }
  ARC_RETURN_IF_ERROR(parse_sampling(body, req.sampling, /*chat=*/true));
  // Read by the route; checked here so that every wrong type is a 400 naming the field.
  ARC_RETURN_IF_ERROR(get_bool(body, "stream"));
  ARC_ASSIGN_OR_RETURN(const json* stream_options, get_object(body, "stream_options"));
  if (stream_options != nullptr) {
    ARC_RETURN_IF_ERROR(get_bool(*stream_options, "include_usage", "stream_options"));
  }
  ARC_ASSIGN_OR_RETURN(req.constraint, parse_openai_constraint(body, /*chat=*/true));
  if (req.tools.empty() && req.constraint.kind == OutputConstraint::Kind::kToolCall) {
    req.constraint = {};  // tool_choice "none" wins
  }
  ARC_ASSIGN_OR_RETURN(req.reasoning_effort, get_reasoning_effort(body, "reasoning_effort"));
  // llama-server's names for a reasoning budget.
  for (const char* k : {"thinking_budget_tokens", "reasoning_budget_tokens"}) {
    ARC_ASSIGN_OR_RETURN(auto budget, get_int(body, k, 0, INT32_MAX));
    if (budget) req.reasoning_budget = budget;
  }
  ARC_ASSIGN_OR_RETURN(const json* kwargs, get_object(body, "chat_template_kwargs"));
  if (kwargs != nullptr) {
    const json& kw = *kwargs;
    ARC_ASSIGN_OR_RETURN(auto effort,
                         get_reasoning_effort(kw, "reasoning_effort", "chat_template_kwargs"));
    if (effort) req.reasoning_effort = effort;
    if (kw.contains("enable_thinking")) {
      if (!kw["enable_thinking"].is_boolean()) {
        return invalid_argument("'chat_template_kwargs.enable_thinking' must be true or false");
      }
      req.enable_thinking = kw["enable_thinking"].get<bool>();
    }
  }
  return req;
}

Result<CompletionRequest> parse_openai_completion(const json& body) {
  CompletionRequest req;
  if (!body.contains("prompt")) return invalid_argument("'prompt' is required");
  const json& p = body["prompt"];
  if (p.is_string()) {
    req.prompt = p.get<std::string>();
  } else if (p.is_array() && p.size() == 1 && p[0].is_string()) {
    req.prompt = p[0].get<std::string>();
  } else if (p.is_array() && !p.empty() && p[0].is_number_integer()) {
    std::vector<int32_t> ids;
    for (const auto& t : p) {
      if (!t.is_number_integer() || t.get<int64_t>() < 0 || t.get<int64_t>() > INT32_MAX) {
        return invalid_argument("'prompt' token ids must be non-negative integers");
      }
      ids.push_back(static_cast<int32_t>(t.get<int64_t>()));
    }
    req.prompt_tokens = std::move(ids);
  } else {
    return invalid_argument(
        "'prompt' must be a string, an array with one string, or an array of token ids");
  }
  ARC_ASSIGN_OR_RETURN(auto echo, get_bool(body, "echo"));
  if (echo) req.echo = *echo;
  ARC_RETURN_IF_ERROR(parse_sampling(body, req.sampling, /*chat=*/false));
  ARC_ASSIGN_OR_RETURN(req.constraint, parse_openai_constraint(body, /*chat=*/false));
  return req;
}

void handle_models(InferenceService& service, const httplib::Request&, httplib::Response& res) {
  json data = json::array();
  if (auto m = service.model()) {
    data.push_back(
        {{"id", m->id},
         {"object", "model"},
         {"created", unix_time_now()},
         {"owned_by", "arclight"},
         {"meta",
          {{"path", m->path},
           {"architecture", m->architecture},
           {"context_length", m->context_length},
           {"speculative", m->speculative},
           {"capabilities",
            {{"vision", m->vision}, {"tools", m->tools}, {"reasoning", m->reasoning}}}}}});
  }
  res.set_content(json({{"object", "list"}, {"data", data}}).dump(), "application/json");
}

void handle_chat_completions(InferenceService& service, const httplib::Request& req,
                             httplib::Response& res) {
  auto body = parse_body(req.body);
  if (!body.ok()) return send_openai_error(res, body.status());
  auto parsed = parse_openai_chat(*body);
  if (!parsed.ok()) return send_openai_error(res, parsed.status());
  with_schema_order(req.body, /*anthropic=*/false, /*chat=*/true, parsed->constraint);
  auto stream = get_bool(*body, "stream");
  if (!stream.ok()) return send_openai_error(res, stream.status());
  bool include_usage = false;
  auto stream_options = get_object(*body, "stream_options");
  if (!stream_options.ok()) return send_openai_error(res, stream_options.status());
  if (*stream_options != nullptr) {
    auto usage = get_bool(**stream_options, "include_usage", "stream_options");
    if (!usage.ok()) return send_openai_error(res, usage.status());
    include_usage = usage->value_or(false);
  }
  if (Status s = check_images(service, *parsed, /*strict_media_type=*/false); !s.ok())
    return send_openai_error(res, s);
  auto prepared = service.prepare_chat(*parsed);
  if (!prepared.ok()) return send_openai_error(res, prepared.status());
  const std::string id = make_id("chatcmpl-");
  const int64_t created = unix_time_now();
  const std::string model = model_name(service);

  if (!stream->value_or(false)) {
    Collected c;
    Status s = service.run(*prepared, [&](const GenerationEvent& ev) { return collect(c, ev); });
    if (!s.ok()) return send_openai_error(res, s);
    if (c.finish.finish_reason == "error") return send_openai_error(res, c.finish.error);
    json message = {{"role", "assistant"}, {"content", c.content}};
    if (!c.reasoning.empty()) message["reasoning_content"] = c.reasoning;
    if (!c.tool_calls.empty()) {
      json calls = json::array();
      for (size_t i = 0; i < c.tool_calls.size(); ++i) {
        calls.push_back(tool_call_json(c.tool_calls[i], static_cast<int>(i), false));
      }
      message["tool_calls"] = calls;
      if (c.content.empty()) message["content"] = nullptr;
    }
    // As the streamed form says it: a turn that ended in calls ended for them.
    const std::string reason = !c.tool_calls.empty() && c.finish.finish_reason == "stop"
                                   ? std::string("tool_calls")
                                   : c.finish.finish_reason;
    json choice = {{"index", 0},
                   {"message", message},
                   {"logprobs",
                    parsed->sampling.top_logprobs >= 0 ? logprobs_json(c.logprobs) : json(nullptr)},
                   {"finish_reason", reason}};
    json out = {{"id", id},
                {"object", "chat.completion"},
                {"created", created},
                {"model", model},
                {"choices", json::array({choice})},
                {"usage", usage_json(c.finish.usage)},
                {"timings", timings_json(c.finish.timings)}};
    res.set_content(out.dump(-1, ' ', false, json::error_handler_t::replace), "application/json");
    return;
  }

  // Streaming: the provider runs the whole generation on this connection's thread.
  auto request = std::make_shared<ChatRequest>(std::move(*parsed));
  std::shared_ptr<PreparedRequest> job = *prepared;
  InferenceService* svc = &service;
  res.set_header("Cache-Control", "no-cache");
  res.set_chunked_content_provider("text/event-stream", [svc, request, job, id, created, model,
                                                         include_usage](size_t,
                                                                        httplib::DataSink& sink) {
    auto chunk = [&](json delta, json finish_reason, json logprobs) {
      json choice = {
          {"index", 0}, {"delta", std::move(delta)}, {"finish_reason", std::move(finish_reason)}};
      if (!logprobs.is_null()) choice["logprobs"] = std::move(logprobs);
      return json{{"id", id},
                  {"object", "chat.completion.chunk"},
                  {"created", created},
                  {"model", model},
                  {"choices", json::array({choice})}};
    };
    bool alive = sink_write(
        sink, sse_frame(chunk({{"role", "assistant"}, {"content", ""}}, nullptr, nullptr)));
    int tool_index = 0;
    bool saw_tool = false;
    Status s = svc->run(job, [&](const GenerationEvent& ev) {
      if (!alive) return false;
      json lp = request->sampling.top_logprobs >= 0 && !ev.logprobs.empty()
                    ? logprobs_json(ev.logprobs)
                    : json(nullptr);
      switch (ev.kind) {
        case GenerationEvent::Kind::kContent:
          alive = sink_write(sink, sse_frame(chunk({{"content", ev.text}}, nullptr, lp)));
          break;
        case GenerationEvent::Kind::kReasoning:
          alive = sink_write(sink, sse_frame(chunk({{"reasoning_content", ev.text}}, nullptr, lp)));
          break;
        case GenerationEvent::Kind::kToolCall:
          saw_tool = true;
          alive = sink_write(
              sink,
              sse_frame(chunk(
                  {{"tool_calls", json::array({tool_call_json(ev.tool_call, tool_index++, true)})}},
                  nullptr, nullptr)));
          break;
        case GenerationEvent::Kind::kFinish: {
          if (ev.finish_reason == "error") {
            json err = {{"error", {{"message", ev.error.message()}, {"type", "server_error"}}}};
            alive = sink_write(sink, sse_frame(err));
            break;
          }
          std::string reason = ev.finish_reason;
          if (saw_tool && reason == "stop") reason = "tool_calls";
          json last = chunk(json::object(), reason, nullptr);
          last["timings"] = timings_json(ev.timings);
          alive = sink_write(sink, sse_frame(last));
          if (alive && include_usage) {
            json u = {{"id", id},
                      {"object", "chat.completion.chunk"},
                      {"created", created},
                      {"model", model},
                      {"choices", json::array()},
                      {"usage", usage_json(ev.usage)}};
            alive = sink_write(sink, sse_frame(u));
          }
          break;
        }
      }
      return alive;
    });
    if (!s.ok() && alive) {
      json err = {{"error", {{"message", s.message()}, {"type", "invalid_request_error"}}}};
      sink_write(sink, sse_frame(err));
    }
    if (alive) sink_write(sink, "data: [DONE]\n\n");
    sink.done();
    return true;
  });
}

void handle_completions(InferenceService& service, const httplib::Request& req,
                        httplib::Response& res) {
  auto body = parse_body(req.body);
  if (!body.ok()) return send_openai_error(res, body.status());
  auto parsed = parse_openai_completion(*body);
  if (parsed.ok())
    with_schema_order(req.body, /*anthropic=*/false, /*chat=*/false, parsed->constraint);
  if (!parsed.ok()) return send_openai_error(res, parsed.status());
  auto stream = get_bool(*body, "stream");
  if (!stream.ok()) return send_openai_error(res, stream.status());
  auto prepared = service.prepare_completion(*parsed);
  if (!prepared.ok()) return send_openai_error(res, prepared.status());
  const std::string id = make_id("cmpl-");
  const int64_t created = unix_time_now();
  const std::string model = model_name(service);
  const bool want_logprobs = parsed->sampling.top_logprobs >= 0;

  auto legacy_logprobs = [](const std::vector<TokenLogprob>& lps, size_t text_offset) {
    json tokens = json::array(), token_logprobs = json::array(), top = json::array(),
         offsets = json::array();
    size_t off = text_offset;
    for (const auto& lp : lps) {
      tokens.push_back(lp.token);
      token_logprobs.push_back(lp.logprob);
      json alt = json::object();
      for (const auto& [t, p] : lp.top) alt[t] = p;
      top.push_back(alt);
      offsets.push_back(off);
      off += lp.token.size();
    }
    return json{{"tokens", tokens},
                {"token_logprobs", token_logprobs},
                {"top_logprobs", top},
                {"text_offset", offsets}};
  };

  if (!stream->value_or(false)) {
    Collected c;
    Status s = service.run(*prepared, [&](const GenerationEvent& ev) { return collect(c, ev); });
    if (!s.ok()) return send_openai_error(res, s);
    if (c.finish.finish_reason == "error") return send_openai_error(res, c.finish.error);
    // echo: the prompt (and its per-token logprobs) comes before the completion.
    std::vector<TokenLogprob> lps;
    std::string text = c.content;
    if (parsed->echo) {
      text = (*prepared)->prompt_text + c.content;
      lps = (*prepared)->prompt_logprobs;
    }
    lps.insert(lps.end(), c.logprobs.begin(), c.logprobs.end());
    json choice = {{"index", 0},
                   {"text", text},
                   {"logprobs", want_logprobs ? legacy_logprobs(lps, 0) : json(nullptr)},
                   {"finish_reason", c.finish.finish_reason}};
    json out = {{"id", id},
                {"object", "text_completion"},
                {"created", created},
                {"model", model},
                {"choices", json::array({choice})},
                {"usage", usage_json(c.finish.usage)},
                {"timings", timings_json(c.finish.timings)}};
    res.set_content(out.dump(-1, ' ', false, json::error_handler_t::replace), "application/json");
    return;
  }

  std::shared_ptr<PreparedRequest> job = *prepared;
  const bool echo = parsed->echo;
  InferenceService* svc = &service;
  res.set_header("Cache-Control", "no-cache");
  res.set_chunked_content_provider("text/event-stream", [svc, job, echo, id, created, model,
                                                         want_logprobs, legacy_logprobs](
                                                            size_t, httplib::DataSink& sink) {
    bool alive = true;
    size_t offset = 0;
    if (echo) {
      json choice = {
          {"index", 0},
          {"text", job->prompt_text},
          {"logprobs", want_logprobs ? legacy_logprobs(job->prompt_logprobs, 0) : json(nullptr)},
          {"finish_reason", nullptr}};
      alive = sink_write(sink, sse_frame({{"id", id},
                                          {"object", "text_completion"},
                                          {"created", created},
                                          {"model", model},
                                          {"choices", json::array({choice})}}));
      offset = job->prompt_text.size();
    }
    Status s = svc->run(job, [&](const GenerationEvent& ev) {
      if (!alive) return false;
      json choice = {{"index", 0}, {"text", ""}, {"logprobs", nullptr}, {"finish_reason", nullptr}};
      if (ev.kind == GenerationEvent::Kind::kFinish) {
        if (ev.finish_reason == "error") {
          alive = sink_write(
              sink,
              sse_frame({{"error", {{"message", ev.error.message()}, {"type", "server_error"}}}}));
          return alive;
        }
        choice["finish_reason"] = ev.finish_reason;
      } else {
        choice["text"] = ev.text;
        if (want_logprobs) choice["logprobs"] = legacy_logprobs(ev.logprobs, offset);
        offset += ev.text.size();
      }
      json out = {{"id", id},
                  {"object", "text_completion"},
                  {"created", created},
                  {"model", model},
                  {"choices", json::array({choice})}};
      if (ev.kind == GenerationEvent::Kind::kFinish) out["usage"] = usage_json(ev.usage);
      alive = sink_write(sink, sse_frame(out));
      return alive;
    });
    if (!s.ok() && alive) {
      sink_write(
          sink,
          sse_frame({{"error", {{"message", s.message()}, {"type", "invalid_request_error"}}}}));
    }
    if (alive) sink_write(sink, "data: [DONE]\n\n");
    sink.done();
    return true;
  });
}

}  // namespace arc::server
