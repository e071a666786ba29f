// The model catalog (resources/catalog/models.json): models and their builds (quantizations) with
// the numbers the fit calculator needs and the published figures, each naming its source.
// The schema is documented in resources/catalog/README.md and checked on load; errors name the
// entry and the field ("models[3] (glm-5.3-flash).builds[1].bits_per_weight: must be > 0").
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "arc/fit.h"
#include "arc/status.h"

namespace arc::catalog {

// A published size with its unit and where it comes from.
struct Figure {
  double value = 0;
  std::string unit;    // "GB" (1e9 bytes) or "GiB" (2^30 bytes)
  std::string source;  // seed file name + a short quote, or a repository path
  double bytes() const;
};

// A published speed measurement.
struct Speed {
  int boxes = 0;
  double tok_s = 0;
  std::string what;    // "prose, one stream", "code", "aggregate at 4 streams", ...
  std::string engine;  // "TensorFold", "vLLM", ...
  std::string source;
};

// A published check of how close a build stays to full precision (the seeds' quality table).
struct Quality {
  std::string what;          // the check as published: "KL 0.082 against BF16, 91.15% top-1"
  std::string against;       // the reference: "BF16", "Z.ai's FP8" ("" when none is named)
  double kl = -1;            // mean KL divergence from the reference; -1 when not published
  double top1_percent = -1;  // top-1 agreement with the reference, percent; -1 when not published
  std::string source;        // where it is published (a seed file and its words)
};

struct Build {
  std::string name;    // "exl3-4bpw", "nvfp4", ...
  std::string format;  // "EXL3", "NVFP4", "GGUF Q4_K_M", "FP8", ...
  // Average bits per weight of the quantized parameters; 0 when only `weights` is published
  // (the effective figure is then derived from it).
  double bits_per_weight = 0;
  double params_16bit_b = 0;           // parameters kept at 16 bits (billions), of the total
  double active_params_16bit_b = 0;    // of those, read on every token (attention, shared parts)
  std::optional<Figure> weights;       // published in-memory size, n-gram tables excluded
  std::optional<Figure> ngram_table;   // published n-gram / Engram table size
  bool weights_include_ngram = false;  // `weights` counts the n-gram tables (split unpublished)
  std::vector<Speed> speeds;
  std::vector<Quality> quality;
  std::vector<std::string> sources;
  std::string notes;
};

struct Model {
  std::string id;      // "glm-5.3-flash"
  std::string name;    // "GLM-5.3-Flash"
  std::string origin;  // "seed" (figures from ../shared/seeds) or "config" (published config)
  std::string family;  // llama.cpp architecture when the engine runs it ("qwen3moe"), else ""
  double total_params_b = 0;   // billions, n-gram tables included
  double active_params_b = 0;  // billions read per decoded token (0: not published)
  double ngram_params_b = 0;   // billions in n-gram / Engram tables (part of total)
  fit::Architecture arch;
  std::string license;
  std::vector<std::string> sources;
  std::string notes;
  std::vector<Build> builds;

  const Build* find_build(std::string_view build_name) const;
};

struct Catalog {
  int schema_version = 1;
  std::vector<Model> models;
  const Model* find(std::string_view id) const;  // exact id, then case-insensitive id or name
};

// Parses and validates catalog JSON. `display_name` appears in error messages.
Result<Catalog> parse_catalog(std::string_view json_text, std::string_view display_name);
Result<Catalog> load_catalog(const std::string& path);

// Where the built-in catalog may be, in order: installed beside the binary
// (<exe_dir>/../share/arclight/catalog/models.json), the install prefix chosen at build time, then
// the source tree this binary was built from. `exe_dir` is the folder of the running binary
// (the caller finds it; nothing here reads the environment).
std::vector<std::string> builtin_catalog_candidates(std::string_view exe_dir);
// The first candidate that exists, or NOT_FOUND listing where it looked.
Result<std::string> find_builtin_catalog(std::string_view exe_dir);

// The calculator's view of one build: weights from the published size when there is one, else
// (total - n-gram - 16-bit) x bits / 8 + 16-bit x 2; active bytes = (active - active 16-bit) x
// bits / 8 + active 16-bit x 2, with bits the build's (or the effective one derived from the
// published size).
Result<fit::ModelSpec> model_spec(const Model& model, const Build& build);

}  // namespace arc::catalog
