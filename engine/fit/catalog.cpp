// Catalog loading and validation (schema: resources/catalog/README.md), built-in catalog paths,
// and the conversion of a catalog build into the calculator's ModelSpec.
#include "arc/catalog.h"
#include "arc/ascii.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace arc::catalog {

using nlohmann::json;

double Figure::bytes() const {
  return unit == "GiB" ? value * fit::kGiB : value * fit::kGB;
}

const Build* Model::find_build(std::string_view build_name) const {
  for (const Build& b : builds) {
    if (b.name == build_name) return &b;
  }
  return nullptr;
}

namespace {

// Reads one object's fields with checks; every error names `where` and the field.
class Fields {
 public:
  Fields(const json& j, std::string where) : j_(j), where_(std::move(where)) {}

  Status object_check(const std::set<std::string>& allowed) const {
    if (!j_.is_object()) return invalid_argument(where_ + ": must be a JSON object");
    for (auto it = j_.begin(); it != j_.end(); ++it) {
      if (!allowed.count(it.key())) {
        return invalid_argument(fmt::format("{}.{}: unknown field (typo?)", where_, it.key()));
      }
    }
    return ok_status();
  }

  Status str(const char* key, bool required, std::string* out) const {
    auto it = j_.find(key);
    if (it == j_.end()) return required ? missing(key) : ok_status();
    if (!it->is_string() || (required && it->get<std::string>().empty())) {
      return bad(key, "must be a non-empty string");
    }
    *out = it->get<std::string>();
    return ok_status();
  }

  Status num(const char* key, bool required, double min, bool min_exclusive, double max,
             double* out) const {
    auto it = j_.find(key);
    if (it == j_.end()) return required ? missing(key) : ok_status();
    if (!it->is_number()) return bad(key, "must be a number");
    const double v = it->get<double>();
    if (!std::isfinite(v) || v < min || (min_exclusive && v == min) || v > max) {
      return bad(key, fmt::format("must be {} {} and <= {}, got {}",
                                  min_exclusive ? ">" : ">=", min, max, v));
    }
    *out = v;
    return ok_status();
  }

  Status integer(const char* key, bool required, int64_t min, int64_t* out) const {
    auto it = j_.find(key);
    if (it == j_.end()) return required ? missing(key) : ok_status();
    if (!it->is_number_integer()) return bad(key, "must be an integer");
    const int64_t v = it->get<int64_t>();
    if (v < min) return bad(key, fmt::format("must be >= {}, got {}", min, v));
    *out = v;
    return ok_status();
  }

  Status strings(const char* key, bool required, std::vector<std::string>* out) const {
    auto it = j_.find(key);
    if (it == j_.end()) return required ? missing(key) : ok_status();
    if (!it->is_array() || (required && it->empty()))
      return bad(key, "must be a non-empty array of strings");
    for (const json& s : *it) {
      if (!s.is_string() || s.get<std::string>().empty())
        return bad(key, "must hold non-empty strings");
      out->push_back(s.get<std::string>());
    }
    return ok_status();
  }

  const json* find(const char* key) const {
    auto it = j_.find(key);
    return it == j_.end() ? nullptr : &*it;
  }
  const std::string& where() const { return where_; }
  Status bad(const char* key, const std::string& what) const {
    return invalid_argument(fmt::format("{}.{}: {}", where_, key, what));
  }

