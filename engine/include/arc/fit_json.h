// JSON form of the fit report (for `arclight-engine fit --json`, POST /engine/fit and the app),
// and the request side: cluster and workload from JSON with checked fields.
//
// Report JSON (bytes are integers, sizes also given in GiB for people):
//   {"model": {...}, "cluster": {...}, "workload": {...},
//    "per_box": {"weights": B, "ngram_tables": B, "kv": B, "recurrent_state": B, "workspace": B,
//                "runtime": B, "reserve": B, "used": B, "usable": B, "headroom": B, "used_gib": x,
//                "headroom_gib": x},
//    "verdict": "fits" | "tight" | "does not fit", "reason": "...",
//    "kv_known": bool, "kv_bytes_per_token": x, "kv_bytes_total": B, "max_context": n (0: none
//    fits, -1: unknown),
//    "max_context_capped": bool, "active_bytes_per_token": x, "read_bytes_per_box": x,
//    "decode_ceiling_tok_s": x, "link_bytes_per_token": x, "link_utilisation": x,
//    "by_boxes": [{"boxes": n, "per_box": {...}, "verdict": "...", "max_context": n,
//                  "decode_ceiling_tok_s": x}], "warnings": ["..."]}
#pragma once

#include <nlohmann/json.hpp>

#include "arc/catalog.h"
#include "arc/fit.h"
#include "arc/status.h"

namespace arc::fit {

nlohmann::json to_json(const Architecture& a);
nlohmann::json to_json(const ModelSpec& m);
nlohmann::json to_json(const Cluster& c);
nlohmann::json to_json(const Workload& w);
nlohmann::json to_json(const Report& r);

// Fields absent from `j` keep the values of `defaults`; present fields of the wrong type or out of
// range give INVALID_ARGUMENT naming the field.
Result<Cluster> cluster_from_json(const nlohmann::json& j, const Cluster& defaults = {});
Result<Workload> workload_from_json(const nlohmann::json& j, const Workload& defaults = {});

}  // namespace arc::fit

namespace arc::catalog {

// The catalog as the app and GET/POST handlers show it: every model with its builds, published
// figures and sources (same field names as models.json, arch numbers as the calculator reads them).
nlohmann::json to_json(const Catalog& c);

}  // namespace arc::catalog
