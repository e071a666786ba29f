// arclight-engine tokenize: what ids a model really sees for a text.
#include <cstdio>
#include <string>

#include <nlohmann/json.hpp>

#include "arc/gguf.h"
#include "arc/tokenizer.h"
#include "commands.h"

namespace arc::cli {

namespace {

struct TokenizeArgs {
  std::string model;
  std::string tokenizer_json;
  std::string tokenizer_config;
  std::string text;
  bool json = false;
  bool add_special = false;
  bool no_parse_special = false;
};

Result<Tokenizer> load_tokenizer(const TokenizeArgs& a) {
  if (!a.model.empty()) {
    ARC_ASSIGN_OR_RETURN(auto file, gguf::File::open(a.model));
    auto t = Tokenizer::from_gguf(file);
    if (!t.ok()) return t.status().with_context(a.model);
    return t;
  }
  return Tokenizer::from_json_file(a.tokenizer_json, a.tokenizer_config);
}

int run_tokenize(const TokenizeArgs& a) {
  auto tok = load_tokenizer(a);
  if (!tok.ok()) {
    std::fprintf(stderr, "error: %s\n", tok.status().to_string().c_str());
    return 1;
  }
  EncodeOptions opt = a.add_special ? tok->default_encode_options() : EncodeOptions{};
  opt.parse_special = !a.no_parse_special;
  auto ids = tok->encode(a.text, opt);
  if (!ids.ok()) {
    std::fprintf(stderr, "error: %s\n", ids.status().to_string().c_str());
    return 1;
  }
  if (a.json) {
    nlohmann::json j;
    j["ids"] = *ids;
    nlohmann::json pieces = nlohmann::json::array();
    for (TokenId id : *ids) pieces.push_back(escape_token_text(tok->token_bytes(id)));
    j["pieces"] = pieces;
    j["count"] = ids->size();
    std::printf("%s\n", j.dump().c_str());
    return 0;
  }
  std::printf("%zu tokens\n", ids->size());
  for (TokenId id : *ids) {
    std::string shown = escape_token_text(tok->token_bytes(id));
    std::printf("%8d  \"%s\"%s\n", id, shown.c_str(), tok->is_special(id) ? "  (special)" : "");
  }
  return 0;
}

}  // namespace

void add_tokenize_command(CLI::App& app, CliContext& ctx) {
  auto args = std::make_shared<TokenizeArgs>();
  auto* cmd = app.add_subcommand("tokenize", "Print the token ids and pieces of a text");
  auto* model = cmd->add_option("--model", args->model, "GGUF model file (tokenizer.ggml.*)")
                    ->check(CLI::ExistingFile);
  auto* tj =
      cmd->add_option("--tokenizer-json", args->tokenizer_json,
                      "Hugging Face tokenizer.json (tokenizer_config.json beside it is read too)")
          ->check(CLI::ExistingFile);
  model->excludes(tj);
  cmd->add_option("--tokenizer-config", args->tokenizer_config, "tokenizer_config.json to use")
      ->check(CLI::ExistingFile)
      ->needs(tj);
  cmd->add_flag("--json", args->json, "print {\"ids\": [...], \"pieces\": [...]} instead");
  cmd->add_flag("--add-special", args->add_special,
                "add BOS/EOS as the model's metadata asks (add_bos_token)");
  cmd->add_flag("--no-parse-special", args->no_parse_special,
                "tokenize special-token strings like <|im_end|> as plain text");
  cmd->add_option("text", args->text, "the text to tokenize")->required();
  cmd->callback([args, &ctx, model, tj] {
    if (model->count() == 0 && tj->count() == 0) {
      std::fprintf(stderr, "error: give --model FILE or --tokenizer-json FILE\n");
      ctx.exit_code = 2;
      return;
    }
    ctx.exit_code = run_tokenize(*args);
  });
}

}  // namespace arc::cli