 private:
  Status missing(const char* key) const {
    return invalid_argument(fmt::format("{}.{}: missing (required)", where_, key));
  }
  const json& j_;
  std::string where_;
};

constexpr double kBig = 1e9;  // generous upper bound for counts in billions / tokens / bytes

Result<Figure> parse_figure(const json& j, const std::string& where) {
  Fields f(j, where);
  ARC_RETURN_IF_ERROR(f.object_check({"value", "unit", "source"}));
  Figure fig;
  ARC_RETURN_IF_ERROR(f.num("value", true, 0, true, 1e6, &fig.value));
  ARC_RETURN_IF_ERROR(f.str("unit", true, &fig.unit));
  if (fig.unit != "GB" && fig.unit != "GiB") return f.bad("unit", "must be \"GB\" or \"GiB\"");
  ARC_RETURN_IF_ERROR(f.str("source", true, &fig.source));
  return fig;
}

Result<Speed> parse_speed(const json& j, const std::string& where) {
  Fields f(j, where);
  ARC_RETURN_IF_ERROR(f.object_check({"boxes", "tok_s", "what", "engine", "source"}));
  Speed s;
  int64_t boxes = 0;
  ARC_RETURN_IF_ERROR(f.integer("boxes", true, 1, &boxes));
  if (boxes > 64) return f.bad("boxes", "must be <= 64");
  s.boxes = static_cast<int>(boxes);
  ARC_RETURN_IF_ERROR(f.num("tok_s", true, 0, true, 1e6, &s.tok_s));
  ARC_RETURN_IF_ERROR(f.str("what", true, &s.what));
  ARC_RETURN_IF_ERROR(f.str("engine", false, &s.engine));
  ARC_RETURN_IF_ERROR(f.str("source", true, &s.source));
  return s;
}

Result<Quality> parse_quality(const json& j, const std::string& where) {
  Fields f(j, where);
  ARC_RETURN_IF_ERROR(f.object_check({"what", "against", "kl", "top1_percent", "source"}));
  Quality q;
  ARC_RETURN_IF_ERROR(f.str("what", true, &q.what));
  ARC_RETURN_IF_ERROR(f.str("against", false, &q.against));
  if (f.find("kl") != nullptr) ARC_RETURN_IF_ERROR(f.num("kl", true, 0, false, 100, &q.kl));
  if (f.find("top1_percent") != nullptr) {
    ARC_RETURN_IF_ERROR(f.num("top1_percent", true, 0, false, 100, &q.top1_percent));
  }
  ARC_RETURN_IF_ERROR(f.str("source", true, &q.source));
  return q;
}

Result<fit::Architecture> parse_arch(const json& j, const std::string& where) {
  Fields f(j, where);
  ARC_RETURN_IF_ERROR(f.object_check(
      {"layers", "hidden", "vocab", "max_context", "attention", "kv_heads", "head_dim",
       "key_length", "value_length", "kv_lora_rank", "rope_dim", "sliding_window", "sliding_layers",
       "linear_layers", "linear_state_bytes_per_layer", "notes"}));
  fit::Architecture a;
  ARC_RETURN_IF_ERROR(f.integer("layers", false, 1, &a.layers));
  ARC_RETURN_IF_ERROR(f.integer("hidden", false, 1, &a.hidden));
  ARC_RETURN_IF_ERROR(f.integer("vocab", false, 1, &a.vocab));
  ARC_RETURN_IF_ERROR(f.integer("max_context", false, 1, &a.max_context));
  std::string attention;
  ARC_RETURN_IF_ERROR(f.str("attention", true, &attention));
  if (attention == "gqa") {
    a.attention = fit::AttentionKind::kGqa;
  } else if (attention == "mla") {
    a.attention = fit::AttentionKind::kMla;
  } else if (attention == "unknown") {
    a.attention = fit::AttentionKind::kUnknown;
  } else {
    return f.bad("attention", "must be \"gqa\", \"mla\" or \"unknown\", got \"" + attention + "\"");
  }
  int64_t head_dim = 0;
  ARC_RETURN_IF_ERROR(f.integer("head_dim", false, 1, &head_dim));
  a.key_length = a.value_length = head_dim;
  ARC_RETURN_IF_ERROR(f.integer("kv_heads", false, 1, &a.kv_heads));
  ARC_RETURN_IF_ERROR(f.integer("key_length", false, 1, &a.key_length));
  ARC_RETURN_IF_ERROR(f.integer("value_length", false, 1, &a.value_length));
  ARC_RETURN_IF_ERROR(f.integer("kv_lora_rank", false, 1, &a.kv_lora_rank));
  ARC_RETURN_IF_ERROR(f.integer("rope_dim", false, 0, &a.rope_dim));
  ARC_RETURN_IF_ERROR(f.integer("sliding_window", false, 1, &a.sliding_window));
  ARC_RETURN_IF_ERROR(f.integer("sliding_layers", false, 0, &a.sliding_layers));
  ARC_RETURN_IF_ERROR(f.integer("linear_layers", false, 0, &a.linear_layers));
  int64_t state = 0;
  ARC_RETURN_IF_ERROR(f.integer("linear_state_bytes_per_layer", false, 0, &state));
  a.linear_state_bytes_per_layer = static_cast<uint64_t>(state);
  if (a.attention == fit::AttentionKind::kGqa) {
    if (a.layers == 0) return f.bad("layers", "required for gqa attention");
    if (a.kv_heads == 0) return f.bad("kv_heads", "required for gqa attention");
    if (a.key_length == 0 || a.value_length == 0) {
      return f.bad("head_dim", "required for gqa attention (or key_length and value_length)");
    }
  }
  if (a.attention == fit::AttentionKind::kMla) {
    if (a.layers == 0) return f.bad("layers", "required for mla attention");
    if (a.kv_lora_rank == 0) return f.bad("kv_lora_rank", "required for mla attention");
  }
  if (a.sliding_layers > 0 && a.sliding_window == 0) {
    return f.bad("sliding_window", "required when sliding_layers > 0");
  }
  if (a.sliding_layers + a.linear_layers > a.layers) {
    return f.bad("sliding_layers", "sliding_layers + linear_layers exceed layers");
  }
  if (a.linear_layers > 0 && a.linear_state_bytes_per_layer == 0) {
    return f.bad("linear_state_bytes_per_layer", "required when linear_layers > 0");
  }
  return a;
}

Result<Build> parse_build(const json& j, const std::string& where, const Model& m) {
  Fields f(j, where);
  ARC_RETURN_IF_ERROR(f.object_check(
      {"name", "format", "bits_per_weight", "params_16bit_b", "active_params_16bit_b", "weights",
       "ngram_table", "weights_include_ngram", "speeds", "quality", "sources", "notes"}));
  Build b;
  ARC_RETURN_IF_ERROR(f.str("name", true, &b.name));
  ARC_RETURN_IF_ERROR(f.str("format", true, &b.format));
  ARC_RETURN_IF_ERROR(f.num("bits_per_weight", false, 0, true, 32, &b.bits_per_weight));
  ARC_RETURN_IF_ERROR(
      f.num("params_16bit_b", false, 0, false, m.total_params_b, &b.params_16bit_b));
  ARC_RETURN_IF_ERROR(f.num("active_params_16bit_b", false, 0, false,
                            std::min(m.active_params_b, b.params_16bit_b),
                            &b.active_params_16bit_b));
  if (const json* w = f.find("weights")) {
    ARC_ASSIGN_OR_RETURN(b.weights, parse_figure(*w, where + ".weights"));
  }
  if (const json* w = f.find("ngram_table")) {
    ARC_ASSIGN_OR_RETURN(b.ngram_table, parse_figure(*w, where + ".ngram_table"));
  }
  if (const json* w = f.find("weights_include_ngram")) {
    if (!w->is_boolean()) return f.bad("weights_include_ngram", "must be true or false");
    b.weights_include_ngram = w->get<bool>();
  }
  if (b.bits_per_weight == 0 && !b.weights) {
    return f.bad("bits_per_weight",
                 "missing: a build needs bits_per_weight or a published weights size");
  }
  if (const json* s = f.find("speeds")) {
    if (!s->is_array()) return f.bad("speeds", "must be an array");
    for (size_t i = 0; i < s->size(); ++i) {
      ARC_ASSIGN_OR_RETURN(Speed sp, parse_speed((*s)[i], fmt::format("{}.speeds[{}]", where, i)));
      b.speeds.push_back(std::move(sp));
    }
  }
  if (const json* q = f.find("quality")) {
    if (!q->is_array()) return f.bad("quality", "must be an array");
    for (size_t i = 0; i < q->size(); ++i) {
      ARC_ASSIGN_OR_RETURN(Quality qa,
                           parse_quality((*q)[i], fmt::format("{}.quality[{}]", where, i)));
      b.quality.push_back(std::move(qa));
    }
  }
  ARC_RETURN_IF_ERROR(f.strings("sources", true, &b.sources));
  ARC_RETURN_IF_ERROR(f.str("notes", false, &b.notes));
  return b;
}

Result<Model> parse_model(const json& j, size_t index) {
  std::string where = fmt::format("models[{}]", index);
  if (j.is_object() && j.contains("id") && j["id"].is_string()) {
    where += " (" + j["id"].get<std::string>() + ")";
  }
  Fields f(j, where);
  ARC_RETURN_IF_ERROR(
      f.object_check({"id", "name", "origin", "family", "total_params_b", "active_params_b",
                      "ngram_params_b", "arch", "license", "sources", "notes", "builds"}));
  Model m;
  ARC_RETURN_IF_ERROR(f.str("id", true, &m.id));
  for (char c : m.id) {
    if (!(std::islower(static_cast<unsigned char>(c)) ||
          std::isdigit(static_cast<unsigned char>(c)) || c == '-' || c == '.' || c == '_')) {
      return f.bad("id", "may hold only a-z, 0-9, '-', '.', '_'");
    }
  }
  ARC_RETURN_IF_ERROR(f.str("name", true, &m.name));
  ARC_RETURN_IF_ERROR(f.str("origin", true, &m.origin));
  if (m.origin != "seed" && m.origin != "config")
    return f.bad("origin", "must be \"seed\" or \"config\"");
  ARC_RETURN_IF_ERROR(f.str("family", false, &m.family));
  ARC_RETURN_IF_ERROR(f.num("total_params_b", true, 0, true, 1e5, &m.total_params_b));
  ARC_RETURN_IF_ERROR(
      f.num("active_params_b", false, 0, false, m.total_params_b, &m.active_params_b));
  ARC_RETURN_IF_ERROR(
      f.num("ngram_params_b", false, 0, false, m.total_params_b, &m.ngram_params_b));
  const json* arch = f.find("arch");
  if (!arch) return invalid_argument(where + ".arch: missing (required)");
  ARC_ASSIGN_OR_RETURN(m.arch, parse_arch(*arch, where + ".arch"));
  ARC_RETURN_IF_ERROR(f.str("license", false, &m.license));
  ARC_RETURN_IF_ERROR(f.strings("sources", true, &m.sources));
  ARC_RETURN_IF_ERROR(f.str("notes", false, &m.notes));
  const json* builds = f.find("builds");
  if (!builds || !builds->is_array() || builds->empty()) {
    return invalid_argument(where + ".builds: must be a non-empty array");
  }
  std::set<std::string> names;
  for (size_t i = 0; i < builds->size(); ++i) {
    std::string bw = fmt::format("{}.builds[{}]", where, i);
    ARC_ASSIGN_OR_RETURN(Build b, parse_build((*builds)[i], bw, m));
    if (!names.insert(b.name).second) {
      return invalid_argument(bw + ".name: duplicate build name '" + b.name + "'");
    }
    m.builds.push_back(std::move(b));
  }
  return m;
}

}  // namespace

