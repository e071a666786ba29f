#include "BenchPublished.h"

namespace arc::app {

namespace {
QString squash(const QString& s) {
  QString out;
  out.reserve(s.size());
  for (QChar c : s)
    if (c.isLetterOrNumber()) out += c.toLower();
  return out;
}
}  // namespace

const CatalogEntry* matchCatalogEntry(const QList<CatalogEntry>& catalog, const QString& model) {
  const QString m = squash(model);
  if (m.isEmpty()) return nullptr;
  const CatalogEntry* best = nullptr;
  qsizetype bestLen = 0;
  for (const CatalogEntry& e : catalog) {
    for (const QString& name : {e.id, e.name}) {
      const QString n = squash(name);
      // Short names ("glm5") would match too much by accident.
      if (n.size() < 4 || !m.contains(n) || n.size() <= bestLen) continue;
      best = &e;
      bestLen = n.size();
    }
  }
  return best;
}

}  // namespace arc::app
