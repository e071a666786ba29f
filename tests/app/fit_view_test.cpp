// The fit view plots exactly the numbers of the summary it is given; with the fit library, the
// Models page's numbers equal arc::fit's for the same inputs (see fit_library_test below).
#include <gtest/gtest.h>

#include <algorithm>

#include "FitView.h"

using namespace arc::app;

TEST(FitView, PlotsTheSummaryPerBox) {
  FitView view;
  FitSummary s;
  s.valid = true;
  s.boxes = 2;
  const double gib = double(1ll << 30);
  s.perBox = {BoxUsage{60 * gib, 10 * gib, 3 * gib, 8 * gib, 121.6 * gib},
              BoxUsage{60 * gib, 10 * gib, 3 * gib, 8 * gib, 121.6 * gib}};
  view.setSummary(s);
  for (int b = 0; b < 2; ++b) {
    EXPECT_DOUBLE_EQ(view.plottedGiB(FitView::Weights, b), 60);
    EXPECT_DOUBLE_EQ(view.plottedGiB(FitView::Kv, b), 10);
    EXPECT_DOUBLE_EQ(view.plottedGiB(FitView::Runtime, b), 3);
    EXPECT_DOUBLE_EQ(view.plottedGiB(FitView::Reserve, b), 8);
    EXPECT_NEAR(view.plottedGiB(FitView::Headroom, b), 121.6 - 81, 1e-9);
  }
  EXPECT_EQ(view.plottedGiB(FitView::Weights, 2), -1);  // no third box
  EXPECT_NEAR(view.usableLineGiB(), 121.6, 1e-9);

  // Overcommitted: no negative headroom bar, the stack rises past the usable line.
  s.perBox = {BoxUsage{130 * gib, 10 * gib, 3 * gib, 8 * gib, 121.6 * gib}};
  view.setSummary(s);
  EXPECT_DOUBLE_EQ(view.plottedGiB(FitView::Headroom, 0), 0);
  EXPECT_EQ(view.plottedGiB(FitView::Weights, 1), -1);
}

#ifdef ARC_APP_HAVE_FIT
#include "EngineSession.h"
#include "ModelListModel.h"
#include "ModelsPage.h"
#include "arc/catalog.h"
#include "arc/fit.h"

namespace {
const char* const kCatalog = ARC_TEST_DATA_DIR "/../../resources/catalog/models.json";

arc::fit::Report libraryReport(const std::string& id, size_t build, const FitInputs& in) {
  auto catalog = arc::catalog::load_catalog(kCatalog);
  EXPECT_TRUE(catalog.ok()) << catalog.status().message();
  const arc::catalog::Model* m = catalog->find(id);
  EXPECT_NE(m, nullptr);
  auto spec = arc::catalog::model_spec(*m, m->builds.at(build));
  EXPECT_TRUE(spec.ok()) << spec.status().message();
  arc::fit::Cluster c;
  c.boxes = in.boxes;
  c.usable_gib = in.usableGiB;
  c.reserve_gib = in.reserveGiB;
  arc::fit::Workload w;
  w.context = in.contextTokens;
  w.concurrency = in.concurrency;
  w.kv_dtype = *arc::fit::parse_kv_dtype(in.kvDtype.toStdString());
  auto r = arc::fit::compute(*spec, c, w);
  EXPECT_TRUE(r.ok()) << r.status().message();
  return *r;
}
}  // namespace

