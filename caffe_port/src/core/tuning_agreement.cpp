// The process-wide tuning agreement. See taihu/caffe/tuning_agreement.hpp.
#include "taihu/caffe/tuning_agreement.hpp"

#include <utility>

namespace taihu::caffe {
namespace {
TuningAgreement& g_agreement() {
  static TuningAgreement agree;
  return agree;
}
}  // namespace

void set_tuning_agreement(TuningAgreement agree) { g_agreement() = std::move(agree); }
const TuningAgreement& tuning_agreement() { return g_agreement(); }

}  // namespace taihu::caffe
