// taihu/arch/png.hpp: a written PNG decodes (libpng's simplified reader, independent of
// our encoder) to exactly the drawn pixels; text and lines land where asked; a failed
// write leaves nothing under the final name; errors name the path.
#include <gtest/gtest.h>
#include <png.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>

#include <filesystem>
#include <functional>
#include <fstream>
#include <cstring>
#include <string>
#include <vector>

#include "taihu/arch/error.hpp"
#include "taihu/arch/png.hpp"
#include "error_text.hpp"

namespace fs = std::filesystem;
using taihu::png::Canvas;
using taihu::png::Rgb;

namespace {

fs::path temp_dir() {
  const fs::path d = fs::temp_directory_path() / ("taihu_png_" + std::to_string(::getpid()));
  fs::create_directories(d);
  return d;
}

struct Decoded {
  unsigned width = 0, height = 0;
  std::vector<std::uint8_t> rgb;
};

Decoded decode(const std::string& path) {
  png_image img{};
  img.version = PNG_IMAGE_VERSION;
  if (!png_image_begin_read_from_file(&img, path.c_str())) throw std::runtime_error(img.message);
  img.format = PNG_FORMAT_RGB;
  Decoded d;
  d.width = img.width;
  d.height = img.height;
  d.rgb.resize(PNG_IMAGE_SIZE(img));
  if (!png_image_finish_read(&img, nullptr, d.rgb.data(), 0, nullptr)) throw std::runtime_error(img.message);
  return d;
}

using taihu_test::error_of;

}  // namespace

TEST(Png, DecodedPixelsEqualTheCanvas) {
  const auto dir = temp_dir();
  // Every pixel different (a gradient plus a pseudo-random part), odd sizes.
  Canvas c(37, 23);
  unsigned s = 12345;
  for (long y = 0; y < c.height(); ++y)
    for (long x = 0; x < c.width(); ++x) {
      s = s * 1103515245u + 12345u;
      c.set(x, y, {static_cast<std::uint8_t>(x * 7), static_cast<std::uint8_t>(y * 11), static_cast<std::uint8_t>(s >> 16)});
    }
  const std::string path = (dir / "a.png").string();
  taihu::png::write(path, c);
  const Decoded d = decode(path);
  ASSERT_EQ(d.width, 37u);
  ASSERT_EQ(d.height, 23u);
  EXPECT_EQ(d.rgb, c.pixels());
  EXPECT_FALSE(fs::exists(path + ".tmp." + std::to_string(::getpid())));
  fs::remove_all(dir);
}

TEST(Png, LinesAndTextLandWhereDrawn) {
  Canvas c(40, 20, {255, 255, 255});
  const Rgb red{255, 0, 0};
  c.line(2, 5, 30, 5, red);  // horizontal, 1 pixel
  for (long x = 0; x < 40; ++x)
    for (long y = 0; y < 20; ++y) EXPECT_EQ(c.at(x, y) == red, y == 5 && x >= 2 && x <= 30) << x << "," << y;
  c.line(10, 0, 10, 19, red, 3);  // vertical, 3 pixels: columns 9..11
  EXPECT_EQ(c.at(9, 12), red);
  EXPECT_EQ(c.at(11, 12), red);
  EXPECT_FALSE(c.at(12, 12) == red);
  // "|" is one full column (the 3rd of the glyph) of 7 rows; scale 2 doubles it.
  Canvas t(20, 20, {0, 0, 0});
  taihu::png::draw_text(t, 1, 1, "|", 2, {255, 255, 255});
  long lit = 0;
  for (long x = 0; x < 20; ++x)
    for (long y = 0; y < 20; ++y)
      if (t.at(x, y) == Rgb{255, 255, 255}) {
        ++lit;
        EXPECT_TRUE(x >= 5 && x <= 6 && y >= 1 && y <= 14) << x << "," << y;
      }
  EXPECT_EQ(lit, 2 * 14);
  EXPECT_EQ(taihu::png::text_width("abc", 2), 3 * taihu::png::kGlyphWidth * 2);
  // Off-canvas drawing is clipped, not a crash.
  c.line(-1e9, -5, 1e9, 1e12, red, 2);
  taihu::png::draw_text(c, -100, 18, "clipped \x01", 3, red);
}

TEST(Png, FailedWriteLeavesNoFileAndNamesThePath) {
  const auto dir = temp_dir();
  Canvas c(4, 4);
  // The target is an existing directory: the temp file is written, the rename fails.
  const fs::path target = dir / "is_a_dir.png";
  fs::create_directories(target / "child");
  const std::string msg = error_of([&] { taihu::png::write(target.string(), c); });
  EXPECT_NE(msg.find(target.string()), std::string::npos) << msg;
  for (const auto& e : fs::directory_iterator(dir)) EXPECT_EQ(e.path(), target) << "left behind: " << e.path();
  // A missing directory: nothing can be created.
  const std::string missing = (dir / "no" / "such" / "x.png").string();
  const std::string msg2 = error_of([&] { taihu::png::write(missing, c); });
  EXPECT_NE(msg2.find(missing), std::string::npos) << msg2;
  EXPECT_FALSE(fs::exists(missing));
  // A write that fails part-way (RLIMIT_FSIZE: EFBIG, as ENOSPC on a full disk), in a
  // child so the limit stays there: an old file under the name survives untouched, and
  // no temp file is left.
  const std::string old = (dir / "old.png").string();
  taihu::png::write(old, c);
  const auto old_size = fs::file_size(old);
  Canvas noisy(256, 256);
  unsigned s = 7;
  for (long y = 0; y < 256; ++y)
    for (long x = 0; x < 256; ++x) {
      s = s * 1664525u + 1013904223u;
      noisy.set(x, y, {static_cast<std::uint8_t>(s >> 24), static_cast<std::uint8_t>(s >> 16), static_cast<std::uint8_t>(s >> 8)});
    }
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    std::signal(SIGXFSZ, SIG_IGN);
    const rlimit limit{4096, 4096};  // the noisy PNG is ~200 KB
    ::setrlimit(RLIMIT_FSIZE, &limit);
    try {
      taihu::png::write(old, noisy);
    } catch (const taihu::Error& e) {
      const std::string m = e.what();
      ::_exit(m.find(old) != std::string::npos && m.find(std::strerror(EFBIG)) != std::string::npos ? 0 : 2);
    }
    ::_exit(1);  // no error: the limit did not bite
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "1: no error; 2: the error did not name the path and EFBIG";
  EXPECT_EQ(fs::file_size(old), old_size);
  EXPECT_EQ(decode(old).rgb, c.pixels());
  for (const auto& e : fs::directory_iterator(dir))
    EXPECT_TRUE(e.path() == target || e.path() == old) << "left behind: " << e.path();
  EXPECT_THROW(Canvas(0, 5), taihu::Error);
  EXPECT_THROW(c.at(4, 0), taihu::Error);
  fs::remove_all(dir);
}
