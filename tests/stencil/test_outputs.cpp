// Numeric outputs (issue 22): .npy files that numpy reads back as written (write_npy),
// wavefield snapshots of any shot asked for equal to the same run done in-process, and
// taihu-seismic migrate's images (.npy, SEG-Y) consistent with one another, the final
// image checked against a Laplacian numpy computes itself; migrate's bad input errors.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "taihu/stencil/config.hpp"
#include "taihu/stencil/npy.hpp"
#include "taihu/stencil/run_plan.hpp"
#include "taihu/stencil/segy.hpp"

#ifndef TAIHU_SEISMIC_EXE
#error "TAIHU_SEISMIC_EXE must name the taihu-seismic binary"
#endif
#ifndef TAIHU_NUMPY_PYTHON
#define TAIHU_NUMPY_PYTHON "python3"
#endif

namespace fs = std::filesystem;
namespace ts = taihu::stencil;

namespace {

// Runs a shell command; exit status, with stdout+stderr in *out.
int shell(const std::string& cmd, std::string* out) {
  const fs::path log = fs::temp_directory_path() / ("taihu_outputs_" + std::to_string(::getpid()));
  const int rc = std::system((cmd + " >" + log.string() + " 2>&1").c_str());
  std::ifstream in(log);
  std::stringstream ss;
  ss << in.rdbuf();
  *out = ss.str();
  fs::remove(log);
  return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

bool have_numpy() {
  std::string out;
  return shell(std::string(TAIHU_NUMPY_PYTHON) + " -c 'import numpy'", &out) == 0;
}

// Runs a numpy script (argv[1..] = args); returns its stdout.
std::string numpy(const std::string& script, const std::vector<std::string>& args) {
  const fs::path py = fs::temp_directory_path() / ("taihu_outputs_" + std::to_string(::getpid()) + ".py");
  std::ofstream(py) << "import sys, numpy as np\n" << script;
  std::string cmd = std::string(TAIHU_NUMPY_PYTHON) + " " + py.string();
  for (const auto& a : args) cmd += " '" + a + "'";
  std::string out;
  const int rc = shell(cmd, &out);
  fs::remove(py);
  EXPECT_EQ(rc, 0) << out;
  return out;
}

fs::path fresh_dir(const std::string& tag) {
  const fs::path d = fs::temp_directory_path() / ("taihu_outputs_" + tag + "_" + std::to_string(::getpid()));
  fs::remove_all(d);
  return d;
}

}  // namespace

TEST(NpyWriter, NumpyReadsShapeDtypeAndValues) {
  if (!have_numpy()) GTEST_SKIP() << TAIHU_NUMPY_PYTHON << " has no numpy";
  const fs::path dir = fresh_dir("npy");
  fs::create_directories(dir);
  std::vector<float> v(3 * 5 * 7);
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = float(i) * 0.25f - 3.f;
  for (const auto& shape : std::vector<std::vector<long>>{{105}, {15, 7}, {3, 5, 7}}) {
    const std::string path = (dir / "a.npy").string();
    ts::write_npy(path, v.data(), shape);
    std::string dims;
    for (long n : shape) dims += std::to_string(n) + " ";
    // numpy's own reader; every value against the formula, C order.
    const std::string out = numpy(
        "a = np.load(sys.argv[1])\n"
        "print(a.dtype.str, ' '.join(map(str, a.shape)), int(a.flags['C_CONTIGUOUS']),\n"
        "      int(np.array_equal(a.ravel(), np.arange(a.size, dtype=np.float32) * 0.25 - 3)))\n",
        {path});
    EXPECT_EQ(out, "<f4 " + dims.substr(0, dims.size() - 1) + " 1 1\n");
  }
  EXPECT_FALSE(fs::exists(dir / ("a.npy.tmp." + std::to_string(::getpid()))));
  fs::remove_all(dir);
}

// Shot 2's snapshot at step 40, written by the CLI, equals the pressure of the same run
// stepped in-process (ts::Propagator from the same plan), value for value; the PNG sits
// beside it; shot 1 (not asked for) writes none.
TEST(SnapshotNpy, AnyShotMatchesInProcessRun) {
  if (!have_numpy()) GTEST_SKIP() << TAIHU_NUMPY_PYTHON << " has no numpy";
  const fs::path dir = fresh_dir("snap");
  const std::string flags = "--shape 90x50 --spacing 10 --tmax 0.1 --width 10 --shots 200:600:400 "
                            "--snapshot-every 40 --snapshot-shots 2";
  std::string out;
  ASSERT_EQ(shell(std::string(TAIHU_SEISMIC_EXE) + " run " + flags + " --dir " + dir.string(), &out), 0) << out;
  const fs::path npy = dir / "shot_002_snapshot_00040.npy";
  ASSERT_TRUE(fs::exists(npy)) << out;
  EXPECT_TRUE(fs::exists(dir / "shot_002_snapshot_00040.png"));
  EXPECT_FALSE(fs::exists(dir / "shot_001_snapshot_00040.npy"));

  ts::Config c = ts::Config::parse_text("", "<test>");
  c.set("model.shape", "90x50");
  c.set("model.spacing", "10");
  c.set("simulation.tmax", "0.1");
  c.set("simulation.width", "10");
  c.set("acquisition.shots", "200:600:400");
  const ts::RunPlan plan = ts::plan_from_config(c);
  ts::Propagator prop(plan.model, plan.options);
  const ts::PointStencil src = ts::point_stencil(plan.model.grid, plan.shots[1].source);
  for (int it = 0; it < 40; ++it) prop.step(&src, plan.shots[1].wavelet[std::size_t(it)]);
  const fs::path expect = dir / "expected.txt";
  {
    std::ofstream f(expect);
    f.precision(9);
    const ts::Grid& g = plan.model.grid;
    for (long x = 0; x < g.n[1]; ++x)
      for (long z = 0; z < g.n[0]; ++z) f << prop.current().at(z, x) << "\n";
  }
  const std::string res = numpy(
      "a = np.load(sys.argv[1]); e = np.loadtxt(sys.argv[2], dtype=np.float64)\n"
      "print(' '.join(map(str, a.shape)), float(np.abs(a.ravel() - e).max() / np.abs(e).max()), float(np.abs(e).max()))\n",
      {npy.string(), expect.string()});
  std::istringstream in(res);
  long nx = 0, nz = 0;
  double rel = 1, peak = 0;
  in >> nx >> nz >> rel >> peak;
  EXPECT_EQ(nx, 90);
  EXPECT_EQ(nz, 50);
  EXPECT_GT(peak, 0);
  EXPECT_LT(rel, 1e-6);  // the text round trip keeps 9 digits
  fs::remove_all(dir);
}

// migrate on a small built-in model: image.npy == -laplacian(image_compensated.npy) as
// numpy computes it, image.segy's traces == image.npy, the compensation ==
// xcorr / (illumination + 1e-3 max), and the PNGs exist.
TEST(MigrateCli, ImagesAgreeWithEachOther) {
  if (!have_numpy()) GTEST_SKIP() << TAIHU_NUMPY_PYTHON << " has no numpy";
  const fs::path dir = fresh_dir("migrate");
  std::string out;
  ASSERT_EQ(shell(std::string(TAIHU_SEISMIC_EXE) +
                      " migrate --shape 100x60 --spacing 10 --tmax 0.6 --f0 15 --width 12 --shots 300:700:400 "
                      "--smooth 80 --mute 0 --checkpoint-memory 4 --dir " + dir.string(), &out), 0) << out;
  EXPECT_TRUE(out.find("checkpoints every") != std::string::npos ||  // 4 MiB < all snapshots
              out.find("binomial checkpointing") != std::string::npos) << out;
  for (const char* f : {"image.npy", "image.png", "image.segy", "image_xcorr.npy", "image_xcorr.png",
                        "image_compensated.npy", "illumination.npy"})
    EXPECT_TRUE(fs::exists(dir / f)) << f;
  const std::string res = numpy(
      "d = sys.argv[1]\n"
      "img = np.load(d + '/image.npy'); c = np.load(d + '/image_compensated.npy').astype(np.float64)\n"
      "x = np.load(d + '/image_xcorr.npy').astype(np.float64); s = np.load(d + '/illumination.npy').astype(np.float64)\n"
      "p = np.pad(c, 1); h = 10.0\n"
      "lap = (p[2:, 1:-1] - 2 * c + p[:-2, 1:-1]) / h**2 + (p[1:-1, 2:] - 2 * c + p[1:-1, :-2]) / h**2\n"
      "e1 = np.abs(img + lap).max() / np.abs(lap).max()\n"
      "comp = x / (s + 1e-3 * s.max())\n"
      "e2 = np.abs(c - comp).max() / np.abs(comp).max()\n"
      "print(' '.join(map(str, img.shape)), e1, e2, float(np.abs(img).max()))\n",
      {dir.string()});
  std::istringstream in(res);
  long nx = 0, nz = 0;
  double e1 = 1, e2 = 1, peak = 0;
  in >> nx >> nz >> e1 >> e2 >> peak;
  EXPECT_EQ(nx, 100);
  EXPECT_EQ(nz, 60);
  EXPECT_LT(e1, 1e-5);
  EXPECT_LT(e2, 1e-5);
  EXPECT_GT(peak, 0);
  const ts::SegyTraces t = ts::read_segy((dir / "image.segy").string());
  ASSERT_EQ(t.traces(), 100u);
  ASSERT_EQ(t.samples, 60);
  EXPECT_NEAR(t.group_x[7], 70.0, 1e-9);
  const std::string sums = numpy("a = np.load(sys.argv[1]).astype(np.float64); print(repr(a[7].sum()), repr(a[93, 41]))\n",
                                 {(dir / "image.npy").string()});
  double sum7 = 0, v = 0;
  std::istringstream(sums) >> sum7 >> v;
  double seg7 = 0;
  for (int z = 0; z < 60; ++z) seg7 += t.data[7 * 60 + std::size_t(z)];
  EXPECT_NEAR(seg7, sum7, 1e-9 * std::abs(sum7) + 1e-30);
  EXPECT_EQ(t.data[93 * 60 + 41], float(v));
  fs::remove_all(dir);
}

TEST(MigrateCli, BadInputIsAClearError) {
  const fs::path dir = fresh_dir("migrate_bad");
  std::string out;
  const std::string exe = TAIHU_SEISMIC_EXE;
  const std::string small = " migrate --shape 100x60 --spacing 10 --tmax 0.6 --width 12 --dir " + dir.string();
  EXPECT_EQ(shell(exe + small + " --checkpoint-memory 0.05", &out), 1);
  EXPECT_NE(out.find("checkpoint memory budget of 0.05 MiB is too small"), std::string::npos) << out;
  EXPECT_NE(out.find("the least is one checkpoint ("), std::string::npos) << out;
  EXPECT_NE(out.find("+ one snapshot ("), std::string::npos) << out;
  EXPECT_FALSE(fs::exists(dir / "image.segy"));
  EXPECT_EQ(shell(exe + small + " --checkpoint-memory -3", &out), 1);
  EXPECT_NE(out.find("migration.checkpoint_memory"), std::string::npos) << out;
  EXPECT_EQ(shell(exe + small + " --data " + (dir / "missing.segy").string(), &out), 1);
  EXPECT_NE(out.find("missing.segy"), std::string::npos) << out;
  // Observed gathers whose receivers lie outside the model: named by trace.
  fs::create_directories(dir);
  ts::ShotRecord r;
  r.nt = 100;
  r.dt = 0.001;
  r.source = {20, 300, 0};
  r.receivers = {{20, 100, 0}, {20, 5000, 0}};
  r.data.assign(200, 0.f);
  ts::write_segy((dir / "far.segy").string(), {r});
  EXPECT_EQ(shell(exe + small + " --data " + (dir / "far.segy").string(), &out), 1);
  EXPECT_NE(out.find("trace 2"), std::string::npos) << out;
  EXPECT_NE(out.find("receiver"), std::string::npos) << out;
  fs::remove_all(dir);
}

namespace {
std::string file_bytes(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}
}  // namespace

// --geometry: a field file's trace headers drive the modelling. The "field file" here is
// an irregular survey taihu-seismic wrote, with a header it never writes (CDP, bytes
// 21-24) patched in per trace; modelling from its headers gives the same file, byte for
// byte (same traces, same headers, same samples).
TEST(GeometryCli, HeadersDriveTheRunAndAreCopied) {
  const fs::path dir = fresh_dir("geometry");
  const std::string exe = TAIHU_SEISMIC_EXE;
  const std::string model = " --shape 90x50 --spacing 10 --width 10 --no-png";
  std::string out;
  ASSERT_EQ(shell(exe + " run" + model + " --tmax 0.15 --shots 205.5,633 --receivers 12,87.25,300,455,801.5 "
                  "--source-depth 33 --receiver-depth 41.5 --dir " + (dir / "field").string(), &out), 0) << out;
  const fs::path field = dir / "field" / "shots.segy";
  {
    std::fstream f(field, std::ios::binary | std::ios::in | std::ios::out);
    const ts::SegyTraces t = ts::read_segy(field.string());
    for (std::size_t k = 0; k < t.traces(); ++k) {
      f.seekp(std::streamoff(3600 + k * (240 + 4 * std::size_t(t.samples)) + 20));
      const unsigned char cdp[4] = {0, 0, 0x12, static_cast<unsigned char>(0x30 + k)};
      f.write(reinterpret_cast<const char*>(cdp), 4);
    }
  }
  ASSERT_EQ(shell(exe + " run" + model + " --geometry " + field.string() + " --dir " + (dir / "synthetic").string(), &out),
            0) << out;
  EXPECT_NE(out.find("2 shot(s)"), std::string::npos) << out;
  const std::string a = file_bytes(field), b = file_bytes(dir / "synthetic" / "shots.segy");
  ASSERT_EQ(a.size(), b.size());
  EXPECT_TRUE(a == b) << "the synthetic differs from the field file";
  // Bad input: a receiver outside the model, no coordinates at all, keys that conflict.
  ASSERT_EQ(shell(exe + " run --shape 60x50 --spacing 10 --width 10 --no-png --geometry " + field.string() +
                  " --dir " + (dir / "small").string(), &out), 1);
  EXPECT_NE(out.find("trace 5 (field record 1): the receiver at x 801.50"), std::string::npos) << out;
  EXPECT_NE(out.find("outside the model"), std::string::npos) << out;
  ts::ShotRecord zero;
  zero.nt = 50;
  zero.dt = 0.001;
  zero.receivers = {{0, 0, 0}, {0, 0, 0}};
  zero.data.assign(100, 0.f);
  ts::write_segy((dir / "zero.segy").string(), {zero});
  ASSERT_EQ(shell(exe + " run" + model + " --geometry " + (dir / "zero.segy").string() + " --dir " +
                  (dir / "z").string(), &out), 1);
  EXPECT_NE(out.find("no geometry to model"), std::string::npos) << out;
  ASSERT_EQ(shell(exe + " run" + model + " --shots 100 --geometry " + field.string() + " --dir " +
                  (dir / "c").string(), &out), 1);
  EXPECT_NE(out.find("conflicts with"), std::string::npos) << out;
  fs::remove_all(dir);
}
