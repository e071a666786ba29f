#include "anthropic_api.h"

#include <memory>

#include "api_common.h"
#include "api_constraint.h"
#include "api_images.h"

namespace arc::server {
namespace {

const char* anthropic_error_type(int http) {
  switch (http) {
    case 400:
      return "invalid_request_error";
    case 401:
      return "authentication_error";
    case 403:
      return "permission_error";
    case 404:
      return "not_found_error";
    case 413:
      return "request_too_large";
    case 429:
      return "rate_limit_error";
    case 503:
      return "overloaded_error";
    default:
      return http >= 500 ? "api_error" : "invalid_request_error";
  }
}

// The "type" of a block, or "" when it has none; an error when it is not a string.
Result<std::string> type_of(const json& blk, const std::string& where) {
  ARC_ASSIGN_OR_RETURN(auto type, get_string(blk, "type", where));
  return type.value_or("");
}

// Text of a "content" that may be a string or a list of text blocks (system, tool_result).
Result<std::string> text_of(const json& content, const std::string& where) {
  if (content.is_string()) return content.get<std::string>();
  if (!content.is_array())
    return invalid_argument(where + " must be a string or an array of blocks");
  std::string out;
  for (const auto& b : content) {
    if (!b.is_object() || !b.contains("type") || b["type"] != "text" || !b.contains("text") ||
        !b["text"].is_string()) {
      return invalid_argument(where + " may only contain text blocks here");
    }
    if (!out.empty()) out += "\n";
    out += b["text"].get<std::string>();
  }
  return out;
}

Status convert_user_blocks(const json& blocks, size_t i, json& out_messages,
                           std::vector<ImageInput>& images) {
  json parts = json::array();
  auto flush_parts = [&] {
    if (!parts.empty()) {
      out_messages.push_back({{"role", "user"}, {"content", parts}});
      parts = json::array();
    }
  };
  for (size_t b = 0; b < blocks.size(); ++b) {
    const json& blk = blocks[b];
    std::string where = "messages[" + std::to_string(i) + "].content[" + std::to_string(b) + "]";
    if (!blk.is_object() || !blk.contains("type") || !blk["type"].is_string()) {
      return invalid_argument(where + " must be an object with a 'type'");
    }
    std::string type = blk["type"];
    if (type == "text") {
      if (!blk.contains("text") || !blk["text"].is_string())
        return invalid_argument(where + ".text must be a string");
      parts.push_back({{"type", "text"}, {"text", blk["text"]}});
    } else if (type == "image") {
      const json& src = blk.contains("source") ? blk["source"] : json();
      if (!src.is_object()) return invalid_argument(where + ".source is required");
      ARC_ASSIGN_OR_RETURN(std::string st, type_of(src, where + ".source"));
      if (st == "url") {
        return invalid_argument(
            where + ": remote image URLs are not fetched; send the image as a base64 source");
      }
      if (st != "base64" || !src.contains("data") || !src["data"].is_string() ||
          !src.contains("media_type") || !src["media_type"].is_string()) {
        return invalid_argument(where + ".source must be {type: base64, media_type, data}");
      }
      ARC_ASSIGN_OR_RETURN(ImageInput img,
                           image_from_base64(src["media_type"].get<std::string>(),
                                             src["data"].get<std::string>(), where + ".source"));
      parts.push_back(image_placeholder_part(images.size()));
      images.push_back(std::move(img));
    } else if (type == "tool_result") {
      flush_parts();
      if (!blk.contains("tool_use_id") || !blk["tool_use_id"].is_string()) {
        return invalid_argument(where + ".tool_use_id must be a string");
      }
      std::string text;
      if (blk.contains("content") && !blk["content"].is_null()) {
        ARC_ASSIGN_OR_RETURN(text, text_of(blk["content"], where + ".content"));
      }
      ARC_ASSIGN_OR_RETURN(auto is_error, get_bool(blk, "is_error", where));
      if (is_error.value_or(false)) text = "Error: " + text;
      out_messages.push_back(
          {{"role", "tool"}, {"tool_call_id", blk["tool_use_id"]}, {"content", text}});
    } else {
      return invalid_argument(where + " has unsupported type '" + type + "' in a user message");
    }
  }
  flush_parts();
  return ok_status();
}

Status convert_assistant_blocks(const json& blocks, size_t i, json& out_messages) {
  std::string text, reasoning;
  json calls = json::array();
  for (size_t b = 0; b < blocks.size(); ++b) {
    const json& blk = blocks[b];
    std::string where = "messages[" + std::to_string(i) + "].content[" + std::to_string(b) + "]";
    if (!blk.is_object()) return invalid_argument(where + " must be an object with a 'type'");
    ARC_ASSIGN_OR_RETURN(std::string type, type_of(blk, where));
    if (type == "text") {
      if (!blk.contains("text") || !blk["text"].is_string())
        return invalid_argument(where + ".text must be a string");
      text += blk["text"].get<std::string>();
    } else if (type == "thinking") {
      ARC_ASSIGN_OR_RETURN(auto thinking, get_string(blk, "thinking", where));
      reasoning += thinking.value_or("");
    } else if (type == "redacted_thinking") {
      // Nothing to show the model.
    } else if (type == "tool_use") {
      if (!blk.contains("id") || !blk["id"].is_string() || !blk.contains("name") ||
          !blk["name"].is_string()) {
        return invalid_argument(where + ": tool_use needs 'id' and 'name'");
      }
      json input = blk.contains("input") && !blk["input"].is_null() ? blk["input"] : json::object();
      if (!input.is_object()) return invalid_argument("'" + where + ".input' must be an object");
      calls.push_back({{"id", blk["id"]},
                       {"type", "function"},
                       {"function", {{"name", blk["name"]}, {"arguments", input.dump()}}}});
    } else {
      return invalid_argument(where + " has unsupported type '" + type +
                              "' in an assistant message");
    }
  }
  json m = {{"role", "assistant"}, {"content", text}};
  if (!reasoning.empty()) m["reasoning_content"] = reasoning;
  if (!calls.empty()) m["tool_calls"] = calls;
  out_messages.push_back(m);
  return ok_status();
}

std::string stop_reason_for(const GenerationEvent& fin, bool saw_tool) {
  if (saw_tool) return "tool_use";
  if (fin.finish_reason == "length") return "max_tokens";
  if (fin.finish_reason == "stop" && !fin.matched_stop.empty()) return "stop_sequence";
  return "end_turn";
}

json usage_json(const Usage& u) {
  return {{"input_tokens", u.prompt_tokens - u.cached_tokens},
          {"cache_read_input_tokens", u.cached_tokens},
          {"cache_creation_input_tokens", 0},
          {"output_tokens", u.completion_tokens}};
}

json parse_tool_input(const ToolCall& tc) {
  json input = json::parse(tc.arguments, nullptr, false);
  if (input.is_discarded() || !input.is_object()) return json::object();
  return input;
}

}  // namespace

void send_anthropic_error(httplib::Response& res, const Status& status, int http_status) {
  int http = http_status != 0 ? http_status : http_status_for(status);
  res.status = http;
  json body = {{"type", "error"},
               {"error", {{"type", anthropic_error_type(http)}, {"message", status.message()}}}};
  // The message may quote client text: never let an encoding problem turn a 4xx into a throw.
  res.set_content(body.dump(-1, ' ', false, json::error_handler_t::replace), "application/json");
}

Result<ChatRequest> parse_anthropic_messages(const json& body, bool for_counting) {
  ChatRequest req;
  req.client = "anthropic";
  ARC_ASSIGN_OR_RETURN(auto model, get_string(body, "model"));
  if (!model) return invalid_argument("'model' is required");
  if (!for_counting) {
    ARC_ASSIGN_OR_RETURN(auto max_tokens, get_int(body, "max_tokens", 1, 1 << 24));
    if (!max_tokens) return invalid_argument("'max_tokens' is required");
    req.sampling.max_tokens = static_cast<int>(*max_tokens);
  }
  ARC_ASSIGN_OR_RETURN(auto temperature, get_number(body, "temperature", 0.0, 1.0));
  ARC_ASSIGN_OR_RETURN(auto top_p, get_number(body, "top_p", 0.0, 1.0));
  ARC_ASSIGN_OR_RETURN(auto top_k, get_int(body, "top_k", 0, 1000000));
  ARC_ASSIGN_OR_RETURN(req.sampling.stop, get_stop_list(body, "stop_sequences"));
  if (temperature) req.sampling.temperature = static_cast<float>(*temperature);
  if (top_p) {
    if (*top_p <= 0) return invalid_argument("'top_p' must be greater than 0");
    req.sampling.top_p = static_cast<float>(*top_p);
  }
  if (top_k) req.sampling.top_k = static_cast<int>(*top_k);

  json messages = json::array();
  if (body.contains("system") && !body["system"].is_null()) {
    ARC_ASSIGN_OR_RETURN(std::string system, text_of(body["system"], "'system'"));
    messages.push_back({{"role", "system"}, {"content", system}});
  }
  if (!body.contains("messages") || !body["messages"].is_array()) {
    return invalid_argument("'messages' must be an array");
  }
  const json& in = body["messages"];
  if (in.empty()) return invalid_argument("'messages' must contain at least one message");
  for (size_t i = 0; i < in.size(); ++i) {
    const json& m = in[i];
    std::string where = "messages[" + std::to_string(i) + "]";
    if (!m.is_object() || !m.contains("role") || !m["role"].is_string()) {
      return invalid_argument(where + ".role must be a string");
    }
    std::string role = m["role"];
    if (role != "user" && role != "assistant") {
      return invalid_argument(where + ".role '" + role +
                              "' must be 'user' or 'assistant' (put system text in 'system')");
    }
    if (!m.contains("content")) return invalid_argument(where + ".content is missing");
    const json& content = m["content"];
    if (content.is_string()) {
      messages.push_back({{"role", role}, {"content", content}});
    } else if (content.is_array()) {
      if (role == "user") {
        ARC_RETURN_IF_ERROR(convert_user_blocks(content, i, messages, req.images));
      } else {
        ARC_RETURN_IF_ERROR(convert_assistant_blocks(content, i, messages));
      }
    } else {
      return invalid_argument(where + ".content must be a string or an array of blocks");
    }
  }
  req.messages = std::move(messages);

  if (body.contains("tools") && !body["tools"].is_null()) {
    if (!body["tools"].is_array()) return invalid_argument("'tools' must be an array");
    for (size_t i = 0; i < body["tools"].size(); ++i) {
      const json& t = body["tools"][i];
      if (!t.is_object() || !t.contains("name") || !t["name"].is_string()) {
        return invalid_argument("tools[" + std::to_string(i) + "].name must be a string");
      }
      const std::string where = "tools[" + std::to_string(i) + "]";
      ARC_ASSIGN_OR_RETURN(auto description, get_string(t, "description", where));
      json schema = t.contains("input_schema") ? t["input_schema"] : json::object();
      if (!schema.is_object()) {
        return invalid_argument("tools[" + std::to_string(i) + "].input_schema must be an object");
      }
      req.tools.push_back({{"type", "function"},
                           {"function",
                            {{"name", t["name"]},
                             {"description", description.value_or("")},
                             {"parameters", schema}}}});
    }
  }
  ARC_ASSIGN_OR_RETURN(const json* tool_choice, get_object(body, "tool_choice"));
  if (tool_choice != nullptr) {
    ARC_ASSIGN_OR_RETURN(auto type, get_string(*tool_choice, "type", "tool_choice"));
    if (type == "none") req.tools = json::array();
  }
  ARC_ASSIGN_OR_RETURN(const json* thinking, get_object(body, "thinking"));
  if (thinking != nullptr) {
    ARC_ASSIGN_OR_RETURN(auto type, get_string(*thinking, "type", "thinking"));
    if (type == "enabled") {
      req.enable_thinking = true;
      ARC_ASSIGN_OR_RETURN(req.reasoning_budget,
                           get_int(*thinking, "budget_tokens", 0, INT32_MAX, "thinking"));
    } else if (type == "disabled") {
      req.enable_thinking = false;
    } else if (type) {
      return invalid_argument("'thinking.type' must be 'enabled' or 'disabled'");
    }
  }
  // Anthropic's effort setting (output_config.effort) is the reasoning effort of gpt-oss.
  ARC_ASSIGN_OR_RETURN(const json* output_config, get_object(body, "output_config"));
  if (output_config != nullptr) {
    ARC_ASSIGN_OR_RETURN(req.reasoning_effort,
                         get_reasoning_effort(*output_config, "effort", "output_config"));
  }
  ARC_RETURN_IF_ERROR(get_bool(body, "stream"));
  if (!req.tools.empty()) {
    ARC_ASSIGN_OR_RETURN(req.constraint, parse_anthropic_constraint(body));
  }
  return req;
}

void handle_count_tokens(InferenceService& service, const httplib::Request& req,
                         httplib::Response& res) {
  auto body = parse_body(req.body);
  if (!body.ok()) return send_anthropic_error(res, body.status());
  auto parsed = parse_anthropic_messages(*body, /*for_counting=*/true);
  if (!parsed.ok()) return send_anthropic_error(res, parsed.status());
  if (Status s = check_images(service, *parsed, /*strict_media_type=*/true); !s.ok())
    return send_anthropic_error(res, s);
  auto n = service.count_chat_tokens(*parsed);
  if (!n.ok()) return send_anthropic_error(res, n.status());
  res.set_content(json({{"input_tokens", *n}}).dump(), "application/json");
}

void handle_messages(InferenceService& service, const httplib::Request& req,
                     httplib::Response& res) {
  auto body = parse_body(req.body);
  if (!body.ok()) return send_anthropic_error(res, body.status());
  auto parsed = parse_anthropic_messages(*body, /*for_counting=*/false);
  if (!parsed.ok()) return send_anthropic_error(res, parsed.status());
  with_schema_order(req.body, /*anthropic=*/true, /*chat=*/true, parsed->constraint);
  auto stream = get_bool(*body, "stream");
  if (!stream.ok()) return send_anthropic_error(res, stream.status());
  if (Status s = check_images(service, *parsed, /*strict_media_type=*/true); !s.ok())
    return send_anthropic_error(res, s);
  auto prepared = service.prepare_chat(*parsed);
  if (!prepared.ok()) return send_anthropic_error(res, prepared.status());
  const std::string id = make_id("msg_");
  auto m = service.model();
  const std::string model = m ? m->id : std::string("none");

  if (!stream->value_or(false)) {
    std::string text, thinking;
    json content = json::array();
    GenerationEvent fin;
    bool saw_tool = false;
    Status s = service.run(*prepared, [&](const GenerationEvent& ev) {
      switch (ev.kind) {
        case GenerationEvent::Kind::kContent:
          text += ev.text;
          break;
        case GenerationEvent::Kind::kReasoning:
          thinking += ev.text;
          break;
        case GenerationEvent::Kind::kToolCall:
          saw_tool = true;
          if (!text.empty()) {
            content.push_back({{"type", "text"}, {"text", text}});
            text.clear();
          }
          content.push_back({{"type", "tool_use"},
                             {"id", ev.tool_call.id.empty() ? make_id("toolu_") : ev.tool_call.id},
                             {"name", ev.tool_call.name},
                             {"input", parse_tool_input(ev.tool_call)}});
          break;
        case GenerationEvent::Kind::kFinish:
          fin = ev;
          break;
      }
      return true;
    });
    if (!s.ok()) return send_anthropic_error(res, s);
    if (fin.finish_reason == "error") return send_anthropic_error(res, fin.error);
    if (!text.empty() || content.empty()) content.push_back({{"type", "text"}, {"text", text}});
    if (!thinking.empty()) {
      content.insert(content.begin(),
                     json{{"type", "thinking"}, {"thinking", thinking}, {"signature", ""}});
    }
    json out = {
        {"id", id},
        {"type", "message"},
        {"role", "assistant"},
        {"model", model},
        {"content", content},
        {"stop_reason", stop_reason_for(fin, saw_tool)},
        {"stop_sequence", fin.matched_stop.empty() ? json(nullptr) : json(fin.matched_stop)},
        {"usage", usage_json(fin.usage)}};
    res.set_content(out.dump(-1, ' ', false, json::error_handler_t::replace), "application/json");
    return;
  }

  std::shared_ptr<PreparedRequest> job = *prepared;
  InferenceService* svc = &service;
  const int64_t prompt_tokens = job->prompt_tokens;
  res.set_header("Cache-Control", "no-cache");
  res.set_chunked_content_provider("text/event-stream", [svc, job, id, model, prompt_tokens](
                                                            size_t, httplib::DataSink& sink) {
    bool alive = sink_write(
        sink, sse_frame({{"type", "message_start"},
                         {"message",
                          {{"id", id},
                           {"type", "message"},
                           {"role", "assistant"},
                           {"model", model},
                           {"content", json::array()},
                           {"stop_reason", nullptr},
                           {"stop_sequence", nullptr},
                           {"usage", {{"input_tokens", prompt_tokens}, {"output_tokens", 0}}}}}},
                        "message_start"));
    int index = -1;
    std::string open_kind;  // "text" | "thinking" | ""
    bool saw_tool = false;
    auto close_block = [&] {
      if (open_kind.empty()) return;
      alive =
          alive && sink_write(sink, sse_frame({{"type", "content_block_stop"}, {"index", index}},
                                              "content_block_stop"));
      open_kind.clear();
    };
    auto open_block = [&](const std::string& kind, json block) {
      close_block();
      ++index;
      open_kind = kind;
      alive = alive && sink_write(sink, sse_frame({{"type", "content_block_start"},
                                                   {"index", index},
                                                   {"content_block", std::move(block)}},
                                                  "content_block_start"));
    };
    Status s = svc->run(job, [&](const GenerationEvent& ev) {
      if (!alive) return false;
      switch (ev.kind) {
        case GenerationEvent::Kind::kContent:
          if (ev.text.empty()) break;
          if (open_kind != "text") open_block("text", {{"type", "text"}, {"text", ""}});
          alive =
              alive &&
              sink_write(sink, sse_frame({{"type", "content_block_delta"},
                                          {"index", index},
                                          {"delta", {{"type", "text_delta"}, {"text", ev.text}}}},
                                         "content_block_delta"));
          break;
        case GenerationEvent::Kind::kReasoning:
          if (ev.text.empty()) break;
          if (open_kind != "thinking") {
            open_block("thinking", {{"type", "thinking"}, {"thinking", ""}, {"signature", ""}});
          }
          alive =
              alive &&
              sink_write(sink,
                         sse_frame({{"type", "content_block_delta"},
                                    {"index", index},
                                    {"delta", {{"type", "thinking_delta"}, {"thinking", ev.text}}}},
                                   "content_block_delta"));
          break;
        case GenerationEvent::Kind::kToolCall: {
          saw_tool = true;
          open_block("tool_use",
                     {{"type", "tool_use"},
                      {"id", ev.tool_call.id.empty() ? make_id("toolu_") : ev.tool_call.id},
                      {"name", ev.tool_call.name},
                      {"input", json::object()}});
          alive = alive &&
                  sink_write(
                      sink, sse_frame({{"type", "content_block_delta"},
                                       {"index", index},
                                       {"delta",
                                        {{"type", "input_json_delta"},
                                         {"partial_json", parse_tool_input(ev.tool_call).dump()}}}},
                                      "content_block_delta"));
          close_block();
          break;
        }
        case GenerationEvent::Kind::kFinish:
          if (ev.finish_reason == "error") {
            close_block();
            alive =
                alive &&
                sink_write(
                    sink,
                    sse_frame({{"type", "error"},
                               {"error", {{"type", "api_error"}, {"message", ev.error.message()}}}},
                              "error"));
            break;
          }
          if (index < 0) open_block("text", {{"type", "text"}, {"text", ""}});
          close_block();
          alive =
              alive &&
              sink_write(
                  sink,
                  sse_frame({{"type", "message_delta"},
                             {"delta",
                              {{"stop_reason", stop_reason_for(ev, saw_tool)},
                               {"stop_sequence",
                                ev.matched_stop.empty() ? json(nullptr) : json(ev.matched_stop)}}},
                             {"usage", {{"output_tokens", ev.usage.completion_tokens}}}},
                            "message_delta"));
          alive = alive && sink_write(sink, sse_frame({{"type", "message_stop"}}, "message_stop"));
          break;
      }
      return alive;
    });
    if (!s.ok() && alive) {
      sink_write(sink, sse_frame({{"type", "error"},
                                  {"error", {{"type", "api_error"}, {"message", s.message()}}}},
                                 "error"));
    }
    sink.done();
    return true;
  });
}

}  // namespace arc::server
