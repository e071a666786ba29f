// The five real vocabularies of ../shared/fixtures/tokenizers, loaded once per test binary.
#pragma once

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "arc/tokenizer.h"

namespace arc::test {

inline const char* const kFixtureNames[] = {"qwen3", "llama3", "deepseek_v3", "gptoss", "llama2"};

// ARC_SHARED_FIXTURES_DIR is <checkout>/../shared/fixtures; a git worktree one folder deeper
// (/work/wt/NAME) has them two levels up instead. ARC_SHARED_FIXTURES overrides both.
inline std::filesystem::path tokenizer_fixture_dir() {
  namespace fs = std::filesystem;
  std::vector<fs::path> candidates;
  if (const char* env = std::getenv("ARC_SHARED_FIXTURES")) candidates.emplace_back(env);
  fs::path configured(ARC_SHARED_FIXTURES_DIR);
  candidates.push_back(configured);
  candidates.push_back(configured.parent_path().parent_path().parent_path() / "shared" /
                       "fixtures");
  for (const fs::path& c : candidates) {
    std::error_code ec;
    if (fs::exists(c / "tokenizers", ec)) return c / "tokenizers";
  }
  return configured / "tokenizers";
}

inline bool have_tokenizer_fixtures() {
  return std::filesystem::exists(tokenizer_fixture_dir() / "qwen3" / "tokenizer.json");
}

inline std::string read_text(const std::filesystem::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::ostringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// Loads each fixture tokenizer on first use and keeps it for the rest of the binary's tests
// (loading gpt-oss's 27 MB tokenizer.json takes a good fraction of a second).
inline const Tokenizer* fixture_tokenizer(const std::string& name) {
  static std::map<std::string, std::unique_ptr<Tokenizer>> cache;
  auto it = cache.find(name);
  if (it != cache.end()) return it->second.get();
  auto r = Tokenizer::from_json_file((tokenizer_fixture_dir() / name / "tokenizer.json").string());
  if (!r.ok()) return nullptr;
  auto* t = new Tokenizer(std::move(r).value());
  cache[name].reset(t);
  return t;
}

inline nlohmann::json fixture_cases(const std::string& name) {
  return nlohmann::json::parse(read_text(tokenizer_fixture_dir() / name / "cases.json"))["cases"];
}

}  // namespace arc::test
