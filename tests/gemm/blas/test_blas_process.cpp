// libtaihu_blas.so as a process meets it, each case where a library can stop a program
// from computing:
//   DefaultHandlers  with no xerbla_/cblas_xerbla of the program's own, taihu's
//                    defaults print the reference wording and return (no exit).
//   Fork             a child forked after a 2-thread GEMM multiplies at once, on 2
//                    threads, and gets the right product (libgomp's pool is not
//                    fork-safe: without taihu's pthread_atfork handling the child waits
//                    forever; alarm() turns a hang into a failure).
//   BadEnvironment   with each bad TAIHU_* value (a fresh process each, since values
//                    are read once) every GEMM entry point still computes the right
//                    product and the process prints exactly one warning.
// This binary is its own probe: with TAIHU_BLAS_TEST_PROBE=1 it only multiplies
// through the ABI and exits (before gtest starts), 0 when every product was right.
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "taihu_cblas.h"

extern char** environ;

namespace {

// C = A * B (column major, m x k times k x n) through `call`, checked against a naive
// loop in double; small integers, so every product is exact.
template <typename T, typename Call>
bool product_is_right(int m, int n, int k, Call&& call) {
  std::vector<T> a(std::size_t(m) * k), b(std::size_t(k) * n), c(std::size_t(m) * n, T(-7));
  for (std::size_t i = 0; i < a.size(); ++i) a[i] = T(int(i * 7 % 11) - 5);
  for (std::size_t i = 0; i < b.size(); ++i) b[i] = T(int(i * 5 % 13) - 6);
  call(a.data(), b.data(), c.data());
  for (int j = 0; j < n; ++j) {
    for (int i = 0; i < m; ++i) {
      double want = 0;
      for (int p = 0; p < k; ++p)
        want += double(a[std::size_t(p) * m + i]) * double(b[std::size_t(j) * k + p]);
      if (double(c[std::size_t(j) * m + i]) != want) return false;
    }
  }
  return true;
}

bool sgemm_cblas_right(int m, int n, int k) {
  return product_is_right<float>(m, n, k, [&](const float* a, const float* b, float* c) {
    cblas_sgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.0f, a, m, b, k, 0.0f, c, m);
  });
}

bool dgemm_cblas_right(int m, int n, int k) {
  return product_is_right<double>(m, n, k, [&](const double* a, const double* b, double* c) {
    cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.0, a, m, b, k, 0.0, c, m);
  });
}

bool sgemm_fortran_right(int m, int n, int k) {
  return product_is_right<float>(m, n, k, [&](const float* a, const float* b, float* c) {
    const float one = 1, zero = 0;
    sgemm_("N", "N", &m, &n, &k, &one, a, &m, b, &k, &zero, c, &m, 1, 1);
  });
}

bool dgemm_fortran_right(int m, int n, int k) {
  return product_is_right<double>(m, n, k, [&](const double* a, const double* b, double* c) {
    const double one = 1, zero = 0;
    dgemm_("N", "N", &m, &n, &k, &one, a, &m, b, &k, &zero, c, &m, 1, 1);
  });
}

// The probe (see the file comment): two calls of each entry point, large enough to
// run on several threads.
const bool g_probe = [] {
  if (std::getenv("TAIHU_BLAS_TEST_PROBE") == nullptr) return false;
  bool ok = true;
  for (int round = 0; round < 2; ++round) {
    ok = sgemm_cblas_right(150, 130, 120) && ok;
    ok = dgemm_cblas_right(150, 130, 120) && ok;
    ok = sgemm_fortran_right(70, 50, 40) && ok;
    ok = dgemm_fortran_right(70, 50, 40) && ok;
  }
  std::printf("probe: products %s\n", ok ? "right" : "WRONG");
  std::fflush(stdout);
  std::_Exit(ok ? 0 : 1);
}();

// ---------------------------------------------------------------- default handlers

TEST(DefaultHandlers, XerblaPrintsTheReferenceWordingAndReturns) {
  std::vector<float> c(4, 42.0f);
  const float a[4] = {}, b[4] = {}, one = 1, zero = 0;
  const int two = 2, one_i = 1;
  testing::internal::CaptureStderr();
  sgemm_("N", "N", &two, &two, &two, &one, a, &one_i, b, &two, &zero, c.data(), &two, 1, 1);
  const std::string text = testing::internal::GetCapturedStderr();
  EXPECT_EQ(text, " ** On entry to SGEMM  parameter number  8 had an illegal value\n");
  for (float x : c) EXPECT_EQ(x, 42.0f);
}

