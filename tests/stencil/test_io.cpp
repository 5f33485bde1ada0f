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
#include "error_text.hpp"

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

using taihu_test::error_of;

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
  // Found by the seismic_ini fuzzer: a size past a long (UB in the conversion) and a range
  // whose count is unbounded (allocation until out of memory).
  const Config huge = Config::parse_text("[model]\nshape = 1e19x1\n[acquisition]\nshots = 0:1e300:1e-300\n", "h.ini");
  EXPECT_NE(error_of([&] { huge.get_shape("model.shape"); }).find("expected sizes"), std::string::npos);
  EXPECT_NE(error_of([&] { huge.get_range("acquisition.shots"); }).find("more than 10000000 values"), std::string::npos);
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

// Issue 23: SEG-Y keeps the interval (us) and the sample count in 16-bit fields that
// segyio reads back signed; 40000 us came back as -0.025536 s, 40000 samples as -25536.
// Beyond 32767 is refused before anything is written; the limits themselves round-trip.
TEST(Segy, SamplingThatDoesNotFitIsRefusedAndTheLimitsRoundTrip) {
  const auto dir = temp_dir();
  const std::string path = (dir / "limits.segy").string();
  auto record = [](int nt, double dt) {
    ShotRecord r;
    r.nt = nt;
    r.dt = dt;
    r.receivers = {{0, 0, 0}};
    r.data.assign(static_cast<std::size_t>(nt), 1.f);
    return r;
  };
  for (const auto& [nt, dt] : std::vector<std::pair<int, double>>{{4, 0.04}, {40000, 1e-3}, {4, 4e-7}, {0, 1e-3}}) {
    const std::string e = error_of([&] { write_segy(path, {record(nt, dt)}); });
    EXPECT_NE(e.find("limits.segy"), std::string::npos) << e;
    EXPECT_NE(e.find("32767"), std::string::npos) << e;
    EXPECT_EQ(e.find("0.000000"), std::string::npos) << e;  // %g, not %f
    EXPECT_FALSE(fs::exists(path));
  }
  EXPECT_NE(error_of([&] { write_segy(path, {record(4, 4e-7)}); }).find("dt = 4e-07 s"), std::string::npos);
  // 1.5 us used to be written as 2 us: the file's times were a third off.
  const std::string frac = error_of([&] { write_segy(path, {record(4, 1.5e-6)}); });
  EXPECT_NE(frac.find("not a whole number of microseconds"), std::string::npos) << frac;
  EXPECT_NE(frac.find("use 1e-06 or 2e-06 s"), std::string::npos) << frac;
  EXPECT_FALSE(fs::exists(path));
  write_segy(path, {record(kSegyMaxSamples, double(kSegyMaxIntervalUs) * 1e-6)});
  const SegyTraces t = read_segy(path);
  EXPECT_EQ(t.samples, 32767);
  EXPECT_NEAR(t.dt, 0.032767, 1e-9);
  EXPECT_EQ(segy_sampling_problem(1e-6, 1), "");
  fs::remove_all(dir);
}

