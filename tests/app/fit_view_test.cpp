// The fit view plots exactly the numbers of the summary it is given; with the fit library, the
// Models page's numbers equal arc::fit's for the same inputs (see fit_library_test below).
#include <gtest/gtest.h>

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
