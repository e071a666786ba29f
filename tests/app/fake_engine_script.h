// An executable shell script standing in for arclight-engine in the app's tests.
#pragma once

#include <gtest/gtest.h>

#include <QByteArray>
#include <QFile>
#include <QTemporaryDir>

namespace arc::app::testing {

// Writes DIR/fake-engine with `body` after a #!/bin/sh line and makes it executable.
inline QString writeScript(const QTemporaryDir& dir, const QByteArray& body) {
  const QString path = dir.filePath(QStringLiteral("fake-engine"));
  QFile f(path);
  EXPECT_TRUE(f.open(QIODevice::WriteOnly));
  f.write("#!/bin/sh\n" + body);
  f.close();
  f.setPermissions(f.permissions() | QFileDevice::ExeOwner);
  return path;
}

}  // namespace arc::app::testing
