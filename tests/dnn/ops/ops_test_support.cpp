// Helpers for the dnn operator tests (see ops_test_support.hpp).
#include "ops_test_support.hpp"

#include <cstdlib>

#include "taihu/arch/cpu_features.hpp"
#include "taihu/arch/isa.hpp"

namespace ops_test {

void expect_gradient(std::vector<double>& v, const std::vector<double>& analytic,
                     const std::function<double()>& objective, const std::string& what, double tol,
                     double step) {
  ASSERT_EQ(v.size(), analytic.size()) << what;
  int failures = 0;
  for (std::size_t i = 0; i < v.size() && failures < 5; ++i) {
    const double saved = v[i];
    v[i] = saved + step;
    const double fp = objective();
    v[i] = saved - step;
    const double fm = objective();
    v[i] = saved;
    const double num = (fp - fm) / (2 * step);
    if (!(std::fabs(num - analytic[i]) <= tol * (1 + std::fabs(num)))) {
      ADD_FAILURE() << what << "[" << i << "]: analytic " << analytic[i] << ", numeric " << num;
      ++failures;
    }
  }
}

}  // namespace ops_test