TEST(DefaultHandlers, CblasXerblaPrintsNetlibsWordingAndReturns) {
  std::vector<double> c(4, 42.0);
  const double a[4] = {}, b[4] = {};
  testing::internal::CaptureStderr();
  cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, -1, 2, 2, 1.0, a, 2, b, 2, 0.0,
              c.data(), 2);
  const std::string text = testing::internal::GetCapturedStderr();
  // Row major: netlib's info is 5 for M, and its cblas_xerbla prints the position, 4.
  EXPECT_EQ(text, "Parameter 4 to routine cblas_dgemm was incorrect\nM = -1, must be >= 0\n");
  for (double x : c) EXPECT_EQ(x, 42.0);
}

// ---------------------------------------------------------------- fork

TEST(Fork, ChildMultipliesAfterA2ThreadGemm) {
  taihu_set_num_threads(2);
  ASSERT_TRUE(sgemm_cblas_right(256, 256, 256));  // opens the OpenMP pool (2 threads)
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    alarm(60);  // a hang (the child waiting for the parent's pool) becomes SIGALRM
    const bool ok = taihu_get_num_threads() == 2 && sgemm_cblas_right(256, 256, 256) &&
                    dgemm_cblas_right(200, 180, 160);
    std::_Exit(ok ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  EXPECT_FALSE(WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM)
      << "the child's GEMM hung (killed by SIGALRM after 60 s)";
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
      << "the child's product was wrong or it died, status " << status;
  // The parent's next multi-threaded GEMM still works (its pool is rebuilt).
  EXPECT_TRUE(sgemm_cblas_right(256, 256, 256));
  taihu_set_num_threads(0);
}

// ---------------------------------------------------------------- bad environment

struct ProbeRun {
  int status = -1;
  std::string output;  // stdout and stderr
};

// Runs this binary as the probe with `assignment` ("NAME=value") added to the
// environment (and TAIHU_VERBOSE removed, so only warnings print).
ProbeRun run_probe(const std::string& assignment) {
  std::vector<std::string> env = {"TAIHU_BLAS_TEST_PROBE=1", assignment};
  const std::string name = assignment.substr(0, assignment.find('=') + 1);
  for (char** e = environ; *e != nullptr; ++e) {
    if (std::strncmp(*e, name.c_str(), name.size()) != 0 &&
        std::strncmp(*e, "TAIHU_VERBOSE=", 14) != 0)
      env.emplace_back(*e);
  }
  std::vector<char*> envp;
  for (auto& s : env) envp.push_back(s.data());
  envp.push_back(nullptr);
  int fds[2];
  ProbeRun r;
  if (pipe(fds) != 0) return r;
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, fds[1], 1);
  posix_spawn_file_actions_adddup2(&actions, fds[1], 2);
  posix_spawn_file_actions_addclose(&actions, fds[0]);
  char self[] = "/proc/self/exe";
  char* argv[] = {self, nullptr};
  pid_t pid = -1;
  const int rc = posix_spawn(&pid, "/proc/self/exe", &actions, nullptr, argv, envp.data());
  posix_spawn_file_actions_destroy(&actions);
  close(fds[1]);
  if (rc == 0) {
    char buf[4096];
    ssize_t got;
    while ((got = read(fds[0], buf, sizeof buf)) > 0) r.output.append(buf, std::size_t(got));
    int status = 0;
    waitpid(pid, &status, 0);
    r.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }
  close(fds[0]);
  return r;
}

int count(const std::string& text, const std::string& what) {
  int n = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1))
    ++n;
  return n;
}

class BadEnvironment : public testing::TestWithParam<const char*> {};

TEST_P(BadEnvironment, ComputesAndWarnsOnce) {
  const std::string assignment = GetParam();
  const ProbeRun r = run_probe(assignment);
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("probe: products right"), std::string::npos) << r.output;
  EXPECT_EQ(count(r.output, "taihu: warning:"), 1) << r.output;
  const std::string name = assignment.substr(0, assignment.find('='));
  EXPECT_NE(r.output.find("taihu: warning: " + name), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("taihu_blas:"), std::string::npos) << "a call failed: " << r.output;
}

INSTANTIATE_TEST_SUITE_P(EachVariable, BadEnvironment,
                         testing::Values("TAIHU_NUM_THREADS=-3", "TAIHU_NUM_THREADS=many",
                                         "TAIHU_ISA=avx9", "TAIHU_GEMM_BLOCKS=garbage",
                                         "TAIHU_GEMM_BLOCKS=1,2", "TAIHU_GEMM_THREADING=diagonal",
                                         "TAIHU_GEMM_ORDER=c", "TAIHU_GEMM_SGEMM_TILE=99x99",
                                         "TAIHU_GEMM_DGEMM_TILE=1x1"));

TEST(GoodEnvironment, ProbePrintsNoWarning) {
  const ProbeRun r = run_probe("TAIHU_NUM_THREADS=2");
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_EQ(count(r.output, "warning"), 0) << r.output;
}

}  // namespace
