#include "arc/bench/prompts.h"

#include <fstream>
#include <sstream>

#include "bench_resources.h"

namespace arc::bench {
namespace {

using json = nlohmann::json;

// A prompt-set file is a few KB; anything much bigger is the wrong file.
constexpr size_t kMaxPromptFileBytes = 16 << 20;

}  // namespace

Result<PromptSet> parse_prompt_set(std::string_view json_text, std::string_view origin) {
  std::string where(origin);
  auto j = json::parse(json_text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) {
    return invalid_argument(where + " is not a JSON object; a prompt set looks like " +
                            "{\"name\": ..., \"prompts\": [{\"prompt\": \"...\"}]}");
  }
  PromptSet set;
  if (j.contains("name") && j["name"].is_string()) set.name = j["name"].get<std::string>();
  if (j.contains("description") && j["description"].is_string()) {
    set.description = j["description"].get<std::string>();
  }
  std::string system;
  if (j.contains("system")) {
    if (!j["system"].is_string()) return invalid_argument(where + ": 'system' must be a string");
    system = j["system"].get<std::string>();
  }
  if (!j.contains("prompts") || !j["prompts"].is_array() || j["prompts"].empty()) {
    return invalid_argument(where + ": 'prompts' must be a non-empty array");
  }
  size_t i = 0;
  for (const auto& p : j["prompts"]) {
    std::string item = where + ": prompts[" + std::to_string(i++) + "]";
    json messages = json::array();
    if (!system.empty()) messages.push_back({{"role", "system"}, {"content", system}});
    if (p.is_string()) {
      messages.push_back({{"role", "user"}, {"content", p}});
    } else if (p.is_object() && p.contains("prompt") && p["prompt"].is_string()) {
      messages.push_back({{"role", "user"}, {"content", p["prompt"]}});
    } else if (p.is_object() && p.contains("messages") && p["messages"].is_array() &&
               !p["messages"].empty()) {
      for (const auto& m : p["messages"]) {
        if (!m.is_object() || !m.contains("role") || !m["role"].is_string() ||
            !m.contains("content")) {
          return invalid_argument(item + ": every message needs a 'role' and a 'content'");
        }
        messages.push_back(m);
      }
    } else {
      return invalid_argument(item + " needs a 'prompt' string or a 'messages' array");
    }
    set.conversations.push_back(std::move(messages));
  }
  return set;
}

std::vector<std::string> builtin_prompt_set_names() {
  return {"prose", "code", "json"};
}

Result<PromptSet> load_prompt_set(const std::string& name_or_path) {
  for (const auto& r : resources::bench_resources()) {
    if (name_or_path == r.name && name_or_path != "long_context") {
      auto set = parse_prompt_set(r.text, "built-in prompt set '" + name_or_path + "'");
      if (set.ok() && set->name.empty()) set->name = name_or_path;
      return set;
    }
  }
  bool looks_like_path =
      name_or_path.find('/') != std::string::npos ||
      (name_or_path.size() > 5 && name_or_path.compare(name_or_path.size() - 5, 5, ".json") == 0);
  if (!looks_like_path) {
    return not_found("no prompt set '" + name_or_path +
                     "'; the built-in sets are prose, code and json, or give a path to a " +
                     "prompt-set .json file");
  }
  std::ifstream in(name_or_path, std::ios::binary);
  if (!in) return not_found("cannot open the prompt-set file '" + name_or_path + "'");
  std::ostringstream ss;
  ss << in.rdbuf();
  std::string text = ss.str();
  if (text.size() > kMaxPromptFileBytes) {
    return invalid_argument("'" + name_or_path + "' is over 16 MB; is it really a prompt set?");
  }
  auto set = parse_prompt_set(text, "'" + name_or_path + "'");
  if (set.ok() && set->name.empty()) {
    auto slash = name_or_path.find_last_of('/');
    std::string base = name_or_path.substr(slash == std::string::npos ? 0 : slash + 1);
    if (base.size() > 5 && base.compare(base.size() - 5, 5, ".json") == 0)
      base.resize(base.size() - 5);
    set->name = base;
  }
  return set;
}

Result<LongContextText> builtin_long_context() {
  for (const auto& r : resources::bench_resources()) {
    if (r.name != std::string_view("long_context")) continue;
    auto j = json::parse(r.text, nullptr, false);
    LongContextText t;
    if (j.is_object() && j.contains("paragraphs") && j["paragraphs"].is_array()) {
      for (const auto& p : j["paragraphs"]) {
        if (p.is_string() && !p.get_ref<const std::string&>().empty()) {
          t.paragraphs.push_back(p.get<std::string>());
        }
      }
    }
    if (j.is_object() && j.contains("question") && j["question"].is_string()) {
      t.question = j["question"].get<std::string>();
    }
    if (t.paragraphs.empty() || t.question.empty()) {
      return internal_error("the built-in long_context.json lacks paragraphs or a question");
    }
    return t;
  }
  return internal_error("the long-context text is not compiled in");
}

std::string build_long_prompt(const LongContextText& text, size_t target_chars,
                              std::string_view nonce) {
  std::string out = "Reference document ";
  out.append(nonce);
  out += ". Read all of it before answering the question at the end.\n\n";
  size_t section = 1;
  size_t budget =
      target_chars > text.question.size() + 2 ? target_chars - text.question.size() - 2 : 0;
  while (out.size() < budget && !text.paragraphs.empty()) {
    const std::string& p = text.paragraphs[(section - 1) % text.paragraphs.size()];
    out += "Section " + std::to_string(section) + ". " + p + "\n\n";
    ++section;
  }
  out += text.question;
  return out;
}

}  // namespace arc::bench
