// What every chart in the app shares: colours from the widget's palette (dark charts in the dark
// theme) and the legend in its own row under the plot, where it cannot cover data.
#pragma once

#include <QPalette>

class QCustomPlot;

namespace arc::app {

// Background, axes, grid, legend and title text from `palette`, tick numbers in the app's
// locale; call again on PaletteChange.
void applyPlotPalette(QCustomPlot* plot, const QPalette& palette);
// Moves the legend out of the axis rect into a row below it, items side by side (wrapping after
// `columns`).
void placeLegendBelow(QCustomPlot* plot, int columns = 6);

}  // namespace arc::app
