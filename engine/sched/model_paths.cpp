// Model paths from clients (POST /engine/load, /engine/fit): confined to the configured model
// folders, with errors that say nothing about files outside them.
#include <filesystem>

#include "sched/engine_service_impl.h"

namespace arc {

namespace fs = std::filesystem;

std::string path_for_message(std::string_view path) {
  constexpr size_t kMax = 160;
  if (path.size() <= kMax) return std::string(path);
  size_t cut = kMax;
  while (cut > 0 && (static_cast<unsigned char>(path[cut]) & 0xC0) == 0x80) --cut;
  return std::string(path.substr(0, cut)) + "... (" + std::to_string(path.size()) + " bytes)";
}

namespace {

// `p` (canonical) lies inside `dir` (canonical).
bool inside(const fs::path& p, const fs::path& dir) {
  auto d = dir.begin();
  auto q = p.begin();
  for (; d != dir.end(); ++d, ++q) {
    if (d->empty()) continue;  // a trailing separator
    if (q == p.end() || *q != *d) return false;
  }
  return true;
}

}  // namespace

Result<std::string> resolve_model_path(const std::vector<std::string>& model_dirs,
                                       const std::string& requested) {
  const std::string shown = path_for_message(requested);
  if (model_dirs.empty()) {
    return failed_precondition(
        "this engine serves no model folder: start it with --model-dir DIR to load or fit "
        "model files by path");
  }
  if (requested.empty() || requested.find('\0') != std::string::npos || requested.size() > 4096) {
    return invalid_argument("'model' must be the path of a GGUF file in a model folder");
  }
  const fs::path req(requested);
  for (const auto& part : req) {
    if (part == "..") {
      return invalid_argument("'" + shown +
                              "': model paths may not contain '..'; give a path inside the model "
                              "folders or relative to one");
    }
  }
  std::string folders;
  for (const auto& d : model_dirs) folders += (folders.empty() ? "" : ", ") + d;
  for (const auto& d : model_dirs) {
    std::error_code ec;
    const fs::path dir = fs::canonical(d, ec);
    if (ec) continue;
    const fs::path candidate = req.is_absolute() ? req : fs::path(d) / req;
    // Symlinks resolved: a link inside the folder that points out of it does not count.
    const fs::path real = fs::weakly_canonical(candidate, ec);
    if (ec || !inside(real, dir)) continue;
    if (fs::is_regular_file(real, ec)) return real.string();
  }
  // One answer for a file outside the folders, a missing one and a link out, so that the
  // engine cannot be used to learn which files exist elsewhere.
  return not_found("no model file '" + shown + "' in the model folders (" + folders +
                   "); give a path inside one of them or relative to one");
}

}  // namespace arc
