// The catalog cites its seed documents by file name ("001_cd394c7a95bb786a.txt (Two Sparks): ...");
// people know them by title. This puts each known seed's title in place of its file name.
#pragma once

#include <QString>

namespace arc::app {

// "001_cd394c7a95bb786a.txt (Two Sparks): 'x'" -> "“The State of the Sparks: …” (Two Sparks):
// 'x'". Unknown file names and other text stay as they are.
QString withSeedTitles(const QString& source);

}  // namespace arc::app
