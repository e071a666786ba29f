// Item models with QAbstractItemModelTester (fatal on any contract violation) plus their content
// against the hand-written test catalog (tests/data/app/catalog_small.json).
#include <gtest/gtest.h>

#include <QAbstractItemModelTester>
#include <QFile>

#include "ModelFilterProxy.h"
#include "ModelListModel.h"

using namespace arc::app;

namespace {

QList<CatalogEntry> loadTestCatalog() {
  QFile f(QStringLiteral(ARC_TEST_DATA_DIR "/app/catalog_small.json"));
  EXPECT_TRUE(f.open(QIODevice::ReadOnly));
  QString error;
  const auto entries = parseCatalog(f.readAll(), &error);
  EXPECT_TRUE(error.isEmpty()) << error.toStdString();
  return entries;
}

}  // namespace

TEST(CatalogEntry, ParsesLenientShapes) {
  const auto e = loadTestCatalog();
  ASSERT_EQ(e.size(), 3);  // the empty entry and the string are skipped
  EXPECT_DOUBLE_EQ(e[0].paramsB, 235);
  EXPECT_DOUBLE_EQ(e[0].activeParamsB, 22);
  EXPECT_EQ(e[0].sizeBytes(), 142000000000LL);  // smallest build
  ASSERT_EQ(e[0].speeds.size(), 1);
  EXPECT_DOUBLE_EQ(e[0].speeds[0].tokensPerSec, 18.5);
  EXPECT_EQ(e[0].speeds[0].source, QStringLiteral("seed 001"));
  EXPECT_DOUBLE_EQ(e[1].paramsB, 30.5);
  EXPECT_DOUBLE_EQ(e[1].activeParamsB, 3.3);
  EXPECT_EQ(e[1].sizeBytes(), 18600000000LL);
  EXPECT_NEAR(e[2].paramsB, 8.03, 1e-9);
  EXPECT_DOUBLE_EQ(e[2].activeParamsB, e[2].paramsB);  // dense: all parameters active
  QString error;
  EXPECT_TRUE(parseCatalog("{broken", &error).isEmpty());
  EXPECT_FALSE(error.isEmpty());
}

TEST(ModelListModel, PassesModelTesterAndMarksLoaded) {
  ModelListModel model;
  QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::Fatal);
  model.setEntries(loadTestCatalog());
  ASSERT_EQ(model.rowCount(), 3);
  EXPECT_EQ(model.index(0, ModelListModel::ParamsColumn).data().toString(),
            QStringLiteral("235.0 B"));
  EXPECT_EQ(model.families(), (QStringList{QStringLiteral("llama"), QStringLiteral("qwen3moe")}));
  model.setFit(QStringLiteral("mid-moe"), ModelListModel::Fit::Yes);
  model.setFit(QStringLiteral("big-moe"), ModelListModel::Fit::No);
  EXPECT_EQ(model.index(1, ModelListModel::FitsColumn).data().toString(), QStringLiteral("fits"));
  EXPECT_EQ(model.index(0, ModelListModel::FitsColumn).data().toString(),
            QStringLiteral("does not fit"));
  model.setLoaded(QStringLiteral("mid-moe"));
  EXPECT_TRUE(model.index(1, 0).data(ModelListModel::LoadedRole).toBool());
  EXPECT_FALSE(model.index(0, 0).data(ModelListModel::LoadedRole).toBool());
  EXPECT_TRUE(model.index(1, 0).data().toString().contains(QStringLiteral("loaded")));

  // Local files are marked by path.
  CatalogEntry local = CatalogEntry::fromLocalJson(QJsonObject{
      {QStringLiteral("path"), QStringLiteral("/m/x.gguf")}, {QStringLiteral("size_bytes"), 1234}});
  model.setEntries({local});
  EXPECT_EQ(model.index(0, 0).data(ModelListModel::IdRole).toString(), QStringLiteral("/m/x.gguf"));
  model.setLoaded(QStringLiteral("/m/x.gguf"));
  EXPECT_TRUE(model.index(0, 0).data(ModelListModel::LoadedRole).toBool());
  model.setEntries({});
  EXPECT_EQ(model.rowCount(), 0);
}

TEST(ModelFilterProxy, PassesModelTesterAndFilters) {
  ModelListModel model;
  model.setEntries(loadTestCatalog());
  ModelFilterProxy proxy;
  proxy.setSourceModel(&model);
  QAbstractItemModelTester tester(&proxy, QAbstractItemModelTester::FailureReportingMode::Fatal);
  EXPECT_EQ(proxy.rowCount(), 3);
  proxy.setSearchText(QStringLiteral("moe"));
  EXPECT_EQ(proxy.rowCount(), 2);
  proxy.setSearchText(QStringLiteral("LLAMA"));  // matches the family, case-insensitive
  EXPECT_EQ(proxy.rowCount(), 1);
  proxy.setSearchText({});
  proxy.setFamily(QStringLiteral("qwen3moe"));
  EXPECT_EQ(proxy.rowCount(), 2);
  proxy.setSizeClass(SizeClass::Large);
  ASSERT_EQ(proxy.rowCount(), 1);
  EXPECT_EQ(proxy.index(0, 0).data(ModelListModel::IdRole).toString(), QStringLiteral("big-moe"));
  proxy.setSizeClass(SizeClass::Medium);
  ASSERT_EQ(proxy.rowCount(), 1);
  EXPECT_EQ(proxy.index(0, 0).data(ModelListModel::IdRole).toString(), QStringLiteral("mid-moe"));
  proxy.setFamily({});
  proxy.setSizeClass(SizeClass::Any);
  proxy.setFitsOnly(true);
  EXPECT_EQ(proxy.rowCount(), 0);  // no verdicts yet
  model.setFit(QStringLiteral("small-dense"), ModelListModel::Fit::Yes);
  EXPECT_EQ(proxy.rowCount(), 1);
  proxy.setFitsOnly(false);
  proxy.sort(ModelListModel::ParamsColumn, Qt::AscendingOrder);  // numeric, not text, order
  EXPECT_EQ(proxy.index(0, 0).data(ModelListModel::IdRole).toString(),
            QStringLiteral("small-dense"));
  EXPECT_EQ(proxy.index(2, 0).data(ModelListModel::IdRole).toString(), QStringLiteral("big-moe"));
}
