// The inline SVG plots of the HTML report: a strip plot of one cell's times with
// its own axis, and the forest plot of every cell's hang rate and interval.
#pragma once

#include <string>
#include <vector>

#include "hangbench/summary.hpp"

namespace hangbench::report {

struct PlotPoint {
  double value;
  Outcome outcome;
  int index;
};

const char* outcome_colour(Outcome o);
// Upper end of a shared time axis: the largest value rounded up to 1, 2 or 5 × 10^k.
double tidy_axis_max(double largest);
// One dot per trial (jittered by index) over a 25th–75th percentile box, the
// median and min–max whiskers, above an axis from 0 to axis_max seconds.
std::string strip_plot_svg(const std::vector<PlotPoint>& points, double axis_max);
// Every cell's hang rate k/n with its Clopper-Pearson 95% interval on a 0–100 %
// axis, then every comparison's two pooled sides and its two-sided p.
std::string forest_plot_svg(const RunSummary& run);
// What the forest plot's colours mean: a cell's dot by its verdict, a comparison's
// side a and side b each its own colour.
std::string forest_legend();

}  // namespace hangbench::report
