// arclight-engine chat-template: prints exactly the prompt a model is sent for a conversation,
// so a user can see what the template really produces.
#include <cstdio>
#include <fstream>
#include <memory>
#include <sstream>

#include <nlohmann/json.hpp>

#include "arc/chat_template.h"
#include "arc/gguf.h"
#include "commands.h"

namespace arc::cli {
namespace {

using json = nlohmann::ordered_json;

Result<std::string> read_text_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return not_found("cannot open '" + path + "'");
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// JSON given inline or as @file.
Result<json> json_argument(const std::string& flag, const std::string& value) {
  std::string text = value;
  if (!value.empty() && value[0] == '@') {
    auto r = read_text_file(value.substr(1));
    if (!r.ok()) return r.status().with_context(flag);
    text = std::move(*r);
  }
  json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return invalid_argument(flag + ": not valid JSON");
  return j;
}

struct Options {
  std::string model;
  std::string tokenizer_config;
  std::string template_file;
  std::string bos, eos;
  std::string messages;
  std::string tools;
  std::string context;
  bool add_generation_prompt = false;
  std::string enable_thinking;
};

Result<ChatFormatter> load_formatter(const Options& o) {
  if (!o.model.empty() && !o.tokenizer_config.empty()) {
    return invalid_argument("give either --model or --tokenizer-config, not both");
  }
  if (!o.model.empty()) {
    auto file = gguf::File::open(o.model);
    if (!file.ok()) return file.status();
    auto f = ChatFormatter::from_gguf(*file);
    if (o.template_file.empty()) return f;
    // --template replaces the file's template (or supplies one it lacks).
    auto tpl_text = read_text_file(o.template_file);
    if (!tpl_text.ok()) return tpl_text.status();
    auto tpl = ChatTemplate::parse(*tpl_text);
    if (!tpl.ok()) return tpl.status().with_context(o.template_file);
    return ChatFormatter(std::move(*tpl), f.ok() ? f->bos_token() : o.bos,
                         f.ok() ? f->eos_token() : o.eos);
  }
  if (!o.tokenizer_config.empty()) {
    auto text = read_text_file(o.tokenizer_config);
    if (!text.ok()) return text.status();
    json cfg = json::parse(*text, nullptr, false);
    if (cfg.is_discarded()) return invalid_argument(o.tokenizer_config + ": not valid JSON");
    auto f = ChatFormatter::from_tokenizer_config(cfg);
    if (!f.ok()) return f.status().with_context(o.tokenizer_config);
    if (o.template_file.empty()) return f;
    auto tpl_text = read_text_file(o.template_file);
    if (!tpl_text.ok()) return tpl_text.status();
    auto tpl = ChatTemplate::parse(*tpl_text);
    if (!tpl.ok()) return tpl.status().with_context(o.template_file);
    return ChatFormatter(std::move(*tpl), f->bos_token(), f->eos_token());
  }
  if (!o.template_file.empty()) {
    auto tpl_text = read_text_file(o.template_file);
    if (!tpl_text.ok()) return tpl_text.status();
    auto tpl = ChatTemplate::parse(*tpl_text);
    if (!tpl.ok()) return tpl.status().with_context(o.template_file);
    return ChatFormatter(std::move(*tpl), o.bos, o.eos);
  }
  return invalid_argument("give --tokenizer-config FILE, --model FILE or --template FILE");
}

int run(const Options& o) {
  auto fail = [](const Status& s) {
    std::fprintf(stderr, "chat-template: %s\n", s.message().c_str());
    return 1;
  };
  auto formatter = load_formatter(o);
  if (!formatter.ok()) return fail(formatter.status());
  json ctx;
  if (!o.context.empty()) {
    auto c = json_argument("--context", o.context);
    if (!c.ok()) return fail(c.status());
    ctx = std::move(*c);
  } else {
    if (o.messages.empty()) return fail(invalid_argument("--messages is required"));
    auto m = json_argument("--messages", o.messages);
    if (!m.ok()) return fail(m.status());
    auto messages = chat_messages_from_json(*m);
    if (!messages.ok()) return fail(messages.status().with_context("--messages"));
    ChatFormatOptions opts;
    opts.add_generation_prompt = o.add_generation_prompt;
    if (!o.tools.empty()) {
      auto t = json_argument("--tools", o.tools);
      if (!t.ok()) return fail(t.status());
      if (!t->is_array()) return fail(invalid_argument("--tools must be a JSON array"));
      opts.tools = std::move(*t);
    }
    if (o.enable_thinking == "true") opts.enable_thinking = true;
    if (o.enable_thinking == "false") opts.enable_thinking = false;
    ctx = formatter->build_context(*messages, opts);
  }
  auto out = formatter->chat_template().render(ctx);
  if (!out.ok()) return fail(out.status());
  std::fwrite(out->data(), 1, out->size(), stdout);  // exactly the prompt: no added newline
  std::fflush(stdout);
  return 0;
}

}  // namespace

void add_chat_template_command(CLI::App& app, CliContext& ctx) {
  auto opts = std::make_shared<Options>();
  auto* cmd = app.add_subcommand("chat-template", "Print the prompt a chat template renders");
  cmd->add_option("--model", opts->model, "GGUF model file (reads tokenizer.chat_template)");
  cmd->add_option("--tokenizer-config", opts->tokenizer_config,
                  "Hugging Face tokenizer_config.json holding chat_template");
  cmd->add_option("--template", opts->template_file,
                  "a chat_template.jinja file (overrides the one in --tokenizer-config)");
  cmd->add_option("--bos-token", opts->bos, "bos_token when only --template is given");
  cmd->add_option("--eos-token", opts->eos, "eos_token when only --template is given");
  cmd->add_option("--messages", opts->messages, "messages as JSON text or @file");
  cmd->add_option("--tools", opts->tools, "tool list (JSON schema) as JSON text or @file");
  cmd->add_option("--context", opts->context,
                  "the full template context as JSON text or @file (instead of --messages)");
  cmd->add_flag("--add-generation-prompt", opts->add_generation_prompt,
                "end with the assistant's turn header");
  cmd->add_option("--enable-thinking", opts->enable_thinking, "true or false")
      ->check(CLI::IsMember({"true", "false"}));
  cmd->callback([opts, &ctx] { ctx.exit_code = run(*opts); });
}

}  // namespace arc::cli
