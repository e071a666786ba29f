// One chat conversation as the app keeps it: messages (with the speed figures of each answer),
// the system prompt and the sampling settings, and its JSON form on disk.
#pragma once

#include <QDateTime>
#include <QJsonObject>
#include <QList>
#include <QString>
#include <QStringList>

namespace arc::app {

struct SamplingSettings {
  enum class Preset { Precise, Balanced, Creative, Custom };
  double temperature = 0.7;
  double topP = 0.9;
  int topK = 40;
  int maxTokens = 2048;

  static SamplingSettings preset(Preset p);
  Preset matchingPreset() const;  // Custom when no preset has exactly these values
  bool operator==(const SamplingSettings&) const = default;
};

// Figures the engine reported for one answer ("timings" and "usage"); -1 when not reported.
struct AnswerStats {
  double ttftMs = -1;
  double decodeTokensPerSec = -1;
  double prefillTokensPerSec = -1;
  double totalMs = -1;
  qint64 promptTokens = -1;
  qint64 completionTokens = -1;
  qint64 cachedTokens = -1;
  // Speculative decoding: drafted tokens the engine verified, and those accepted (-1: none).
  qint64 draftTokens = -1;
  qint64 acceptedTokens = -1;
  bool isEmpty() const { return ttftMs < 0 && promptTokens < 0 && completionTokens < 0; }
};

struct ChatMessage {
  enum class Role { System, User, Assistant };
  enum class Status { Complete, Streaming, Stopped, Error };
  Role role = Role::User;
  QString content;
  QString reasoning;   // the model's "thinking", shown apart
  QStringList images;  // data URIs (data:image/png;base64,...)
  Status status = Status::Complete;
  QString error;  // when status is Error: what went wrong, for a person
  AnswerStats stats;
};

struct Conversation {
  QString id;
  QString title;
  QString systemPrompt;
  SamplingSettings sampling;
  QList<ChatMessage> messages;
  QDateTime updated;

  QJsonObject toJson() const;
  // Reads the JSON form; returns false with `error` set when required fields are missing.
  static bool fromJson(const QJsonObject& o, Conversation& out, QString* error);
};

}  // namespace arc::app
