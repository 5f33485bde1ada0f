// Damaged tune logs and failed writes: a torn last line (a crash or a full disk in the
// middle of an append) is skipped with its file:line, resuming starts a new line
// instead of gluing the next record onto the fragment, a failed append leaves no
// fragment, and a failed atomic write leaves no temp file and says why (strerror).
// Full disks are made with RLIMIT_FSIZE in a forked child (SIGXFSZ ignored: the write
// fails with EFBIG) and with /dev/full (ENOSPC).
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include "taihu/arch/error.hpp"
#include "taihu/autotune/parser.hpp"
#include "taihu/autotune/records.hpp"
#include "taihu/autotune/tuner.hpp"

namespace ta = taihu::autotune;
namespace fs = std::filesystem;

namespace {

fs::path scratch(const std::string& name) {
  fs::path d = fs::temp_directory_path() / ("taihu-logdmg-" + std::to_string(::getpid()) + "-" + name);
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

ta::Record record(int trial, double seconds) {
  ta::Record r;
  r.op = "gemm";
  r.spec_hash = "0123456789abcdef";
  r.shape = "M=8,N=8,K=8";
  r.isa = "avx2";
  r.threads = 1;
  r.backend = "cpp";
  r.schedule = {{"tile m", std::to_string(trial)}};
  r.median_s = seconds;
  r.gflops = 1;
  r.trial = trial;
  return r;
}

// Runs `body` in a child whose files may grow to `limit` bytes; returns its exit code
// (the body returns it), or -1 if the child died from a signal.
int in_child_with_fsize(rlim_t limit, const std::function<int()>& body) {
  std::fflush(nullptr);
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::signal(SIGXFSZ, SIG_IGN);
    rlimit r{limit, limit};
    if (::setrlimit(RLIMIT_FSIZE, &r) != 0) ::_exit(90);
    ::_exit(body());
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

}  // namespace

TEST(AutotuneLogDamage, TornLastLineIsSkippedWithItsPlace) {
  const fs::path d = scratch("torn");
  const std::string log = (d / "t.jsonl").string();
  const std::string third = ta::to_json_line(record(3, 3e-3));
  {
    std::ofstream o(log);
    o << ta::to_json_line(record(1, 1e-3)) << "\n" << ta::to_json_line(record(2, 2e-3)) << "\n" << third.substr(0, third.size() / 2);
  }
  std::vector<std::string> skipped;
  const auto recs = ta::load_log(log, &skipped);
  ASSERT_EQ(recs.size(), 2u);
  EXPECT_EQ(recs[1].trial, 2);
  ASSERT_EQ(skipped.size(), 1u);
  EXPECT_EQ(skipped[0].rfind(log + ":3: torn last line", 0), 0u) << skipped[0];
  // A whole record that only lacks its final newline is read.
  {
    std::ofstream o(log);
    o << ta::to_json_line(record(1, 1e-3)) << "\n" << third;
  }
  skipped.clear();
  EXPECT_EQ(ta::load_log(log, &skipped).size(), 2u);
  EXPECT_TRUE(skipped.empty());
  // A log of only a torn first record is an empty log, not an error.
  {
    std::ofstream o(log);
    o << third.substr(0, 20);
  }
  EXPECT_TRUE(ta::load_log(log, &skipped).empty());
  fs::remove_all(d);
}

TEST(AutotuneLogDamage, MalformedMiddleLineIsSkippedButGarbageIsNotALog) {
  const fs::path d = scratch("middle");
  const std::string log = (d / "m.jsonl").string();
  {
    std::ofstream o(log);
    o << ta::to_json_line(record(1, 1e-3)) << "\n{\"format\":\"taihu-tune/1\",\"op\n" << ta::to_json_line(record(2, 5e-4)) << "\n";
  }
  std::vector<std::string> skipped;
  const auto recs = ta::load_log(log, &skipped);
  ASSERT_EQ(recs.size(), 2u);
  ASSERT_EQ(skipped.size(), 1u);
  EXPECT_EQ(skipped[0].rfind(log + ":2: not valid JSON", 0), 0u) << skipped[0];
  EXPECT_DOUBLE_EQ(ta::best_records(recs).at(0).median_s, 5e-4);
  // A file with no record at all and bad lines (a spec given as a log) is refused.
  {
    std::ofstream o(log);
    o << "operator gemm\ndim M, N, K\n";
  }
  try {
    ta::load_log(log);
    FAIL() << "a spec file read as a log";
  } catch (const taihu::Error& e) {
    EXPECT_EQ(std::string(e.what()).rfind(log + ": not a taihu-tune log (" + log + ":1: not valid JSON", 0), 0u) << e.what();
  }
  fs::remove_all(d);
}

TEST(AutotuneLogDamage, ResumingATornLogStartsANewLine) {
  const fs::path d = scratch("resume");
  const std::string log = (d / "r.jsonl").string();
  ta::Problem p(ta::parse_spec_file(std::string(TAIHU_DSL_DIR) + "/gemm.tdsl"), ta::parse_shape("M=64,N=64,K=64"));
  ta::Space s(p);
  ta::TuneOptions o;
  o.log_path = log;
  o.max_trials = 3;
  o.budget_s = 0;
  auto fake = [](const ta::Point& pt) {
    double t = 1e-3;
    for (int v : pt) t += 1e-4 * v;
    return t;
  };
  ta::tune(p, s, o, fake);
  // Tear the last record in half, as a kill or a full disk mid-append would.
  std::string text = slurp(log);
  ASSERT_EQ(std::count(text.begin(), text.end(), '\n'), 3);
  text.resize(text.size() - 40);
  { std::ofstream(log, std::ios::trunc) << text; }
  std::vector<std::string> skipped;
  ASSERT_EQ(ta::load_log(log, &skipped).size(), 2u);
  ASSERT_EQ(skipped.size(), 1u);
  const auto second = ta::tune(p, s, o, fake);
  EXPECT_EQ(second.resumed, 2);
  // The new records start on their own lines: 2 old + 3 new, the fragment (line 3) skipped.
  skipped.clear();
  const auto all = ta::load_log(log, &skipped);
  EXPECT_EQ(all.size(), 5u);
  ASSERT_EQ(skipped.size(), 1u);
  EXPECT_EQ(skipped[0].rfind(log + ":3: not valid JSON", 0), 0u) << skipped[0];
  EXPECT_EQ(ta::best_records(all).size(), 1u);
  fs::remove_all(d);
}

TEST(AutotuneLogDamage, FailedAppendSaysWhyAndLeavesNoFragment) {
  // /dev/full: every write fails with ENOSPC.
  try {
    ta::append_record("/dev/full", record(1, 1e-3));
    FAIL() << "append to /dev/full succeeded";
  } catch (const taihu::Error& e) {
    EXPECT_EQ(std::string(e.what()), "write to log '/dev/full' failed: No space left on device");
  }
  // A file-size limit in the middle of the record: the write is cut short, then EFBIG.
  const fs::path d = scratch("append");
  const std::string log = (d / "a.jsonl").string();
  ta::append_record(log, record(1, 1e-3));
  const std::string before = slurp(log);
  const int rc = in_child_with_fsize(before.size() + 30, [&] {
    try {
      ta::append_record(log, record(2, 2e-3));
    } catch (const taihu::Error& e) {
      return std::string(e.what()) == "write to log '" + log + "' failed: File too large" ? 0 : 2;
    }
    return 1;
  });
  EXPECT_EQ(rc, 0);
  EXPECT_EQ(slurp(log), before);  // the partial line was cut back off
  fs::remove_all(d);
}

TEST(AutotuneLogDamage, FailedAtomicWriteRemovesItsTempFile) {
  const fs::path d = scratch("atomic");
  const std::string out = (d / "best.jsonl").string();
  ta::write_lines_atomic(out, {"old"});
  const std::vector<std::string> lines(40, std::string(100, 'x'));
  const int rc = in_child_with_fsize(1000, [&] {
    try {
      ta::write_lines_atomic(out, lines);
    } catch (const taihu::Error& e) {
      return std::string(e.what()).find("cannot write '" + out + "': File too large") != std::string::npos ? 0 : 2;
    }
    return 1;
  });
  EXPECT_EQ(rc, 0);
  EXPECT_EQ(slurp(out), "old\n");  // the old file stands
  std::vector<std::string> left;
  for (const auto& e : fs::directory_iterator(d)) left.push_back(e.path().filename().string());
  EXPECT_EQ(left, std::vector<std::string>{"best.jsonl"});  // no best.jsonl.tmp.PID
  // A directory that cannot be written names the OS's reason.
  try {
    ta::write_lines_atomic((d / "missing" / "x.jsonl").string(), {"a"});
    FAIL();
  } catch (const taihu::Error& e) {
    EXPECT_NE(std::string(e.what()).find("No such file or directory"), std::string::npos) << e.what();
  }
  fs::remove_all(d);
}
