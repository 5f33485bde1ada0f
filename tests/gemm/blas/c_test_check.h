/* CHECK(cond, printf-args): the C BLAS tests' assertion. A failed check prints the
   file, line and message and counts into `failures`; the test's main() returns
   non-zero when failures > 0, so one run reports every broken case. */
#ifndef TAIHU_TESTS_C_TEST_CHECK_H
#define TAIHU_TESTS_C_TEST_CHECK_H
#include <stdio.h>

static int failures = 0;

#define CHECK(cond, ...)                                     \
  do {                                                       \
    if (!(cond)) {                                           \
      ++failures;                                            \
      fprintf(stderr, "FAILED %s:%d: ", __FILE__, __LINE__); \
      fprintf(stderr, __VA_ARGS__);                          \
      fputc('\n', stderr);                                   \
    }                                                        \
  } while (0)

#endif
