// From an API request to tokens and back: chat template, tokenization and the context check
// (prepare), then the scheduler's tokens through the streaming detokenizer, stop strings and the
// output parser into GenerationEvents (run), with usage, timings and metrics at the end.
#include <ctime>
#include <random>

#include "arc/log.h"
#include "arc/vision_image.h"
#include "sched/engine_service_impl.h"
#include "sched/output_constraint.h"
#include "sched/stop_matcher.h"

namespace arc {

using nlohmann::json;

namespace {

struct Prepared : PreparedRequest {
  std::shared_ptr<LoadedModel> model;
  SequenceRequest seq;
  std::vector<std::string> stops;
  OutputParserOptions parser;
  bool chat = true;
  bool echo = false;
  int top_logprobs = -1;
};

// CPU time this thread has used, in nanoseconds.
int64_t thread_cpu_ns() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

std::string random_call_id() {
  thread_local std::mt19937_64 rng{std::random_device{}()};
  static constexpr char kAlnum[] = "abcdefghijklmnopqrstuvwxyz0123456789";
  std::string id = "call_";
  for (int i = 0; i < 24; ++i) id.push_back(kAlnum[rng() % 36]);
  return id;
}

bool has_images(const json& messages) {
  for (const auto& m : messages) {
    if (!m.contains("content") || !m["content"].is_array()) continue;
    for (const auto& p : m["content"]) {
      if (p.is_object() && p.contains("type") && p["type"] == "image_url") return true;
    }
  }
  return false;
}

Result<std::shared_ptr<LoadedModel>> ready_model(EngineService::Impl& m) {
  if (std::string f = m.fault(); !f.empty()) {
    return unavailable(f + "; the engine must be restarted");
  }
  {
    std::lock_guard<std::mutex> lock(m.mu);
    if (m.state == EngineState::kLoading) {
      return failed_precondition("a model is loading; try again when it is ready");
    }
  }
  auto l = m.current();
  if (!l)
    return failed_precondition("no model is loaded; load one with POST /engine/load or the app");
  return l;
}

Result<std::string> render_chat(const LoadedModel& l, const ChatRequest& r) {
  if (!l.formatter) {
    return failed_precondition("the loaded model has no usable chat template; use /v1/completions");
  }
  if (has_images(r.messages) && !l.info.vision) {
    return invalid_argument("the loaded model (" + l.info.id +
                            ") cannot see images; remove the image parts or load a vision model");
  }
  ARC_ASSIGN_OR_RETURN(auto messages, chat_messages_from_json(nlohmann::ordered_json(r.messages)));
  ChatFormatOptions fo;
  fo.add_generation_prompt = true;
  fo.enable_thinking = r.enable_thinking;
  if (r.reasoning_effort) fo.extra["reasoning_effort"] = *r.reasoning_effort;
  if (!r.tools.empty()) fo.tools = nlohmann::ordered_json(r.tools);
  return l.formatter->format(messages, fo);
}

Result<std::vector<int32_t>> tokenize_prompt(const LoadedModel& l, const std::string& text) {
  EncodeOptions eo = l.tokenizer->default_encode_options();
  // Templates usually write the BOS token themselves; never add a second one.
  if (eo.add_bos && l.tokenizer->bos_id()) {
    std::string_view bos = l.tokenizer->piece(*l.tokenizer->bos_id());
    if (!bos.empty() && text.compare(0, bos.size(), bos) == 0) eo.add_bos = false;
  }
  return l.tokenizer->encode(text, eo);
}

Status check_context(const LoadedModel& l, int64_t prompt_tokens, SamplingParams& sp) {
  if (prompt_tokens + 1 > l.settings.ctx_size) {
    return resource_exhausted(
        "the prompt has " + std::to_string(prompt_tokens) + " tokens but the context holds " +
        std::to_string(l.settings.ctx_size) +
        "; shorten the conversation or load the model with a larger ctx_size");
  }
  const int64_t room = l.settings.ctx_size - prompt_tokens;
  if (sp.max_tokens < 0 || sp.max_tokens > room) sp.max_tokens = static_cast<int>(room);
  return ok_status();
}

Status check_vision(const LoadedModel& l, const ChatRequest& r) {
  if (!r.images.empty() && !l.vision) {
    return invalid_argument("the loaded model (" + l.info.id +
                            ") cannot see images: it has no vision projector; remove the image "
                            "parts or load a vision model with its mmproj");
  }
  return ok_status();
}

}  // namespace

Result<std::shared_ptr<PreparedRequest>> EngineService::prepare_chat(const ChatRequest& r) {
  ARC_ASSIGN_OR_RETURN(auto l, ready_model(*impl_));
  ARC_RETURN_IF_ERROR(check_vision(*l, r));
  ARC_ASSIGN_OR_RETURN(std::string prompt, render_chat(*l, r));
  ARC_ASSIGN_OR_RETURN(auto ids, tokenize_prompt(*l, prompt));
  auto p = std::make_shared<Prepared>();
  p->model = l;
  if (!r.images.empty()) {
    // Each image's placeholder becomes its encoder tokens (encoded now or found in the cache).
    ARC_ASSIGN_OR_RETURN(ImagePrompt ip,
                         expand_image_prompt(ids, l->image_pad_id, r.images, *l->vision,
                                             l->image_cache, l->model->config()));
    ids = std::move(ip.tokens);
    p->seq.rope_positions = std::move(ip.rope_positions);
    p->seq.rope_next = ip.rope_next;
    p->seq.embd_rows = std::move(ip.embd_rows);
    p->seq.embd = std::move(ip.embd);
    p->seq.embd_width = (1 + l->model->config().n_deepstack) * l->model->config().n_embd;
    p->seq.cache_keys = std::move(ip.cache_keys);
    impl_->metrics.inc("arclight_images_total", static_cast<double>(r.images.size()));
    impl_->metrics.inc("arclight_images_encoded_total", static_cast<double>(ip.encoded));
  }
  p->seq.sampling = r.sampling;
  ARC_RETURN_IF_ERROR(check_context(*l, static_cast<int64_t>(ids.size()), p->seq.sampling));
  p->prompt_tokens = static_cast<int64_t>(ids.size());
  p->prompt_text = prompt;
  p->seq.prompt = std::move(ids);
  p->seq.stop_tokens = l->stop_tokens;
  p->seq.max_new_tokens = p->seq.sampling.max_tokens;
  p->seq.top_logprobs = r.sampling.top_logprobs;
  p->stops = r.sampling.stop;
  // Without tools the reply is parsed for reasoning only, except where reasoning itself is
  // marked by the family's syntax (gpt-oss channels, MiniMax's interleaved <think> blocks).
  const bool syntax_marks_reasoning =
      l->syntax == OutputSyntax::kGptOss || l->syntax == OutputSyntax::kMiniMaxM2;
  p->parser.syntax = r.tools.empty() && !syntax_marks_reasoning ? OutputSyntax::kPlain : l->syntax;
  p->parser.starts_in_reasoning = prompt_opens_reasoning(prompt);
  if (r.reasoning_budget && p->parser.starts_in_reasoning) {
    EncodeOptions eo = l->tokenizer->default_encode_options();
    eo.add_bos = false;
    eo.add_eos = false;
    ARC_ASSIGN_OR_RETURN(p->seq.reasoning_close, l->tokenizer->encode("\n</think>\n\n", eo));
    ARC_ASSIGN_OR_RETURN(p->seq.reasoning_tag, l->tokenizer->encode("</think>", eo));
    p->seq.reasoning_budget = *r.reasoning_budget;
  }
  if (!r.tools.empty()) p->parser.tools = nlohmann::ordered_json(r.tools);
  p->top_logprobs = r.sampling.top_logprobs;
  ConstraintOptions co;
  co.syntax = l->syntax;
  co.starts_in_reasoning = p->parser.starts_in_reasoning;
  ARC_ASSIGN_OR_RETURN(p->seq.masker, constraint_masker(*l, r.constraint, co));
  return std::shared_ptr<PreparedRequest>(std::move(p));
}

Result<std::shared_ptr<PreparedRequest>> EngineService::prepare_completion(
    const CompletionRequest& r) {
  ARC_ASSIGN_OR_RETURN(auto l, ready_model(*impl_));
  std::vector<int32_t> ids;
  if (r.prompt_tokens) {
    ids = *r.prompt_tokens;
    for (int32_t id : ids) {
      if (id < 0 || static_cast<size_t>(id) >= l->tokenizer->vocab_size()) {
        return invalid_argument("prompt token id " + std::to_string(id) +
                                " is outside the vocabulary (size " +
                                std::to_string(l->tokenizer->vocab_size()) + ")");
      }
    }
  } else {
    ARC_ASSIGN_OR_RETURN(ids, tokenize_prompt(*l, r.prompt));
  }
  if (ids.empty()) return invalid_argument("the prompt is empty");
  auto p = std::make_shared<Prepared>();
  p->model = l;
  p->chat = false;
  p->echo = r.echo;
  p->seq.sampling = r.sampling;
  ARC_RETURN_IF_ERROR(check_context(*l, static_cast<int64_t>(ids.size()), p->seq.sampling));
  p->prompt_tokens = static_cast<int64_t>(ids.size());
  p->prompt_text = r.prompt_tokens ? l->tokenizer->decode(ids) : r.prompt;
  p->seq.prompt = std::move(ids);
  p->seq.stop_tokens = l->stop_tokens;
  p->seq.max_new_tokens = p->seq.sampling.max_tokens;
  p->seq.top_logprobs = r.sampling.top_logprobs;
  p->seq.prompt_logprobs = r.echo && r.sampling.top_logprobs >= 0;
  p->stops = r.sampling.stop;
  p->parser.syntax = OutputSyntax::kPlain;
  p->parser.think_tags = false;
  p->top_logprobs = r.sampling.top_logprobs;
  ARC_ASSIGN_OR_RETURN(p->seq.masker, constraint_masker(*l, r.constraint, ConstraintOptions{}));
  if (p->seq.prompt_logprobs) {
    // The first prompt token has no logprob (nothing precedes it); the rest arrive with the run.
    const int32_t first = p->seq.prompt[0];
    std::string_view b = l->tokenizer->token_bytes(first);
    p->prompt_logprobs.push_back(
        {std::string(b), std::vector<uint8_t>(b.begin(), b.end()), 0.0f, {}});
  }
  return std::shared_ptr<PreparedRequest>(std::move(p));
}

Result<int64_t> EngineService::count_chat_tokens(const ChatRequest& r) {
  ARC_ASSIGN_OR_RETURN(auto l, ready_model(*impl_));
  ARC_RETURN_IF_ERROR(check_vision(*l, r));
  ARC_ASSIGN_OR_RETURN(std::string prompt, render_chat(*l, r));
  ARC_ASSIGN_OR_RETURN(auto ids, tokenize_prompt(*l, prompt));
  int64_t n = static_cast<int64_t>(ids.size());
  if (!r.images.empty()) {
    // An image counts as its encoder tokens; the sizes come from the headers (no decoding).
    const vision::PreprocessConfig pc = l->vision->preprocess_config();
    for (const ImageInput& img : r.images) {
      ARC_ASSIGN_OR_RETURN(vision::ImageInfo info, vision::probe_image(img.bytes));
      const bool turned = info.orientation >= 5 && info.orientation <= 8;
      ARC_ASSIGN_OR_RETURN(vision::ResizedSize sz,
                           vision::smart_resize(turned ? info.width : info.height,
                                                turned ? info.height : info.width, pc));
      n += static_cast<int64_t>(sz.height / pc.patch_size) * (sz.width / pc.patch_size) /
               (pc.merge_size * pc.merge_size) -
           1;
    }
  }
  return n;
}

Status EngineService::run(const std::shared_ptr<PreparedRequest>& request, const EventSink& sink) {
  auto* p = dynamic_cast<Prepared*>(request.get());
  if (p == nullptr) return internal_error("run() was given a request this engine did not prepare");
  LoadedModel& l = *p->model;
  const Tokenizer& tok = *l.tokenizer;
  auto handle = l.submit(p->seq);
  if (!handle) return unavailable("the model was unloaded; send the request again");

  // Control tokens are hidden, except the markers the output parser reads (gpt-oss's channels,
  // tool-call markers that some vocabularies make special).
  StreamingDetokenizer detok(tok, /*skip_special=*/false);
  auto shown = [&](int32_t token) {
    return !tok.is_special(token) ||
           output_syntax_reads_token(p->parser.syntax, tok.token_bytes(token));
  };
  StopMatcher stops(p->stops);
  OutputParser parser(p->parser);
  std::vector<TokenLogprob> pending_logprobs;
  bool client_gone = false;
  int64_t completion_tokens = 0;
  GenerationEvent finish;
  finish.kind = GenerationEvent::Kind::kFinish;
  auto token_logprob_of = [&](const TokenOutput& o) {
    std::string_view b = tok.token_bytes(o.token);
    TokenLogprob lp{std::string(b), std::vector<uint8_t>(b.begin(), b.end()), o.logprob, {}};
    for (const auto& t : o.top)
      lp.top.emplace_back(std::string(tok.token_bytes(t.token)), t.logprob);
    return lp;
  };
  auto deliver = [&](const std::vector<OutputEvent>& events) {
    for (const auto& e : events) {
      if (client_gone) return;
      GenerationEvent ev;
      switch (e.kind) {
        case OutputEvent::Kind::kContent:
          ev.kind = GenerationEvent::Kind::kContent;
          ev.text = e.text;
          break;
        case OutputEvent::Kind::kReasoning:
          ev.kind = GenerationEvent::Kind::kReasoning;
          ev.text = e.text;
          break;
        case OutputEvent::Kind::kToolCall:
          ev.kind = GenerationEvent::Kind::kToolCall;
          ev.tool_call = {random_call_id(), e.name, e.arguments, ""};
          break;
        case OutputEvent::Kind::kToolCallError:
          // A malformed call is not dropped: the client gets its text as content (a tool call
          // whose arguments are not JSON would break clients), and the log says why.
          logger("engine")->warn("malformed tool call from the model ({}); sent as content: {}",
                                 e.error.empty() ? "malformed tool call" : e.error,
                                 e.text.substr(0, 200));
          ev.kind = GenerationEvent::Kind::kContent;
          ev.text = e.text;
          break;
      }
      if (ev.kind != GenerationEvent::Kind::kToolCall && !pending_logprobs.empty()) {
        ev.logprobs = std::move(pending_logprobs);
        pending_logprobs.clear();
      }
      if (!sink(ev)) client_gone = true;
    }
  };
  auto feed_text = [&](const std::string& text) {
    std::string safe = stops.feed(text);
    if (!safe.empty()) deliver(parser.feed(safe));
  };

  Clock::time_point last_token_at{};
  // This thread's CPU time on the tokens (not wall time: on a box whose cores all run the
  // forward, the thread also waits for a core, which is not work it does).
  const int64_t cpu_at_start = thread_cpu_ns();
  std::vector<TokenOutput> outs;
  bool finished = false;
  while (!finished && !client_gone) {
    outs.clear();
    if (!handle->next(outs, std::chrono::milliseconds(200)) && outs.empty()) break;
    if (outs.empty()) {
      // A rank fault leaves the step blocked in a collective: end the request with the reason.
      if (std::string f = impl_->fault(); !f.empty()) {
        handle->cancel();
        finish.finish_reason = "error";
        finish.error = unavailable(f);
        finished = true;
        break;
      }
    }
    for (TokenOutput& o : outs) {
      if (o.is_prompt) {
        p->prompt_logprobs.push_back(token_logprob_of(o));
        continue;
      }
      // Outputs that end a request by cancel or error carry no token.
      const bool has_token =
          !o.finished || o.finish_reason == "stop" || o.finish_reason == "length";
      if (has_token) {
        completion_tokens++;
        auto now = Clock::now();
        if (last_token_at != Clock::time_point{}) {
          impl_->metrics.observe("arclight_inter_token_latency_seconds",
                                 std::chrono::duration<double>(now - last_token_at).count());
        }
        last_token_at = now;
        // An end-of-turn token ("stop" from the scheduler) ends the answer and shows no text.
        const bool end_token = o.finished && o.finish_reason == "stop" && !o.keeps_text;
        if (!end_token) {
          if (p->top_logprobs >= 0) pending_logprobs.push_back(token_logprob_of(o));
          if (shown(o.token)) feed_text(detok.feed(o.token));
        }
      }
      if (stops.matched() && !finished) {
        handle->cancel();  // the stop string ended it; the scheduler frees the blocks
        finish.finish_reason = "stop";
        finish.matched_stop = stops.matched_stop();
        finished = true;
        break;
      }
      if (o.finished) {
        finished = true;
        finish.finish_reason = o.finish_reason;
        finish.error = o.error;
        break;
      }
    }
  }
  // A request the client stopped (the user pressed Stop) still had a time to first token: the
  // Monitor's TTFT chart and the metric count it, with finish_reason "cancelled".
  auto report_cancelled = [&] {
    const RequestHandle::Timing t = handle->timing();
    if (t.first_token == Clock::time_point{} || t.arrival == Clock::time_point{}) return;
    const double ttft_ms =
        std::chrono::duration<double, std::milli>(t.first_token - t.arrival).count();
    impl_->metrics.observe("arclight_time_to_first_token_seconds", ttft_ms / 1000.0);
    impl_->emit("request", {{"finish_reason", "cancelled"},
                            {"prompt_tokens", p->prompt_tokens},
                            {"completion_tokens", completion_tokens},
                            {"cached_tokens", t.cached_tokens},
                            {"ttft_ms", ttft_ms}});
  };
  if (client_gone) {
    // Counted before the blocks are freed: whoever sees them free also sees the count.
    impl_->metrics.inc("arclight_requests_total", 1, {{"finish_reason", "cancelled"}});
    report_cancelled();
    handle->cancel();
    return ok_status();
  }
  if (!finished) {
    handle->cancel();
    finish.finish_reason = "error";
    finish.error = internal_error("the request ended without a result");
  }
  if (finish.finish_reason != "error") {
    if (!stops.matched()) feed_text(detok.flush());
    if (!stops.matched()) {
      std::string rest = stops.flush();
      if (!rest.empty()) deliver(parser.feed(rest));
    }
    deliver(parser.finish());
    if (!pending_logprobs.empty() && !client_gone) {
      GenerationEvent ev;
      ev.kind = GenerationEvent::Kind::kContent;
      ev.logprobs = std::move(pending_logprobs);
      client_gone = !sink(ev);
    }
  }
  if (client_gone) {
    report_cancelled();
    return ok_status();
  }

  const RequestHandle::Timing t = handle->timing();
  auto ms = [](Clock::time_point a, Clock::time_point b) {
    return a == Clock::time_point{} || b == Clock::time_point{}
               ? 0.0
               : std::chrono::duration<double, std::milli>(b - a).count();
  };
  finish.usage = {p->prompt_tokens, completion_tokens, t.cached_tokens, t.draft_tokens,
                  t.accepted_tokens};
  finish.timings.queue_ms = ms(t.arrival, t.admitted);
  finish.timings.ttft_ms = ms(t.arrival, t.first_token);
  const double prefill_ms = ms(t.admitted, t.first_token);
  if (prefill_ms > 0)
    finish.timings.prefill_tokens_per_s =
        (p->prompt_tokens - t.cached_tokens) * 1000.0 / prefill_ms;
  const Clock::time_point end = t.finished == Clock::time_point{} ? Clock::now() : t.finished;
  const double decode_ms = ms(t.first_token, end);
  if (decode_ms > 0 && t.generated > 1)
    finish.timings.decode_tokens_per_s = (t.generated - 1) * 1000.0 / decode_ms;
  finish.timings.total_ms = ms(t.arrival, end);
  if (completion_tokens > 0) {
    // Includes the waits' own cost (a futex wake per step), the final events and JSON.
    finish.timings.host_us_per_token = static_cast<double>(thread_cpu_ns() - cpu_at_start) /
                                       1000.0 / static_cast<double>(completion_tokens);
  }
  // A client that left before the last event cancelled the request, however far it got.
  const bool delivered = sink(finish);

  auto& mx = impl_->metrics;
  mx.inc("arclight_requests_total", 1,
         {{"finish_reason", delivered ? finish.finish_reason : std::string("cancelled")}});
  mx.inc("arclight_prompt_tokens_total", static_cast<double>(p->prompt_tokens));
  mx.inc("arclight_generation_tokens_total", static_cast<double>(completion_tokens));
  mx.inc("arclight_prefix_cache_queries_total", static_cast<double>(p->prompt_tokens));
  mx.inc("arclight_prefix_cache_hits_total", static_cast<double>(t.cached_tokens));
  mx.inc("arclight_spec_draft_tokens_total", static_cast<double>(t.draft_tokens));
  mx.inc("arclight_spec_accepted_tokens_total", static_cast<double>(t.accepted_tokens));
  if (finish.timings.ttft_ms > 0)
    mx.observe("arclight_time_to_first_token_seconds", finish.timings.ttft_ms / 1000.0);
  mx.observe("arclight_e2e_request_latency_seconds", finish.timings.total_ms / 1000.0);
  mx.observe("arclight_request_queue_time_seconds", finish.timings.queue_ms / 1000.0);
  impl_->emit("request", {{"finish_reason", finish.finish_reason},
                          {"prompt_tokens", p->prompt_tokens},
                          {"completion_tokens", completion_tokens},
                          {"cached_tokens", t.cached_tokens},
                          {"draft_tokens", t.draft_tokens},
                          {"accepted_tokens", t.accepted_tokens},
                          {"queue_ms", finish.timings.queue_ms},
                          {"ttft_ms", finish.timings.ttft_ms},
                          {"prefill_tokens_per_s", finish.timings.prefill_tokens_per_s},
                          {"decode_tokens_per_s", finish.timings.decode_tokens_per_s},
                          {"total_ms", finish.timings.total_ms},
                          {"host_us_per_token", finish.timings.host_us_per_token}});
  return ok_status();
}

}  // namespace arc
