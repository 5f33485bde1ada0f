// The taihu-seismic executable end to end: a tiny run writes SEG-Y + PNGs, bad input
// exits 1 with a one-line error; absorbing layers that do not fit the grid and a run
// that diverges exit 1 with a message saying why, and write no gather (issue 22).
#include <gtest/gtest.h>

#include <cstdlib>
#include <sys/wait.h>
#include <unistd.h>
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "taihu/stencil/segy.hpp"

namespace fs = std::filesystem;

#ifndef TAIHU_SEISMIC_EXE
#error "TAIHU_SEISMIC_EXE must name the taihu-seismic binary"
#endif

namespace {
int run(const std::string& args) {
  const std::string cmd = std::string(TAIHU_SEISMIC_EXE) + " " + args + " 2>/dev/null";
  const int rc = std::system(cmd.c_str());
  return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

// Exit status, with stderr in *err.
int run(const std::string& args, std::string* err) {
  const fs::path log = fs::temp_directory_path() / ("taihu_cli_err_" + std::to_string(::getpid()));
  const std::string cmd = std::string(TAIHU_SEISMIC_EXE) + " " + args + " 2>" + log.string();
  const int rc = std::system(cmd.c_str());
  std::ifstream in(log);
  std::stringstream ss;
  ss << in.rdbuf();
  *err = ss.str();
  fs::remove(log);
  return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

fs::path fresh_dir(const std::string& tag) {
  const fs::path dir = fs::temp_directory_path() / ("taihu_cli_" + tag + "_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  return dir;
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }
}  // namespace

TEST(Cli, TinyRunWritesSegyAndPngs) {
  const fs::path dir = fs::temp_directory_path() / ("taihu_cli_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  ASSERT_EQ(run("run --shape 101x51 --spacing 10 --tmax 0.2 --shots 300:700:400 --receivers 0:1000:20 --dir " +
                dir.string()),
            0);
  EXPECT_TRUE(fs::exists(dir / "model.png"));
  EXPECT_TRUE(fs::exists(dir / "shot_001.png"));
  EXPECT_TRUE(fs::exists(dir / "shot_002.png"));
  const auto t = taihu::stencil::read_segy((dir / "shots.segy").string());
  EXPECT_EQ(t.traces(), 2u * 51u);
  EXPECT_DOUBLE_EQ(t.source_x.back(), 700.0);
  fs::remove_all(dir);
}

TEST(Cli, BadInputFailsCleanly) {
  EXPECT_EQ(run("run --vp /nonexistent.bin --shape 10x10"), 1);
  EXPECT_EQ(run("run --bogus 3"), 1);
  EXPECT_EQ(run("frobnicate"), 1);
  EXPECT_EQ(run("--help"), 0);
}

// The runs of issue 22 that used to exit 0 with an infinite gather: the default 20-point
// layers overlap on 30 points.
TEST(Cli, LayersThatDoNotFitFailNamingTheWidthAndTheGrid) {
  const fs::path dir = fresh_dir("layers");
  for (const std::string shape : {"100x30", "30x30x30 --kernel reference"}) {
    std::string err;
    EXPECT_EQ(run("run --shape " + shape + " --spacing 10 --tmax 1 --no-png --dir " + dir.string(), &err), 1) << shape;
    EXPECT_TRUE(contains(err, "do not fit the grid")) << err;
    EXPECT_TRUE(contains(err, "width 20")) << err;
    EXPECT_TRUE(contains(err, shape == "100x30" ? "30x100 (z,x)" : "30x30x30 (z,x,y)")) << err;
    EXPECT_TRUE(contains(err, "width <= 15")) << err;
    EXPECT_FALSE(fs::exists(dir / "shots.segy"));
  }
  fs::remove_all(dir);
}

// Layers that just meet (no interior between them) run, and the gather is finite.
TEST(Cli, LayersThatMeetRunAndStayFinite) {
  const fs::path dir = fresh_dir("meet");
  ASSERT_EQ(run("run --shape 100x30 --spacing 10 --tmax 1 --width 15 --no-png --dir " + dir.string()), 0);
  const auto t = taihu::stencil::read_segy((dir / "shots.segy").string());
  ASSERT_GT(t.data.size(), 0u);
  float largest = 0.f;
  for (float v : t.data) {
    ASSERT_TRUE(std::isfinite(v));
    largest = std::max(largest, std::abs(v));
  }
  EXPECT_LT(largest, 1e-3f);  // the direct wave is ~1e-6; the old defect reached inf
  fs::remove_all(dir);
}

// A density that alternates 1 and 1e4 kg/m^3 point by point diverges (the stable dt is
// that of the velocity alone): exit 1 naming the step, and no gather, not even a
// temporary one.
TEST(Cli, DivergingRunFailsAndWritesNoGather) {
  const fs::path dir = fresh_dir("diverge");
  fs::create_directories(dir);
  const long nz = 30, nx = 100;  // --shape nx x nz, z fastest on disk
  std::vector<float> rho(static_cast<std::size_t>(nz * nx));
  for (std::size_t k = 0; k < rho.size(); ++k) rho[k] = (long(k) / nz + long(k) % nz) % 2 ? 1e4f : 1.f;
  const fs::path rho_file = dir / "rho.bin";
  std::ofstream(rho_file, std::ios::binary)
      .write(reinterpret_cast<const char*>(rho.data()), std::streamsize(rho.size() * sizeof(float)));
  std::string err;
  EXPECT_EQ(run("run --shape 100x30 --spacing 10 --tmax 1 --width 10 --physics density --rho " + rho_file.string() +
                    " --no-png --dir " + dir.string(),
                &err),
            1);
  EXPECT_TRUE(contains(err, "diverged at step")) << err;
  EXPECT_TRUE(contains(err, "stable")) << err;
  for (const auto& e : fs::directory_iterator(dir))
    EXPECT_EQ(e.path().filename(), "rho.bin") << "left behind: " << e.path();
  fs::remove_all(dir);
}
