// I/O: raw models (axis order, endianness, size errors), SEG-Y written here and read back
// through segyio with the right headers, PNG files, the run configuration's errors.
#include <gtest/gtest.h>
#include <png.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <unistd.h>
#include <filesystem>
#include <fstream>

#include "taihu/arch/error.hpp"
#include "taihu/stencil/config.hpp"
#include "taihu/stencil/image.hpp"
#include "taihu/stencil/raw_model.hpp"
#include "taihu/stencil/run_plan.hpp"
#include "taihu/stencil/segy.hpp"

using namespace taihu::stencil;
namespace fs = std::filesystem;

namespace {

fs::path temp_dir() {
  const fs::path d = fs::temp_directory_path() / ("taihu_stencil_io_" + std::to_string(::getpid()));
  fs::create_directories(d);
  return d;
}

void write_floats(const fs::path& p, const std::vector<float>& v) {
  std::ofstream out(p, std::ios::binary);
  out.write(reinterpret_cast<const char*>(v.data()), static_cast<std::streamsize>(v.size() * 4));
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const taihu::Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(RawModel, AxisOrderAndEndianness) {
  const auto dir = temp_dir();
  // nx = 3, nz = 2. On disk x fastest: value = 10 * z + x.
  std::vector<float> xfast;
  for (int z = 0; z < 2; ++z)
    for (int x = 0; x < 3; ++x) xfast.push_back(float(10 * z + x));
  write_floats(dir / "xfast.bin", xfast);
  RawFieldSpec spec{(dir / "xfast.bin").string(), {3, 2}, "x,z", {5.0}};
  const auto v = read_raw_field(spec);
  const Grid g = grid_of(spec);
  ASSERT_EQ(g.n[0], 2);
  ASSERT_EQ(g.n[1], 3);
  for (int x = 0; x < 3; ++x)
    for (int z = 0; z < 2; ++z) EXPECT_EQ(v[x * 2 + z], float(10 * z + x));
  // Big-endian copy.
  std::vector<float> be = xfast;
  for (auto& f : be) {
    std::uint32_t w;
    std::memcpy(&w, &f, 4);
    w = __builtin_bswap32(w);
    std::memcpy(&f, &w, 4);
  }
  write_floats(dir / "be.bin", be);
  RawFieldSpec bs = spec;
  bs.path = (dir / "be.bin").string();
  bs.big_endian = true;
  EXPECT_EQ(read_raw_field(bs), v);
  fs::remove_all(dir);
}

TEST(RawModel, ClearErrors) {
  const auto dir = temp_dir();
  write_floats(dir / "small.bin", std::vector<float>(5, 1.f));
  RawFieldSpec spec{(dir / "small.bin").string(), {3, 2}, "z,x", {5.0}};
  EXPECT_NE(error_of([&] { read_raw_field(spec); }).find("holds 20 bytes"), std::string::npos);
  spec.path = (dir / "missing.bin").string();
  EXPECT_NE(error_of([&] { read_raw_field(spec); }).find("cannot open"), std::string::npos);
  spec.order = "z,q";
  EXPECT_NE(error_of([&] { grid_of(spec); }).find("axis order"), std::string::npos);
  fs::remove_all(dir);
}

TEST(RawModel, MarmousiLoadsWhenPresent) {
  const char* path = "/work/shared/data/marmousi/vp_marmousi_bi";
  if (!fs::exists(path)) GTEST_SKIP() << "no ../shared/data on this machine";
  RawFieldSpec spec{path, {1601, 401}, "z,x", {7.5}};
  spec.scale = 1000;
  const Model m = read_raw_model(spec);
  EXPECT_EQ(m.grid.n[0], 401);
  EXPECT_EQ(m.grid.n[1], 1601);
  EXPECT_NEAR(m.vp_min(), 1028, 5);
  EXPECT_NEAR(m.vp_max(), 4700, 5);
  EXPECT_LT(m.vp[0], 1600.f);  // water at the surface: depth is the fast axis
}

TEST(Segy, WrittenShotsReadBackWithHeaders) {
  const auto dir = temp_dir();
  std::vector<ShotRecord> shots(2);
  for (int s = 0; s < 2; ++s) {
    ShotRecord& r = shots[s];
    r.nt = 50;
    r.dt = 2e-3;
    r.source = {15.0, 100.0 + 250.0 * s, 0};
    for (int i = 0; i < 3; ++i) r.receivers.push_back({7.5, 12.25 * i, 0});
    r.data.resize(3 * 50);
    for (std::size_t i = 0; i < r.data.size(); ++i) r.data[i] = std::sin(0.1f * float(i)) * float(s + 1);
  }
  const std::string path = (dir / "shots.segy").string();
  write_segy(path, shots);
  const SegyTraces t = read_segy(path);
  ASSERT_EQ(t.traces(), 6u);
  EXPECT_EQ(t.samples, 50);
  EXPECT_NEAR(t.dt, 2e-3, 1e-9);
  for (int s = 0; s < 2; ++s)
    for (int i = 0; i < 3; ++i) {
      const std::size_t k = std::size_t(s * 3 + i);
      EXPECT_EQ(t.field_record[k], s + 1);
      EXPECT_DOUBLE_EQ(t.source_x[k], 100.0 + 250.0 * s);
      EXPECT_DOUBLE_EQ(t.group_x[k], 12.25 * i);
      EXPECT_DOUBLE_EQ(t.source_depth[k], 15.0);
      EXPECT_DOUBLE_EQ(t.group_depth[k], 7.5);
      EXPECT_EQ(t.offset[k], std::lround(std::abs(12.25 * i - (100.0 + 250.0 * s))));
      for (int j = 0; j < 50; ++j) EXPECT_EQ(t.data[k * 50 + j], shots[s].trace(i)[j]);
    }
  EXPECT_FALSE(fs::exists(path + ".tmp." + std::to_string(::getpid())));
  fs::remove_all(dir);
}

TEST(Png, GatherAndWavefieldAreValidPngs) {
  const auto dir = temp_dir();
  ShotRecord r;
  r.nt = 100;
  r.dt = 1e-3;
  for (int i = 0; i < 20; ++i) r.receivers.push_back({0, 10.0 * i, 0});
  r.data.resize(2000);
  for (std::size_t i = 0; i < r.data.size(); ++i) r.data[i] = std::sin(0.05f * float(i));
  const std::string path = (dir / "g.png").string();
  write_png(path, gather_picture(r, "test gather"));
  png_image img{};
  img.version = PNG_IMAGE_VERSION;
  ASSERT_TRUE(png_image_begin_read_from_file(&img, path.c_str()));
  EXPECT_GE(img.width, 600u);  // scaled up to a readable size plus axes
  EXPECT_GE(img.height, 300u);
  png_image_free(&img);
  Picture bad;
  bad.width = 3;
  bad.height = 3;
  EXPECT_THROW(write_png(path, bad), taihu::Error);
  fs::remove_all(dir);
}

TEST(Config, ErrorsNameFileLineAndKey) {
  EXPECT_NE(error_of([] { Config::parse_text("[model]\nvp\n", "a.ini"); }).find("a.ini:2"), std::string::npos);
  EXPECT_NE(error_of([] { Config::parse_text("[model\n", "a.ini"); }).find("a.ini:1"), std::string::npos);
  const Config c = Config::parse_text("[simulation]\ntmax = abc\n[acquisition]\nshots = 5:1:1\n", "b.ini");
  const std::string e1 = error_of([&] { c.get_double("simulation.tmax"); });
  EXPECT_NE(e1.find("b.ini:2"), std::string::npos) << e1;
  EXPECT_NE(e1.find("simulation.tmax"), std::string::npos) << e1;
  EXPECT_NE(error_of([&] { c.get_range("acquisition.shots"); }).find("first:last:step"), std::string::npos);
  EXPECT_NE(error_of([&] { c.get_string("model.vp"); }).find("missing key 'model.vp'"), std::string::npos);
  const Config typo = Config::parse_text("[simulation]\ntmaxx = 1\n", "c.ini");
  EXPECT_NE(error_of([&] { plan_from_config(typo); }).find("c.ini:2: unknown key 'simulation.tmaxx'"), std::string::npos);
}

TEST(Config, RangesAndPlan) {
  const Config c = Config::parse_text(
      "[model]\nshape = 101x51\nspacing = 10\n[simulation]\ntmax = 0.1\nf0 = 15\n"
      "[acquisition]\nshots = 100:500:200\nreceivers = 0:1000:250\n",
      "d.ini");
  const RunPlan p = plan_from_config(c);
  ASSERT_EQ(p.shots.size(), 3u);
  EXPECT_DOUBLE_EQ(p.shots[2].source.x, 500.0);
  ASSERT_EQ(p.shots[0].receivers.size(), 5u);
  EXPECT_EQ(p.model.grid.n[0], 51);
  EXPECT_EQ(p.model.grid.n[1], 101);
  EXPECT_GT(p.options.nt, 10);
  const Config unstable = Config::parse_text("[model]\nshape = 101x51\n[simulation]\ndt = 0.01\n", "e.ini");
  EXPECT_NE(error_of([&] { plan_from_config(unstable); }).find("use dt <="), std::string::npos);
  const Config kms = Config::parse_text("[model]\nvp = k.bin\nshape = 2x2\nspacing = 1\n", "f.ini");
  EXPECT_NE(error_of([&] { plan_from_config(kms); }).find("cannot open"), std::string::npos);
}
