// JSON (de)serialization of the fit report and its inputs (see arc/fit_json.h).
#include <string>

#include <fmt/format.h>

#include "arc/fit_json.h"

namespace arc::fit {

using nlohmann::json;

namespace {

json budget_json(const BoxBudget& b) {
  return {{"weights", b.weights},
          {"ngram_tables", b.ngram_tables},
          {"kv", b.kv},
          {"recurrent_state", b.recurrent_state},
          {"workspace", b.workspace},
          {"runtime", b.runtime},
          {"reserve", b.reserve},
          {"used", b.used},
          {"usable", b.usable},
          {"headroom", b.headroom},
          {"used_gib", static_cast<double>(b.used) / kGiB},
          {"headroom_gib", static_cast<double>(b.headroom) / kGiB}};
}

// Reads an optional number field into `out`; checks type and lower bound.
Status read_number(const json& j, const char* key, double min, double* out) {
  auto it = j.find(key);
  if (it == j.end()) return ok_status();
  if (!it->is_number()) return invalid_argument(fmt::format("'{}' must be a number", key));
  const double v = it->get<double>();
  if (!(v >= min)) return invalid_argument(fmt::format("'{}' must be >= {}, got {}", key, min, v));
  *out = v;
  return ok_status();
}

Status read_int(const json& j, const char* key, int64_t min, int64_t* out) {
  auto it = j.find(key);
  if (it == j.end()) return ok_status();
  if (!it->is_number_integer())
    return invalid_argument(fmt::format("'{}' must be an integer", key));
  const int64_t v = it->get<int64_t>();
  if (v < min) return invalid_argument(fmt::format("'{}' must be >= {}, got {}", key, min, v));
  *out = v;
  return ok_status();
}

}  // namespace

json to_json(const Architecture& a) {
  return {{"layers", a.layers},
          {"hidden", a.hidden},
          {"vocab", a.vocab},
          {"max_context", a.max_context},
          {"attention", attention_kind_name(a.attention)},
          {"kv_heads", a.kv_heads},
          {"key_length", a.key_length},
          {"value_length", a.value_length},
          {"kv_lora_rank", a.kv_lora_rank},
          {"rope_dim", a.rope_dim},
          {"sliding_window", a.sliding_window},
          {"sliding_layers", a.sliding_layers},
          {"linear_layers", a.linear_layers},
          {"linear_state_bytes_per_layer", a.linear_state_bytes_per_layer}};
}

json to_json(const ModelSpec& m) {
  return {{"name", m.name},
          {"weights_bytes", m.weights_bytes},
          {"weights_gib", static_cast<double>(m.weights_bytes) / kGiB},
          {"ngram_table_bytes", m.ngram_table_bytes},
          {"active_bytes_per_token", m.active_bytes_per_token},
          {"weights_basis", m.weights_basis},
          {"arch", to_json(m.arch)},
          {"notes", m.notes}};
}

json to_json(const Cluster& c) {
  return {{"boxes", c.boxes},
          {"usable_gib", c.usable_gib},
          {"bandwidth_gbs", c.bandwidth_gbs},
          {"link_gbs", c.link_gbs},
          {"reserve_gib", c.reserve_gib},
          {"runtime_gib", c.runtime_gib},
          {"tight_below_gib", c.tight_below_gib}};
}

json to_json(const Workload& w) {
  return {{"context", w.context},
          {"concurrency", w.concurrency},
          {"kv_dtype", kv_dtype_name(w.kv_dtype)},
          {"ngram_on_disk", w.ngram_on_disk},
          {"ubatch_tokens", w.ubatch_tokens},
          {"activation_bytes", w.activation_bytes}};
}

json to_json(const Report& r) {
  json rows = json::array();
  for (const BoxRow& row : r.by_boxes) {
    rows.push_back({{"boxes", row.boxes},
                    {"per_box", budget_json(row.per_box)},
                    {"verdict", verdict_name(row.verdict)},
                    {"max_context", row.max_context},
                    {"decode_ceiling_tok_s", row.decode_ceiling_tok_s}});
  }
  return {{"model", to_json(r.model)},
          {"cluster", to_json(r.cluster)},
          {"workload", to_json(r.workload)},
          {"per_box", budget_json(r.per_box)},
          {"verdict", verdict_name(r.verdict)},
          {"reason", r.reason},
          {"kv_known", r.kv_known},
          {"kv_bytes_per_token", r.kv_bytes_per_token},
          {"kv_bytes_total", r.kv_bytes_total},
          {"max_context", r.max_context},
          {"max_context_capped", r.max_context_capped},
          {"active_bytes_per_token", r.active_bytes_per_token},
          {"read_bytes_per_box", r.read_bytes_per_box},
          {"decode_ceiling_tok_s", r.decode_ceiling_tok_s},
          {"link_bytes_per_token", r.link_bytes_per_token},
          {"link_utilisation", r.link_utilisation},
          {"by_boxes", rows},
          {"warnings", r.warnings}};
}

Result<Cluster> cluster_from_json(const json& j, const Cluster& defaults) {
  if (!j.is_object()) return invalid_argument("cluster must be a JSON object");
  Cluster c = defaults;
  int64_t boxes = c.boxes;
  ARC_RETURN_IF_ERROR(read_int(j, "boxes", 1, &boxes));
  if (boxes > 64) return invalid_argument(fmt::format("'boxes' must be <= 64, got {}", boxes));
  c.boxes = static_cast<int>(boxes);
  ARC_RETURN_IF_ERROR(read_number(j, "usable_gib", 1e-9, &c.usable_gib));
  ARC_RETURN_IF_ERROR(read_number(j, "bandwidth_gbs", 1e-9, &c.bandwidth_gbs));
  ARC_RETURN_IF_ERROR(read_number(j, "link_gbs", 1e-9, &c.link_gbs));
  ARC_RETURN_IF_ERROR(read_number(j, "reserve_gib", 0, &c.reserve_gib));
  ARC_RETURN_IF_ERROR(read_number(j, "runtime_gib", 0, &c.runtime_gib));
  ARC_RETURN_IF_ERROR(read_number(j, "tight_below_gib", 0, &c.tight_below_gib));
  return c;
}

Result<Workload> workload_from_json(const json& j, const Workload& defaults) {
  if (!j.is_object()) return invalid_argument("workload must be a JSON object");
  Workload w = defaults;
  ARC_RETURN_IF_ERROR(read_int(j, "context", 1, &w.context));
  int64_t conc = w.concurrency;
  ARC_RETURN_IF_ERROR(read_int(j, "concurrency", 1, &conc));
  if (conc > 1'000'000) return invalid_argument("'concurrency' must be <= 1000000");
  w.concurrency = static_cast<int>(conc);
  if (auto it = j.find("kv_dtype"); it != j.end()) {
    if (!it->is_string()) return invalid_argument("'kv_dtype' must be a string");
    ARC_ASSIGN_OR_RETURN(w.kv_dtype, parse_kv_dtype(it->get<std::string>()));
  }
  if (auto it = j.find("ngram_on_disk"); it != j.end()) {
    if (!it->is_boolean()) return invalid_argument("'ngram_on_disk' must be true or false");
    w.ngram_on_disk = it->get<bool>();
  }
  ARC_RETURN_IF_ERROR(read_int(j, "ubatch_tokens", 1, &w.ubatch_tokens));
  ARC_RETURN_IF_ERROR(read_number(j, "activation_bytes", 1e-9, &w.activation_bytes));
  return w;
}

}  // namespace arc::fit

