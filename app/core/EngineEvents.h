// The payloads the app reads from the engine's HTTP API, in one place so the server side can match
// them. Every parser is lenient: a missing field keeps its default, a wrong type is ignored, so a
// newer engine with extra fields still works.
//
// GET /engine/events is Server-Sent Events. Each event carries its type in the "event:" field (or,
// failing that, as "type" inside the JSON) and one JSON object in "data:":
//
//   event: state          {"state":"idle|loading|ready|error", "model":"name or empty"}
//   event: load_progress  {"rank":0, "bytes_done":123, "bytes_total":456, "model":"path"}
//   event: load_done      {"model":"name", "path":"...", "seconds":12.5}
//   event: load_error     {"message":"...", "required_bytes":..., "available_bytes":...}
//   event: unloaded       {}
//   event: stats          once a second: {"state":"ready", "decode_tokens_per_s":31.2,
//                          "prefill_tokens_per_s":900.0, "running":1, "waiting":0,
//                          "kv_blocks_used":10, "kv_blocks_total":400, "kv_blocks_cached":4,
//                          "prefix_hit_rate":0.5, "generated_tokens_total":12345,
//                          "memory":[{"rank":0, "host":"spark-1", "used_bytes":...,
//                          "available_bytes":..., "total_bytes":...}],
//                          optional, with tensor parallelism: "allreduce_bytes_per_s":...,
//                          "link_utilization":0.0-1.0}
//   event: request        per finished request: {"id":"...", "finish_reason":"stop",
//                          "queue_ms":1, "ttft_ms":120, "prefill_tokens_per_s":900,
//                          "decode_tokens_per_s":30, "prompt_tokens":50, "completion_tokens":200,
//                          "cached_tokens":32, "total_ms":6800}
//   event: error          {"message":"..."}
//
// GET /engine/status: {"state":..., "version":"0.1.0", "model":{"id","path","architecture",
//   "context_length"} or null, "ranks":N, "memory":[as in stats], "kv":{...}, "settings":{...}}
// POST /engine/load {"path":"/models/x.gguf", "ctx_size":N?} -> 202 {"state":"loading"};
//   refused: 4xx/507 {"error":{"message":"...", "required_bytes":..., "available_bytes":...}}
// POST /engine/unload {} -> 200.
// GET /engine/local-models: {"models":[{"path","name","architecture","size_bytes","params",
//   "quant","context_length","fits":bool?}]} (a bare array is accepted too).
#pragma once

#include <QJsonObject>
#include <QList>
#include <QString>

namespace arc::app {

enum class EngineState { Unknown, Idle, Loading, Ready, Error };
EngineState engineStateFromString(const QString& s);
QString engineStateName(EngineState s);  // translated, for display

struct RankMemory {
  int rank = 0;
  QString host;
  qint64 usedBytes = 0;
  qint64 availableBytes = 0;
  qint64 totalBytes = 0;
};

struct LoadProgress {
  int rank = 0;
  qint64 bytesDone = 0;
  qint64 bytesTotal = 0;
  QString model;
  static LoadProgress fromJson(const QJsonObject& o);
};

struct StatsSnapshot {
  EngineState state = EngineState::Unknown;
  double decodeTokensPerSec = 0;
  double prefillTokensPerSec = 0;
  int running = 0;
  int waiting = 0;
  qint64 kvBlocksUsed = 0;
  qint64 kvBlocksTotal = 0;
  qint64 kvBlocksCached = 0;
  double prefixHitRate = 0;  // 0..1
  qint64 generatedTokensTotal = 0;
  QList<RankMemory> memory;
  // All-reduce traffic and link utilisation (0..1); negative when the engine does not send them.
  double allreduceBytesPerSec = -1;
  double linkUtilization = -1;
  // Speculative decoding: accepted over drafted tokens in the last second; negative when
  // nothing was drafted (or the engine does not speculate).
  double acceptanceRate = -1;
  static StatsSnapshot fromJson(const QJsonObject& o);
};

struct RequestRecord {
  QString id;
  QString finishReason;
  double queueMs = 0;
  double ttftMs = 0;
  double prefillTokensPerSec = 0;
  double decodeTokensPerSec = 0;
  qint64 promptTokens = 0;
  qint64 completionTokens = 0;
  qint64 cachedTokens = 0;
  double totalMs = 0;
  static RequestRecord fromJson(const QJsonObject& o);
};

// A refusal or failure with the numbers the engine gave (0 when absent).
struct EngineError {
  QString message;
  qint64 requiredBytes = 0;
  qint64 availableBytes = 0;
  static EngineError fromJson(const QJsonObject& o);  // accepts {"error":{...}} or the inner object
  QString describe() const;                           // message plus the numbers, for display
};

struct LoadedModel {
  QString id;
  QString path;
  QString architecture;
  qint64 contextLength = 0;
  static LoadedModel fromJson(const QJsonObject& o);
};

struct EngineStatus {
  EngineState state = EngineState::Unknown;
  QString version;
  LoadedModel model;  // empty id/path: none loaded
  int ranks = 1;
  QString backend;        // "cpu" or "cuda"; empty from engines that do not say
  QString backendReason;  // why (--backend auto's choice)
  int device = -1;        // the CUDA device, -1 on the CPU
  QList<RankMemory> memory;
  static EngineStatus fromJson(const QJsonObject& o);
};

QList<RankMemory> rankMemoryFromJson(const QJsonValue& v);
QString formatBytes(qint64 bytes);  // "12.3 GiB"

}  // namespace arc::app