// Issue 23: numbers that must be positive name the option (file:line or the flag) and
// the value; only 0 means "automatic dt" in the library, a negative dt is an error.
TEST(Config, NonPositiveTimesAndSpacingsNameTheOption) {
  const Config c = Config::parse_text("[simulation]\ndt = -0.001\ntmax = 0\n[model]\nspacing = 10, -5\n", "g.ini");
  const std::string e1 = error_of([&] { c.get_positive("simulation.dt"); });
  EXPECT_NE(e1.find("g.ini:2: key 'simulation.dt': must be > 0, got '-0.001'"), std::string::npos) << e1;
  EXPECT_NE(error_of([&] { c.get_positive("simulation.tmax"); }).find("g.ini:3"), std::string::npos);
  EXPECT_NE(error_of([&] { c.get_positive_doubles("model.spacing"); }).find("'10, -5'"), std::string::npos);
  EXPECT_NE(error_of([&] { plan_from_config(c); }).find("must be > 0"), std::string::npos);
  Config flags = Config::parse_text("", "<command line>");
  flags.set("simulation.dt", "-0.001", "--dt");
  const std::string e2 = error_of([&] { plan_from_config(flags); });
  EXPECT_NE(e2.find("command line --dt: key 'simulation.dt': must be > 0, got '-0.001'"), std::string::npos) << e2;
  flags.set("simulation.dt", "nan", "--dt");
  EXPECT_NE(error_of([&] { plan_from_config(flags); }).find("got 'nan'"), std::string::npos);
  flags.set("simulation.dt", "auto", "--dt");
  flags.set("simulation.tmax", "0.05", "--tmax");
  flags.set("model.shape", "60x40", "--shape");
  flags.set("simulation.width", "10", "--width");
  const double auto_dt = plan_from_config(flags).options.dt;
  EXPECT_GT(auto_dt, 0.0);
  // The automatic dt is whole microseconds, so the SEG-Y header states it exactly.
  EXPECT_NEAR(auto_dt * 1e6, std::round(auto_dt * 1e6), 1e-6);
  EXPECT_EQ(segy_sampling_problem(auto_dt, 10), "");

  Grid g;
  g.dim = 2;
  g.n = {20, 20, 1};
  g.h = {10, 10, 1};
  const Model m = homogeneous_model(g, 2000.f);
  Options o;
  o.boundary.width = 4;
  o.dt = -1e-3;
  EXPECT_NE(error_of([&] { resolved(m, o); }).find("got -0.001"), std::string::npos);
  o.dt = 0;
  EXPECT_GT(resolved(m, o).dt, 0.0);
}

// Issue 23: a 1e30 m/s cell made the stable dt ~1e-32 s and "1 steps" (int overflow);
// tmax = 1e9 s overflowed the step count into "ricker: dt must be > 0".
TEST(Config, UnphysicalVelocityAndTooManyStepsAreErrors) {
  Grid g;
  g.dim = 2;
  g.n = {20, 30, 1};
  g.h = {10, 10, 1};
  Model m = homogeneous_model(g, 2000.f);
  m.vp[static_cast<std::size_t>(7 * 20 + 3)] = 1e30f;
  const std::string e = error_of([&] { validate(m); });
  EXPECT_NE(e.find("1e+30 m/s at cell (z 3, x 7)"), std::string::npos) << e;
  EXPECT_NE(e.find("100000"), std::string::npos) << e;
  m.vp[static_cast<std::size_t>(7 * 20 + 3)] = 1e5f;
  EXPECT_NO_THROW(validate(m));

  const auto dir = temp_dir();
  std::vector<float> vp(20 * 30, 2000.f);
  vp[7 * 20 + 3] = 1e30f;
  write_floats(dir / "fast.bin", vp);
  const Config fast = Config::parse_text("[model]\nvp = " + (dir / "fast.bin").string() +
                                             "\nshape = 30x20\nspacing = 10\n[simulation]\nwidth = 4\n",
                                         "h.ini");
  const std::string e2 = error_of([&] { plan_from_config(fast); });
  EXPECT_NE(e2.find("(z 3, x 7)"), std::string::npos) << e2;
  EXPECT_NE(e2.find("fast.bin"), std::string::npos) << e2;

  const Config longrun = Config::parse_text("[model]\nshape = 30x20\n[simulation]\nwidth = 4\ntmax = 1e9\n", "i.ini");
  const std::string e3 = error_of([&] { plan_from_config(longrun); });
  EXPECT_NE(e3.find("tmax = 1e+09 s (i.ini:5"), std::string::npos) << e3;
  EXPECT_NE(e3.find("dt = "), std::string::npos) << e3;
  EXPECT_NE(e3.find("automatic"), std::string::npos) << e3;
  EXPECT_NE(e3.find("time steps"), std::string::npos) << e3;
  // The SEG-Y interval is checked when the plan is made, not after the simulation.
  const Config fine = Config::parse_text("[model]\nshape = 30x20\nspacing = 0.001\n[simulation]\nwidth = 4\n", "j.ini");
  const std::string e4 = error_of([&] { plan_from_config(fine); });
  EXPECT_NE(e4.find("1..32767 us"), std::string::npos) << e4;
  EXPECT_NE(e4.find("e-08 s"), std::string::npos) << e4;
  fs::remove_all(dir);
}
