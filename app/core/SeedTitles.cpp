#include "SeedTitles.h"

#include <QRegularExpression>

namespace arc::app {

namespace {

struct Seed {
  const char* file;
  const char* title;  // the document's own title (its first heading when it has no title line)
};

// The seed documents the catalog cites (resources/catalog/models.json; /work/shared/seeds).
constexpr Seed kSeeds[] = {
    {"000_eb1378df18b016b8.txt", "Which model is best for a 256GB dual DGX Spark cluster?"},
    {"001_cd394c7a95bb786a.txt",
     "The State of the Sparks: GLM-5.3 and DeepSeek V4.1 Flash on Two and Three DGX Sparks"},
    {"002_959099d7565e52bd.txt",
     "DeepSeek V4 Flash vs GLM 5.3 Flash vs Qwen3.8-Flash-Next on a 2× DGX Spark cluster"},
    {"003_607e4abfcb22e0ca.txt",
     "Choosing an Agentic Model for a 2× DGX Spark Cluster (September 2026)"},
};

}  // namespace

QString withSeedTitles(const QString& source) {
  static const QRegularExpression file(QStringLiteral("\\b\\d{3}_[0-9a-f]{16}\\.txt\\b"));
  QString out;
  qsizetype last = 0;
  auto it = file.globalMatch(source);
  while (it.hasNext()) {
    const QRegularExpressionMatch m = it.next();
    out += source.mid(last, m.capturedStart() - last);
    QString shown = m.captured();
    for (const Seed& s : kSeeds)
      if (m.captured() == QLatin1String(s.file))
        shown = QStringLiteral("“%1”").arg(QString::fromUtf8(s.title));
    out += shown;
    last = m.capturedEnd();
  }
  return out + source.mid(last);
}

}  // namespace arc::app