const Model* Catalog::find(std::string_view id) const {
  for (const Model& m : models) {
    if (m.id == id) return &m;
  }
  const std::string want = ascii_lower(id);
  for (const Model& m : models) {
    if (ascii_lower(m.id) == want || ascii_lower(m.name) == want) return &m;
  }
  return nullptr;
}

Result<Catalog> parse_catalog(std::string_view json_text, std::string_view display_name) {
  const std::string name(display_name);
  json root;
  try {
    root = json::parse(json_text.begin(), json_text.end());
  } catch (const json::parse_error& e) {
    return invalid_argument(
        fmt::format("{}: not valid JSON (at byte {}): {}", name, e.byte, e.what()));
  }
  Fields f(root, name);
  // "seeds": the seed documents' titles by file name, for the app to cite them by title.
  ARC_RETURN_IF_ERROR(f.object_check({"schema_version", "description", "seeds", "models"}));
  Catalog c;
  int64_t version = 0;
  ARC_RETURN_IF_ERROR(f.integer("schema_version", true, 1, &version));
  if (version != 1) {
    return invalid_argument(
        fmt::format("{}.schema_version: this build reads version 1, the file "
                    "is version {}; update Arclight",
                    name, version));
  }
  c.schema_version = static_cast<int>(version);
  if (const json* seeds = f.find("seeds")) {
    bool ok = seeds->is_object();
    for (auto it = seeds->begin(); ok && it != seeds->end(); ++it) ok = it->is_string();
    if (!ok) return invalid_argument(name + ".seeds: must map seed file names to their titles");
  }
  const json* models = f.find("models");
  if (!models || !models->is_array()) return invalid_argument(name + ".models: must be an array");
  std::set<std::string> ids;
  for (size_t i = 0; i < models->size(); ++i) {
    auto m = parse_model((*models)[i], i);
    if (!m.ok()) return m.status().with_context(name);
    if (!ids.insert(m->id).second) {
      return invalid_argument(fmt::format("{}: models[{}].id: duplicate id '{}'", name, i, m->id));
    }
    c.models.push_back(std::move(m).value());
  }
  return c;
}

