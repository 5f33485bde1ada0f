// The taihu-seismic executable end to end: a tiny run writes SEG-Y + PNGs, bad input
// exits 1 with a one-line error; absorbing layers that do not fit the grid and a run
// that diverges exit 1 with a message saying why, and write no gather (issue 22); bad
// numbers, unphysical velocities and sampling SEG-Y cannot hold fail before the run, and
// a write that fails (file size limit) names the OS's reason and leaves no file (issue 23).
#include <gtest/gtest.h>

#include <csignal>
#include <cstdlib>
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
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

// Runs taihu-seismic with `args` in a child whose files may not grow beyond `max_bytes`
// (RLIMIT_FSIZE, SIGXFSZ ignored: writes fail with EFBIG as on a full disk). Exit status,
// with stderr in *err.
int run_with_file_limit(const std::vector<std::string>& args, rlim_t max_bytes, std::string* err) {
  const fs::path log = fs::temp_directory_path() / ("taihu_cli_limited_err_" + std::to_string(::getpid()));
  const pid_t pid = ::fork();
  if (pid == 0) {
    const int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0 || ::dup2(fd, 2) < 0) ::_exit(126);
    std::signal(SIGXFSZ, SIG_IGN);
    const rlimit limit{max_bytes, max_bytes};
    if (::setrlimit(RLIMIT_FSIZE, &limit) != 0) ::_exit(126);
    std::vector<char*> argv{const_cast<char*>(TAIHU_SEISMIC_EXE)};
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    ::execv(TAIHU_SEISMIC_EXE, argv.data());
    ::_exit(127);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  std::ifstream in(log);
  std::stringstream ss;
  ss << in.rdbuf();
  *err = ss.str();
  fs::remove(log);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// Names of everything in dir (for "nothing under the final name, no temp file").
std::vector<std::string> files_in(const fs::path& dir) {
  std::vector<std::string> names;
  if (fs::exists(dir))
    for (const auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename().string());
  return names;
}
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

// Issue 23: --dt -0.001 ran with the automatic dt; --tmax 1e9 overflowed the step count
// into "ricker: dt must be > 0"; a negative spacing named no option. Each is an error
// naming the flag and the value, before any output is made.
TEST(Cli, BadNumbersNameTheFlagAndTheValue) {
  const fs::path dir = fresh_dir("numbers");
  const std::string base = "run --shape 60x40 --width 10 --dir " + dir.string() + " ";
  struct Case {
    std::string args;
    std::vector<std::string> expect;
  };
  for (const Case& c : std::vector<Case>{
           {"--dt -0.001 --tmax 0.1", {"--dt", "'-0.001'", "must be > 0"}},
           {"--dt 0 --tmax 0.1", {"--dt", "'0'"}},
           {"--dt inf --tmax 0.1", {"--dt", "'inf'"}},
           {"--tmax -1", {"--tmax", "'-1'"}},
           {"--tmax 1e9", {"tmax = 1e+09 s", "--tmax", "dt = 0.000", "automatic", "time steps", "32767"}},
           {"--tmax 0.1 --spacing -10", {"--spacing", "'-10'"}},
           {"--tmax 0.1 --f0 nan", {"--f0", "'nan'"}},
           {"--tmax 0.1 --dt 0.00012345", {"--dt", "0.00012345 s", "whole number of microseconds"}}}) {
    std::string err;
    EXPECT_EQ(run(base + c.args, &err), 1) << c.args;
    for (const auto& part : c.expect) EXPECT_TRUE(contains(err, part)) << c.args << ": " << err;
    EXPECT_FALSE(contains(err, "ricker")) << err;
    EXPECT_FALSE(fs::exists(dir)) << c.args;
  }
}

// Issue 23: one 1e30 m/s cell gave a ~1e-32 s stable dt and "1 steps".
TEST(Cli, UnphysicalVelocityNamesTheCell) {
  const fs::path dir = fresh_dir("vp");
  fs::create_directories(dir);
  std::vector<float> vp(40 * 60, 2000.f);
  vp[7 * 40 + 3] = 1e30f;  // z fastest: z 3, x 7
  const fs::path vp_file = dir / "vp.bin";
  std::ofstream(vp_file, std::ios::binary)
      .write(reinterpret_cast<const char*>(vp.data()), std::streamsize(vp.size() * sizeof(float)));
  std::string err;
  EXPECT_EQ(run("run --vp " + vp_file.string() + " --shape 60x40 --spacing 10 --width 10 --tmax 0.1 --dir " +
                    (dir / "out").string(),
                &err),
            1);
  EXPECT_TRUE(contains(err, "1e+30 m/s at cell (z 3, x 7)")) << err;
  EXPECT_TRUE(contains(err, "vp.bin")) << err;
  EXPECT_FALSE(fs::exists(dir / "out"));
  fs::remove_all(dir);
}

// Issue 23: a dt SEG-Y cannot store (0.08 us here) was found only after the whole
// simulation, and printed as "dt is 0.000000 s". Now before anything runs or is written.
TEST(Cli, SegyIntervalThatDoesNotFitFailsBeforeTheRun) {
  const fs::path dir = fresh_dir("segydt");
  std::string err;
  EXPECT_EQ(run("run --shape 60x40 --spacing 0.001 --width 10 --tmax 1e-5 --dir " + dir.string(), &err), 1);
  EXPECT_TRUE(contains(err, "dt = 8.3")) << err;
  EXPECT_TRUE(contains(err, "e-08 s")) << err;
  EXPECT_TRUE(contains(err, "1..32767 us")) << err;
  EXPECT_FALSE(contains(err, "0.000000")) << err;
  EXPECT_FALSE(contains(err, "shot 1/1")) << err;  // no progress: the run never started
  EXPECT_FALSE(fs::exists(dir)) << "model.png written before the check";
}

// Issue 23: a write that fails (here RLIMIT_FSIZE: EFBIG, as ENOSPC on a full disk)
// said "segyio error 4" / "error closing PNG". Now the OS's reason, and neither the
// final file nor a temporary one is left.
TEST(Cli, FailedWritesNameTheOsReasonAndLeaveNoFile) {
  const std::string reason = std::strerror(EFBIG);  // "File too large"
  const fs::path dir = fresh_dir("fsize");
  fs::create_directories(dir);  // so the directory entry itself is not what the limit hits
  const std::vector<std::string> base = {"run", "--shape", "60x40", "--spacing", "10", "--width", "10",
                                         "--tmax", "0.1", "--dir", dir.string()};
  std::string err;
  // model.png (the first file, ~3 KB) cannot grow past 2 KB.
  std::vector<std::string> png = base;
  png.push_back("--png");
  EXPECT_EQ(run_with_file_limit(png, 2048, &err), 1);
  EXPECT_TRUE(contains(err, "model.png")) << err;
  EXPECT_TRUE(contains(err, reason)) << err;
  EXPECT_TRUE(files_in(dir).empty()) << "left behind: " << files_in(dir).front();
  // shots.segy (60 traces of 121 samples, ~47 KB) cannot grow past 16 KB.
  std::vector<std::string> segy = base;
  segy.push_back("--no-png");
  EXPECT_EQ(run_with_file_limit(segy, 16384, &err), 1);
  EXPECT_TRUE(contains(err, "shots.segy")) << err;
  EXPECT_TRUE(contains(err, reason)) << err;
  EXPECT_FALSE(contains(err, "segyio error")) << err;
  EXPECT_TRUE(files_in(dir).empty()) << "left behind: " << files_in(dir).front();
  // The same run without the limit writes the file (the limit is what failed).
  EXPECT_EQ(run_with_file_limit(segy, RLIM_INFINITY, &err), 0) << err;
  EXPECT_TRUE(fs::exists(dir / "shots.segy"));
  fs::remove_all(dir);
}
