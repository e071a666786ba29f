// arclight-engine bench-grammar: the cost of structured output per generated token. Random
// constrained walks (each step: the token mask over the whole vocabulary, applied to a logit
// row, then a random allowed token) under a set of schemas, timed per step. The first pass
// starts with empty caches (a new schema); the second repeats the walks with the caches warm
// (the same schema again, as agents send it).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "arc/gguf.h"
#include "arc/tokenizer.h"
#include "commands.h"
#include "grammar/json_schema.h"
#include "grammar/token_mask.h"
#include "grammar/tokenizer_vocab.h"

namespace arc::cli {

namespace {

using nlohmann::ordered_json;

struct BenchGrammarArgs {
  std::string model;
  std::string tokenizer_json;
  std::vector<std::string> schemas;
  int walks = 4;
  int steps = 150;
  int64_t row = 0;  // logit row length (0: the vocabulary size)
  uint64_t seed = 1;
};

// The schemas of the tests: a strict object, bounded strings and arrays, recursion, plain JSON.
const std::vector<std::pair<std::string, std::string>> kBuiltin = {
    {"person (strict)", R"({"type":"object","properties":{
        "name":{"type":"string"},"age":{"type":"integer"},
        "email":{"type":["string","null"]},
        "tags":{"type":"array","items":{"type":"string"},"maxItems":5},
        "role":{"enum":["admin","user","guest"]},
        "address":{"type":"object","properties":{"city":{"type":"string"},"zip":{"type":"string"}},
                   "required":["city","zip"],"additionalProperties":false}},
        "required":["name","age","email","tags","role","address"],"additionalProperties":false})"},
    {"bounded strings", R"({"type":"object","properties":{
        "code":{"type":"string","minLength":2,"maxLength":8},
        "title":{"type":"string","maxLength":64},
        "when":{"type":"string","format":"date-time"}},
        "required":["code","title","when"],"additionalProperties":false})"},
    {"recursive tree", R"({"$defs":{"node":{"type":"object","properties":{
        "value":{"type":"number"},
        "children":{"type":"array","items":{"$ref":"#/$defs/node"}}},
        "required":["value","children"],"additionalProperties":false}},"$ref":"#/$defs/node"})"},
    {"json_object", ""},
};

Result<Tokenizer> load(const BenchGrammarArgs& a) {
  if (!a.model.empty()) {
    ARC_ASSIGN_OR_RETURN(auto file, gguf::File::open(a.model));
    return Tokenizer::from_gguf(file);
  }
  return Tokenizer::from_json_file(a.tokenizer_json);
}

struct Pass {
  std::vector<double> us;  // per step: mask + apply
  std::vector<double> apply_us;
};

double percentile(std::vector<double> v, double q) {
  if (v.empty()) return 0.0;
  std::sort(v.begin(), v.end());
  return v[static_cast<size_t>(q * static_cast<double>(v.size() - 1))];
}

Pass run_walks(grammar::TokenMasker& masker, const BenchGrammarArgs& a, int64_t row_len) {
  using clock = std::chrono::steady_clock;
  Pass p;
  std::mt19937_64 rng(a.seed);
  std::vector<float> logits(static_cast<size_t>(row_len));
  grammar::TokenMask mask;
  const grammar::TokenVocab& vocab = masker.vocab();
  std::vector<int32_t> ok;
  for (int w = 0; w < a.walks; ++w) {
    grammar::Matcher m(masker.grammar());
    for (int step = 0; step < a.steps; ++step) {
      std::fill(logits.begin(), logits.end(), 0.0f);
      const auto t0 = clock::now();
      masker.fill(m, mask);
      const auto t1 = clock::now();
      grammar::apply_mask(mask, vocab.n_vocab(), logits);
      const auto t2 = clock::now();
      p.us.push_back(std::chrono::duration<double, std::micro>(t2 - t0).count());
      p.apply_us.push_back(std::chrono::duration<double, std::micro>(t2 - t1).count());
      ok.clear();
      for (int64_t i = 0; i < vocab.n_vocab(); ++i) {
        if (logits[static_cast<size_t>(i)] == 0.0f) ok.push_back(static_cast<int32_t>(i));
      }
      if (ok.empty()) break;
      const int32_t pick = ok[rng() % ok.size()];
      if (std::find(vocab.stops().begin(), vocab.stops().end(), pick) != vocab.stops().end()) {
        break;
      }
      if (!m.advance(vocab.bytes(pick))) {
        std::fprintf(stderr, "error: the mask allowed a token the matcher refuses\n");
        return p;
      }
    }
  }
  return p;
}

