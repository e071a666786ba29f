// The published figures (the catalog's `speeds`, from the seeds) for the model a benchmark ran,
// so the page can show them next to the measured ones. Matching is by name: the served model name
// (often a file name like "Qwen3-30B-A3B-Q4_K_M") against catalog ids and names, ignoring case and
// punctuation; the longest catalog name contained in the served one wins.
#pragma once

#include <QList>
#include <QString>

#include "CatalogEntry.h"

namespace arc::app {

// The entry the model name refers to, or nullptr.
const CatalogEntry* matchCatalogEntry(const QList<CatalogEntry>& catalog, const QString& model);

}  // namespace arc::app