namespace arc::catalog {

namespace {

nlohmann::json figure_json(const std::optional<Figure>& f) {
  if (!f) return nullptr;
  return {{"value", f->value}, {"unit", f->unit}, {"source", f->source}, {"bytes", f->bytes()}};
}

}  // namespace

nlohmann::json to_json(const Catalog& c) {
  nlohmann::json models = nlohmann::json::array();
  for (const Model& m : c.models) {
    nlohmann::json builds = nlohmann::json::array();
    for (const Build& b : m.builds) {
      nlohmann::json speeds = nlohmann::json::array();
      for (const Speed& s : b.speeds) {
        speeds.push_back({{"boxes", s.boxes},
                          {"tok_s", s.tok_s},
                          {"what", s.what},
                          {"engine", s.engine},
                          {"source", s.source}});
      }
      builds.push_back({{"name", b.name},
                        {"format", b.format},
                        {"bits_per_weight", b.bits_per_weight},
                        {"params_16bit_b", b.params_16bit_b},
                        {"active_params_16bit_b", b.active_params_16bit_b},
                        {"weights", figure_json(b.weights)},
                        {"ngram_table", figure_json(b.ngram_table)},
                        {"weights_include_ngram", b.weights_include_ngram},
                        {"speeds", speeds},
                        {"sources", b.sources},
                        {"notes", b.notes}});
    }
    models.push_back({{"id", m.id},
                      {"name", m.name},
                      {"origin", m.origin},
                      {"family", m.family},
                      {"total_params_b", m.total_params_b},
                      {"active_params_b", m.active_params_b},
                      {"ngram_params_b", m.ngram_params_b},
                      {"arch", fit::to_json(m.arch)},
                      {"license", m.license},
                      {"sources", m.sources},
                      {"notes", m.notes},
                      {"builds", builds}});
  }
  return {{"schema_version", c.schema_version}, {"models", models}};
}

}  // namespace arc::catalog
