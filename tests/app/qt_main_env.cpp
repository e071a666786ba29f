// One QApplication for the whole test binary (gtest_main owns main()). Tests run offscreen:
// QT_QPA_PLATFORM is set by CTest, and defaulted here when the binary is run by hand.
#include <gtest/gtest.h>

#include <QApplication>

namespace {

class QtEnvironment : public ::testing::Environment {
 public:
  void SetUp() override {
    if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM")) qputenv("QT_QPA_PLATFORM", "offscreen");
    static int argc = 1;
    static char name[] = "test_app";
    static char* argv[] = {name, nullptr};
    m_app = new QApplication(argc, argv);
    QApplication::setOrganizationName(QStringLiteral("ArclightTest"));
    QApplication::setApplicationName(QStringLiteral("test_app"));
  }
  void TearDown() override {
    delete m_app;
    m_app = nullptr;
  }

 private:
  QApplication* m_app = nullptr;
};

const auto* const kEnv = ::testing::AddGlobalTestEnvironment(new QtEnvironment);

}  // namespace