int run_bench_grammar(const BenchGrammarArgs& a) {
  using clock = std::chrono::steady_clock;
  auto tok = load(a);
  if (!tok.ok()) {
    std::fprintf(stderr, "error: %s\n", tok.status().to_string().c_str());
    return 1;
  }
  std::vector<int32_t> stops;
  if (auto e = tok->eos_id()) stops.push_back(*e);
  for (const char* s : {"<|im_end|>", "<|endoftext|>", "<|eot_id|>"}) {
    if (auto id = tok->find_token(s)) stops.push_back(*id);
  }
  const auto t0 = clock::now();
  auto vocab = grammar::vocab_from_tokenizer(*tok, stops);
  const double vocab_ms = std::chrono::duration<double, std::milli>(clock::now() - t0).count();
  const int64_t row_len = a.row > 0 ? a.row : vocab->n_vocab();
  std::printf("vocabulary: %lld tokens (%zu usable), built in %.1f ms; logit row %lld\n",
              static_cast<long long>(vocab->n_vocab()), vocab->sorted().size(), vocab_ms,
              static_cast<long long>(row_len));
  std::vector<std::pair<std::string, std::string>> schemas = kBuiltin;
  for (const std::string& path : a.schemas) {
    std::ifstream f(path);
    std::stringstream ss;
    ss << f.rdbuf();
    schemas.emplace_back(path, ss.str());
  }
  std::printf("%-18s %6s | %-34s | %-34s | %8s\n", "schema", "steps",
              "cold: median / p99 / worst us", "warm: median / p99 / worst us", "contexts");
  for (const auto& [name, text] : schemas) {
    grammar::Grammar g;
    if (text.empty()) {
      g = grammar::json_any_grammar(true);
    } else {
      ordered_json s;
      try {
        s = ordered_json::parse(text);
      } catch (const std::exception& e) {
        std::fprintf(stderr, "error: %s: %s\n", name.c_str(), e.what());
        return 1;
      }
      auto r = grammar::json_schema_grammar(s, name);
      if (!r.ok()) {
        std::fprintf(stderr, "error: %s\n", r.status().message().c_str());
        return 1;
      }
      g = std::move(r).value();
    }
    grammar::TokenMasker masker(std::make_shared<const grammar::Grammar>(std::move(g)), vocab);
    const Pass cold = run_walks(masker, a, row_len);
    const Pass warm = run_walks(masker, a, row_len);
    std::printf("%-18s %6zu | %9.1f / %9.1f / %10.1f | %9.1f / %9.1f / %10.1f | %8zu\n",
                name.c_str(), cold.us.size(), percentile(cold.us, 0.5), percentile(cold.us, 0.99),
                percentile(cold.us, 1.0), percentile(warm.us, 0.5), percentile(warm.us, 0.99),
                percentile(warm.us, 1.0), masker.n_contexts());
    std::printf("%-18s %6s   applying the mask to the row: median %.1f us\n", "", "",
                percentile(warm.apply_us, 0.5));
  }
  return 0;
}

}  // namespace

void add_bench_grammar_command(CLI::App& app, CliContext& ctx) {
  auto args = std::make_shared<BenchGrammarArgs>();
  auto* cmd = app.add_subcommand(
      "bench-grammar", "Time structured-output token masks per generated token (random walks)");
  auto* model = cmd->add_option("--model", args->model, "GGUF model file (its tokenizer)")
                    ->check(CLI::ExistingFile);
  auto* tj =
      cmd->add_option("--tokenizer-json", args->tokenizer_json, "Hugging Face tokenizer.json")
          ->check(CLI::ExistingFile);
  model->excludes(tj);
  cmd->add_option("--schema", args->schemas, "extra JSON Schema files to time")
      ->check(CLI::ExistingFile);
  cmd->add_option("--walks", args->walks, "walks per schema and pass")->check(CLI::Range(1, 1000));
  cmd->add_option("--steps", args->steps, "tokens per walk at most")->check(CLI::Range(1, 100000));
  cmd->add_option("--row", args->row, "logit row length (default: the vocabulary size)");
  cmd->add_option("--seed", args->seed, "random walk seed");
  cmd->callback([args, &ctx, model, tj] {
    if (model->count() == 0 && tj->count() == 0) {
      std::fprintf(stderr, "error: give --model or --tokenizer-json\n");
      ctx.exit_code = 2;
      return;
    }
    ctx.exit_code = run_bench_grammar(*args);
  });
}

}  // namespace arc::cli
