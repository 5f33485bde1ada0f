// taihu/arch/line_plot.hpp: 1-2-5 ticks against hand-worked cases; a drawn series passes
// through the pixels its data map to (linear and log axes), gaps are not bridged, and
// bad input is reported naming the plot.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "taihu/arch/error.hpp"
#include "taihu/arch/line_plot.hpp"
#include "error_text.hpp"

using namespace taihu::png;

namespace {

long count(const Canvas& c, Rgb colour, long x0 = 0, long y0 = 0, long x1 = -1, long y1 = -1) {
  if (x1 < 0) x1 = c.width();
  if (y1 < 0) y1 = c.height();
  long n = 0;
  for (long y = y0; y < y1; ++y)
    for (long x = x0; x < x1; ++x) n += c.at(x, y) == colour;
  return n;
}

}  // namespace

TEST(LinePlot, NiceTicksAreOneTwoFiveSteps) {
  double step = 0;
  EXPECT_EQ(nice_ticks(0, 10, 5, &step), (std::vector<double>{0, 2, 4, 6, 8, 10}));
  EXPECT_DOUBLE_EQ(step, 2);
  const auto t = nice_ticks(0.013, 0.061, 4, &step);  // raw step 0.012 -> 0.02
  EXPECT_DOUBLE_EQ(step, 0.02);
  ASSERT_EQ(t.size(), 3u);
  EXPECT_NEAR(t[0], 0.02, 1e-12);
  EXPECT_NEAR(t[2], 0.06, 1e-12);
  EXPECT_EQ(nice_ticks(-730, 1480, 6, &step).front(), -500);  // step 500
  EXPECT_TRUE(nice_ticks(3, 3, 5).empty());
  EXPECT_EQ(tick_label(0.25, 0.05), "0.25");
  EXPECT_EQ(tick_label(1500, 500), "1500");
  EXPECT_EQ(tick_label(-1e-17, 0.1), "0.0");
}

TEST(LinePlot, SeriesPassThroughTheirDataPixels) {
  // Plot area: left 100, top 50, right margin 30 (no legend), bottom 70 -> 400 x 200.
  LinePlot p;
  p.width = 530;
  p.height = 320;
  p.x = {"", false, 0.0, 10.0};
  p.y = {"", false, 0.0, 10.0};
  const Rgb green{0, 170, 0};
  PlotSeries s{"", {0, 5, 10}, {5, 5, 10}, green, 1};
  p.series = {s};
  const Canvas c = draw_line_plot(p, "t");
  // y = 5 is pixel row 50 + 200 - 100 = 150 from x pixel 100 to 300.
  for (long x = 101; x < 300; ++x) EXPECT_EQ(c.at(x, 150), green) << x;
  // Then a diagonal to (500, 50): its midpoint (400, 100).
  EXPECT_EQ(c.at(400, 100), green);
  EXPECT_EQ(count(c, green, 0, 151), 0);  // nothing below the data
}

TEST(LinePlot, LogAxesAndGaps) {
  LinePlot p;
  p.width = 530;
  p.height = 320;
  p.x = {"n", true};
  p.y = {"t", true};
  const Rgb blue{0, 0, 255};
  // Decades 1..100 on x and 1..1000 on y; the NaN and the zero split the line in three.
  PlotSeries s{"", {1, 10, std::nan(""), 100, 50}, {1, 10, 5, 1000, 0}, blue, 1};
  p.series = {s};
  const Canvas c = draw_line_plot(p, "t");
  // (1,1) -> pixel (100, 250); (10,10) -> (300, 250 - 200/3).
  EXPECT_EQ(c.at(100, 250), blue);
  EXPECT_EQ(c.at(200, std::lround(250 - 100.0 / 3)), blue);
  // (100, 1000) alone (its neighbours are NaN / zero): no line towards it.
  EXPECT_EQ(count(c, blue, 310, 0, 530, 320), 0);
}

TEST(LinePlot, LegendRightAxisAndErrors) {
  LinePlot p;
  p.width = 800;
  p.height = 480;
  p.y2 = {"acc", false, 0.0, 1.0};
  const Rgb red{210, 40, 40}, blue{30, 80, 200};
  PlotSeries a{"loss", {0, 1, 2}, {3, 2, 1}, blue};
  PlotSeries b{"accuracy", {0, 2}, {0.5, 0.9}, red};
  b.right_axis = true;
  b.markers = true;
  p.series = {a, b};
  const Canvas c = draw_line_plot(p, "curve.png");
  // Legend swatches sit right of the right-axis labels: the frame ends at 800 - (15 + 33 +
  // 8 * 12 + 10) - 80 = 566, the legend starts 95 further, at 661.
  EXPECT_GT(count(c, blue, 640, 0, 800, 480), 0);
  EXPECT_GT(count(c, red, 640, 0, 800, 480), 0);
  // A marker is a filled 5x5 square: at x = 0 -> pixel 100, y = 0.5 on 0..1 -> row 50 + 180.
  EXPECT_EQ(count(c, red, 98, 228, 103, 233), 25);

  auto error_of = [](const LinePlot& q) { return taihu_test::error_of([&] { draw_line_plot(q, "out/x.png"); }); };
  LinePlot empty;
  empty.series = {PlotSeries{"s", {1}, {std::nan("")}}};
  EXPECT_NE(error_of(empty).find("out/x.png"), std::string::npos);
  LinePlot ragged;
  ragged.series = {PlotSeries{"s", {1, 2}, {1}}};
  EXPECT_NE(error_of(ragged).find("'s'"), std::string::npos);
  LinePlot tiny = p;
  tiny.width = 200;
  EXPECT_NE(error_of(tiny).find("200x480"), std::string::npos);
}