TEST(FitView, ModelsPageNumbersEqualTheFitLibrary) {
  EngineSession session;
  ModelsPage page(&session);
  ASSERT_TRUE(page.loadCatalog(QString::fromUtf8(kCatalog)));
  ASSERT_TRUE(page.selectModel(QStringLiteral("qwen3-235b-a22b")));
  FitInputs in;
  in.boxes = 2;
  in.contextTokens = 65536;
  in.concurrency = 2;
  in.kvDtype = QStringLiteral("q8_0");
  in.reserveGiB = 6;
  in.usableGiB = 120;
  in.buildIndex = 2;  // q4_k
  page.setInputs(in);
  const arc::fit::Report r = libraryReport("qwen3-235b-a22b", 2, in);
  const FitSummary& s = page.fitController()->summary();
  ASSERT_TRUE(s.valid) << s.error.toStdString();
  const arc::fit::BoxBudget& b = r.per_box;
  const double gib = double(1ll << 30);
  for (int box = 0; box < 2; ++box) {
    EXPECT_DOUBLE_EQ(page.fitView()->plottedGiB(FitView::Weights, box),
                     double(b.weights + b.ngram_tables) / gib);
    EXPECT_DOUBLE_EQ(page.fitView()->plottedGiB(FitView::Kv, box),
                     double(b.kv + b.recurrent_state) / gib);
    EXPECT_DOUBLE_EQ(page.fitView()->plottedGiB(FitView::Runtime, box),
                     double(b.workspace + b.runtime) / gib);
    EXPECT_DOUBLE_EQ(page.fitView()->plottedGiB(FitView::Reserve, box), double(b.reserve) / gib);
    EXPECT_NEAR(page.fitView()->plottedGiB(FitView::Headroom, box),
                std::max<double>(0, double(b.headroom)) / gib, 1e-9);
  }
  EXPECT_EQ(page.fitView()->plottedGiB(FitView::Weights, 2), -1);
  EXPECT_DOUBLE_EQ(page.fitView()->usableLineGiB(), double(b.usable) / gib);
  EXPECT_EQ(s.maxContext, r.max_context);
  EXPECT_DOUBLE_EQ(s.decodeCeilingTokensPerSec, r.decode_ceiling_tok_s);
  EXPECT_EQ(s.fits, r.verdict != arc::fit::Verdict::kDoesNotFit);
  EXPECT_EQ(s.reason.toStdString(), r.reason);
  // The 1–4 box table.
  const auto& table = page.fitController()->boxTable();
  ASSERT_EQ(table.size(), qsizetype(r.by_boxes.size()));
  for (size_t i = 0; i < r.by_boxes.size(); ++i) {
    EXPECT_EQ(table[i].boxes, r.by_boxes[i].boxes);
    EXPECT_EQ(table[i].maxContext, r.by_boxes[i].max_context) << i;
    EXPECT_DOUBLE_EQ(table[i].decodeCeilingTokensPerSec, r.by_boxes[i].decode_ceiling_tok_s) << i;
    EXPECT_EQ(table[i].fits, r.by_boxes[i].verdict != arc::fit::Verdict::kDoesNotFit) << i;
  }
}

TEST(FitView, FitsColumnFollowsTheLibraryVerdict) {
  EngineSession session;
  ModelsPage page(&session);
  ASSERT_TRUE(page.loadCatalog(QString::fromUtf8(kCatalog)));
  const FitInputs in = page.fitController()->inputs();  // the defaults
  ModelListModel* m = page.catalogModel();
  ASSERT_GT(m->rowCount(), 20);
  int fits = 0, doesNot = 0;
  for (const CatalogEntry& e : m->entries()) {
    // "Fits" when some build fits: the library's verdict over every build.
    bool any = false;
    for (size_t b = 0; b < size_t(e.builds.size()); ++b) {
      FitInputs each = in;
      each.buildIndex = int(b);
      any |= libraryReport(e.id.toStdString(), b, each).verdict != arc::fit::Verdict::kDoesNotFit;
    }
    const auto expected = any ? ModelListModel::Fit::Yes : ModelListModel::Fit::No;
    EXPECT_EQ(m->fitOf(e.id), expected) << e.id.toStdString();
    (expected == ModelListModel::Fit::Yes ? fits : doesNot)++;
  }
  EXPECT_GT(fits, 0);  // the catalog has both kinds at the defaults
  EXPECT_GT(doesNot, 0);
}
#endif
