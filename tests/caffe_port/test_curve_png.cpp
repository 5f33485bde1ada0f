// write_curve_png: the PNG decodes (libpng's reader) to the requested size with both
// series drawn in their colours; bad sizes and unwritable paths are errors naming the
// file, and nothing is left under the final name.
#include <gtest/gtest.h>
#include <png.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include "taihu/arch/error.hpp"
#include "taihu/caffe/curve_png.hpp"

namespace fs = std::filesystem;

TEST(CurvePng, DecodesWithBothSeriesInTheirColours) {
  const fs::path dir = fs::temp_directory_path() / ("taihu_curve_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::vector<float> iter, loss, test_iter, test_value;
  for (int i = 0; i <= 400; i += 10) iter.push_back(float(i)), loss.push_back(2.3f * std::exp(-float(i) / 100.f));
  for (int i = 0; i <= 400; i += 100) test_iter.push_back(float(i)), test_value.push_back(0.1f + 0.002f * float(i));
  const std::string path = (dir / "curve.png").string();
  taihu::caffe::write_curve_png(path, iter, loss, test_iter, test_value, 640, 400);
  png_image img{};
  img.version = PNG_IMAGE_VERSION;
  ASSERT_TRUE(png_image_begin_read_from_file(&img, path.c_str())) << img.message;
  img.format = PNG_FORMAT_RGB;
  std::vector<unsigned char> rgb(PNG_IMAGE_SIZE(img));
  ASSERT_TRUE(png_image_finish_read(&img, nullptr, rgb.data(), 0, nullptr)) << img.message;
  EXPECT_EQ(img.width, 640u);
  EXPECT_EQ(img.height, 400u);
  long blue = 0, red = 0;
  for (std::size_t i = 0; i < rgb.size(); i += 3) {
    blue += rgb[i] == 30 && rgb[i + 1] == 80 && rgb[i + 2] == 200;
    red += rgb[i] == 210 && rgb[i + 1] == 40 && rgb[i + 2] == 40;
  }
  EXPECT_GT(blue, 300);  // a 2-pixel line across the plot
  EXPECT_GT(red, 300);
  EXPECT_THROW(taihu::caffe::write_curve_png(path, iter, loss, test_iter, test_value, 100, 100), taihu::Error);
  const std::string missing = (dir / "no" / "curve.png").string();
  try {
    taihu::caffe::write_curve_png(missing, iter, loss, test_iter, test_value);
    ADD_FAILURE() << "no error for " << missing;
  } catch (const taihu::Error& e) {
    EXPECT_NE(std::string(e.what()).find(missing), std::string::npos) << e.what();
  }
  for (const auto& e : fs::directory_iterator(dir)) EXPECT_EQ(e.path().filename(), "curve.png") << e.path();
  fs::remove_all(dir);
}
