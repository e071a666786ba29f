// What the fit view draws: the fit library's report for one model on N boxes, in the app's terms.
// Filled by FitController from arc::fit (engine/include/arc/fit.h); bytes per box.
#pragma once

#include <QList>
#include <QString>

namespace arc::app {

struct BoxUsage {
  double weightsBytes = 0;
  double kvBytes = 0;
  double runtimeBytes = 0;  // workspaces, CUDA context, buffers
  double reserveBytes = 0;  // kept free for the OS and other apps
  double usableBytes = 0;   // what the box can give (121.6 GiB per GB10 by default)
  // Headroom left; negative when the parts exceed the usable memory.
  double headroomBytes() const {
    return usableBytes - weightsBytes - kvBytes - runtimeBytes - reserveBytes;
  }
};

struct FitSummary {
  bool valid = false;  // false: nothing computed (error says why)
  QString error;
  int boxes = 1;
  bool fits = false;
  QString verdict;         // short, e.g. "fits", "does not fit"
  QString reason;          // one sentence: what limits it
  QList<BoxUsage> perBox;  // one entry per box
  qint64 maxContext = 0;   // the largest context that fits at the chosen concurrency
  double decodeCeilingTokensPerSec = 0;
};

}  // namespace arc::app
