// The taihu-seismic executable end to end: a tiny run writes SEG-Y + PNGs, bad input
// exits 1 with a one-line error.
#include <gtest/gtest.h>

#include <cstdlib>
#include <sys/wait.h>
#include <unistd.h>
#include <filesystem>
#include <string>

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
