// Pairing a vision model with its projector (see mmproj_pairing.h).
#include "sched/mmproj_pairing.h"

#include <algorithm>
#include <cctype>
#include <filesystem>

#include "arc/ascii.h"
#include "arc/gguf.h"
#include "arc/log.h"
#include "arc/vision_encoder.h"

namespace arc {

namespace {

bool is_quant_word(const std::string& w) {
  // F16, BF16, F32, Q8_0, Q4_K_M, IQ4_XS, MXFP4, UD-Q4_K_XL...: a type, not the model's name.
  static const char* const kWords[] = {"f16", "bf16", "f32", "mxfp4", "fp8"};
  for (const char* k : kWords)
    if (w == k) return true;
  if (w.size() >= 2 && (w[0] == 'q' || (w[0] == 'i' && w.size() > 2 && w[1] == 'q'))) {
    const size_t d = w[0] == 'q' ? 1 : 2;
    return std::isdigit(static_cast<unsigned char>(w[d])) != 0;
  }
  return false;
}

}  // namespace

std::string mmproj_base_name(const std::string& file_name) {
  std::string s = ascii_lower(std::filesystem::path(file_name).filename().string());
  if (s.size() > 5 && s.compare(s.size() - 5, 5, ".gguf") == 0) s.resize(s.size() - 5);
  if (s.rfind("mmproj", 0) == 0) s.erase(0, 6);
  // Words separated by '-', '_' or '.'; quantization and split-part words dropped from the end.
  std::vector<std::string> words;
  std::string cur;
  for (char ch : s) {
    if (ch == '-' || ch == '.' || ch == ' ') {
      if (!cur.empty()) words.push_back(cur);
      cur.clear();
    } else {
      cur += ch;
    }
  }
  if (!cur.empty()) words.push_back(cur);
  auto split_part = [](const std::string& w) {
    return !w.empty() && std::all_of(w.begin(), w.end(), [](char c) {
      return std::isdigit(static_cast<unsigned char>(c)) != 0;
    });
  };
  while (!words.empty()) {
    const std::string& w = words.back();
    if (is_quant_word(w) || split_part(w) || w == "of" || w == "ud") {
      words.pop_back();
    } else {
      break;
    }
  }
  std::string out;
  for (const std::string& w : words) out += (out.empty() ? "" : "-") + w;
  return out;
}

std::vector<MmprojCandidate> mmproj_candidates(const std::string& model_path,
                                               const ModelConfig& cfg) {
  namespace fs = std::filesystem;
  std::vector<MmprojCandidate> out;
  std::error_code ec;
  const fs::path model(model_path);
  const fs::path dir = model.has_parent_path() ? model.parent_path() : fs::path(".");
  const std::string base = mmproj_base_name(model.filename().string());
  for (const auto& ent : fs::directory_iterator(dir, ec)) {
    const std::string name = ent.path().filename().string();
    const std::string lower = ascii_lower(name);
    if (lower.size() <= 5 || lower.compare(lower.size() - 5, 5, ".gguf") != 0 ||
        !ent.is_regular_file(ec) || ent.path() == model) {
      continue;
    }
    const bool named = lower.rfind("mmproj", 0) == 0;
    auto file = gguf::File::open(ent.path().string());
    if (!file.ok()) {
      if (named) out.push_back({ent.path().string(), false, file.status().message(), 0});
      continue;
    }
    if (!named && file->architecture() != "clip") continue;
    MmprojCandidate c;
    c.path = ent.path().string();
    auto vc = vision::vision_config_from_gguf(*file);
    if (!vc.ok()) {
      c.why_not = vc.status().message();
    } else if (vc->proj_dim != cfg.n_embd || vc->n_deepstack() != cfg.n_deepstack) {
      c.why_not = "it outputs " + std::to_string(vc->proj_dim) + " values with " +
                  std::to_string(vc->n_deepstack()) + " deepstack layers; the model takes " +
                  std::to_string(cfg.n_embd) + " with " + std::to_string(cfg.n_deepstack);
    } else {
      c.fits = true;
    }
    const std::string theirs = mmproj_base_name(name);
    size_t k = 0;
    while (k < base.size() && k < theirs.size() && base[k] == theirs[k]) ++k;
    c.name_match = k;
    out.push_back(std::move(c));
  }
  std::sort(out.begin(), out.end(), [](const MmprojCandidate& a, const MmprojCandidate& b) {
    if (a.fits != b.fits) return a.fits;
    if (a.name_match != b.name_match) return a.name_match > b.name_match;
    return a.path < b.path;
  });
  return out;
}

std::string find_paired_mmproj(const std::string& model_path, const ModelConfig& cfg) {
  const std::vector<MmprojCandidate> all = mmproj_candidates(model_path, cfg);
  auto log = logger("engine");
  for (const MmprojCandidate& c : all) {
    if (!c.fits)
      log->info("vision projector {} does not fit {}: {}", c.path, model_path, c.why_not);
  }
  if (all.empty() || !all.front().fits) return "";
  if (all.size() > 1 && all[1].fits && all[1].name_match == all.front().name_match) {
    log->warn("several vision projectors fit {} equally well; using {} (choose with --mmproj)",
              model_path, all.front().path);
  }
  return all.front().path;
}

}  // namespace arc
