// The catalog cites its seed documents by file name ("001_cd394c7a95bb786a.txt (Two Sparks): ...");
// people know them by title. The catalog's "seeds" map gives each file's title
// (resources/catalog/models.json); this puts the title in place of the file name.
#pragma once

#include <QHash>
#include <QString>

namespace arc::app {

// "001_cd394c7a95bb786a.txt (Two Sparks): 'x'" -> "“The State of the Sparks: …” (Two Sparks):
// 'x'". File names without a title and other text stay as they are.
QString withSeedTitles(const QString& source, const QHash<QString, QString>& titles);

}  // namespace arc::app