Result<Catalog> load_catalog(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return not_found("cannot open model catalog '" + path + "'");
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) return io_error("cannot read model catalog '" + path + "'");
  return parse_catalog(ss.str(), path);
}

std::vector<std::string> builtin_catalog_candidates(std::string_view exe_dir) {
  std::vector<std::string> out;
  if (!exe_dir.empty()) {
    out.push_back(
        (std::filesystem::path(exe_dir) / ".." / "share" / "arclight" / "catalog" / "models.json")
            .lexically_normal()
            .string());
  }
#ifdef ARC_CATALOG_INSTALL_PATH
  out.emplace_back(ARC_CATALOG_INSTALL_PATH);
#endif
#ifdef ARC_CATALOG_SOURCE_PATH
  out.emplace_back(ARC_CATALOG_SOURCE_PATH);
#endif
  return out;
}

Result<std::string> find_builtin_catalog(std::string_view exe_dir) {
  std::string tried;
  for (const std::string& p : builtin_catalog_candidates(exe_dir)) {
    std::error_code ec;
    if (std::filesystem::is_regular_file(p, ec)) return p;
    tried += (tried.empty() ? "" : ", ") + p;
  }
  return not_found("the built-in model catalog was not found (looked in: " + tried +
                   "); pass a catalog file explicitly");
}

Result<fit::ModelSpec> model_spec(const Model& m, const Build& b) {
  fit::ModelSpec s;
  s.name = m.name + " / " + b.name;
  s.arch = m.arch;
  const double quantized_b = m.total_params_b - m.ngram_params_b - b.params_16bit_b;
  if (quantized_b < 0) {
    return invalid_argument(
        fmt::format("{}: params_16bit_b + ngram_params_b exceed total_params_b", s.name));
  }
  double weights = 0;
  double bits = b.bits_per_weight;
  if (b.weights) {
    weights = b.weights->bytes();
    s.weights_basis =
        fmt::format("published {} {} ({})", b.weights->value, b.weights->unit, b.weights->source);
    if (bits == 0) {
      const double q_bytes = weights - b.params_16bit_b * 2e9;
      if (quantized_b <= 0 || q_bytes <= 0) {
        return invalid_argument(s.name + ": cannot derive bits per weight from the published size");
      }
      bits = q_bytes * 8.0 / (quantized_b * 1e9);
      s.notes.push_back(
          fmt::format("bits per weight {:.2f}, derived from the published size", bits));
    }
  } else {
    weights = quantized_b * 1e9 * bits / 8.0 + b.params_16bit_b * 2e9;
    s.weights_basis = fmt::format("{:g}B x {:g} bits / 8 + {:g}B at 16 bits", quantized_b, bits,
                                  b.params_16bit_b);
  }
  s.weights_bytes = static_cast<uint64_t>(std::llround(weights));
  if (b.ngram_table) {
    s.ngram_table_bytes = static_cast<uint64_t>(std::llround(b.ngram_table->bytes()));
  } else if (m.ngram_params_b > 0 && b.weights_include_ngram) {
    s.notes.push_back(
        "the published size includes the n-gram tables and their share is not "
        "published; they cannot be moved to disk in this estimate");
  } else if (m.ngram_params_b > 0) {
    s.ngram_table_bytes = static_cast<uint64_t>(std::llround(m.ngram_params_b * 1e9 * bits / 8.0));
    s.notes.push_back(fmt::format("n-gram table size estimated as {:g}B x {:.2f} bits / 8",
                                  m.ngram_params_b, bits));
  }
  const double active = (m.active_params_b - b.active_params_16bit_b) * 1e9 * bits / 8.0 +
                        b.active_params_16bit_b * 2e9;
  s.active_bytes_per_token = static_cast<uint64_t>(std::llround(active));
  if (!m.notes.empty()) s.notes.push_back(m.notes);
  if (!b.notes.empty()) s.notes.push_back(b.notes);
  return s;
}

}  // namespace arc::catalog
