// The serial rule (dnn/src/conv/conv_threads.hpp): a convolution below the threshold
// runs on one thread whatever the configured count, and the count comes back after
// the call; at or above it, or with one thread configured, nothing changes. The suite
// runs with the rule off (conv_test_support.cpp); these tests set it themselves.
#include <gtest/gtest.h>

#include <cmath>
#include <span>
#include <vector>

#include "conv_test_support.hpp"
#include "conv_threads.hpp"
#include "taihu/arch/error.hpp"
#include "taihu/arch/threads.hpp"
#include "taihu/dnn/conv.hpp"
#include "taihu/dnn/tuning_records.hpp"

namespace {

using conv_test::random_vector;
using taihu::dnn::ConvDesc;
using taihu::dnn::ConvDirection;
using taihu::dnn::Convolution;
namespace conv = taihu::dnn::conv;

class ConvCallThreads : public conv_test::ConvTest {
 protected:
  void SetUp() override {
    conv_test::ConvTest::SetUp();
    previous_ = conv::set_serial_below_flops(4.0e6);
    taihu::arch::set_num_threads(2);
  }
  void TearDown() override {
    conv::set_serial_below_flops(previous_);
    taihu::arch::set_num_threads(1);
  }
  double previous_ = 0;
};

// LeNet conv2 at batch 1 (3.2 MFLOP) and at batch 2 (6.4 MFLOP).
const ConvDesc kSmall = ConvDesc::parse("mb1ic20ih12oc50oh8kh5");
const ConvDesc kLarge = ConvDesc::parse("mb2ic20ih12oc50oh8kh5");

TEST_F(ConvCallThreads, ThresholdIsFlops) {
  EXPECT_LT(kSmall.forward_flops(), conv::serial_below_flops());
  EXPECT_GE(kLarge.forward_flops(), conv::serial_below_flops());
  EXPECT_TRUE(conv::runs_serial(kSmall));
  EXPECT_FALSE(conv::runs_serial(kLarge));
  // The public count (what tuning records are keyed by) says the same.
  EXPECT_EQ(taihu::dnn::conv_call_threads(kSmall), 1);
  EXPECT_EQ(taihu::dnn::conv_call_threads(kLarge), 2);
  taihu::arch::set_num_threads(1);
  EXPECT_FALSE(conv::runs_serial(kSmall));  // nothing to take away
  EXPECT_EQ(taihu::dnn::conv_call_threads(kSmall), 1);
  taihu::arch::set_num_threads(2);
  EXPECT_EQ(conv::set_serial_below_flops(0), 4.0e6);
  EXPECT_FALSE(conv::runs_serial(kSmall));
  EXPECT_EQ(taihu::dnn::conv_call_threads(kSmall), 2);
  EXPECT_THROW(conv::set_serial_below_flops(-1), taihu::Error);
  EXPECT_THROW(conv::set_serial_below_flops(std::nan("")), taihu::Error);
  EXPECT_EQ(conv::serial_below_flops(), 0.0);
}

TEST_F(ConvCallThreads, ScopePinsOneThreadAndRestores) {
  {
    const conv::CallThreads scope(kSmall);
    EXPECT_EQ(taihu::arch::threads_for_call(), 1);
  }
  EXPECT_EQ(taihu::arch::threads_for_call(), 2);
  {
    const conv::CallThreads scope(kLarge);
    EXPECT_EQ(taihu::arch::threads_for_call(), 2);
  }
  // A caller's own thread-local count is what comes back.
  const int before = taihu::arch::set_num_threads_local(3);
  {
    const conv::CallThreads scope(kSmall);
    EXPECT_EQ(taihu::arch::threads_for_call(), 1);
  }
  EXPECT_EQ(taihu::arch::threads_for_call(), 3);
  taihu::arch::set_num_threads_local(before);
}

// Through Convolution: the timed selection runs (and records) its candidates on the
// thread count the calls get, and its agreement callback sees the same.
TEST_F(ConvCallThreads, TimedSelectionMeasuresOnTheCallsThreads) {
  for (const ConvDesc& d : {kSmall, kLarge}) {
    const int expected = d.forward_flops() < conv::serial_below_flops() ? 1 : 2;
    const auto x = random_vector(static_cast<std::size_t>(d.n * d.c * d.h * d.w), 1),
               w = random_vector(static_cast<std::size_t>(d.k * d.c * d.kh * d.kw), 2);
    std::vector<float> y(static_cast<std::size_t>(d.n * d.k * d.out_h() * d.out_w()));
    Convolution c(d);
    int seen = 0;
    c.choose_by_timing(ConvDirection::forward, x.data(), w.data(), nullptr, y.data(),
                       [&](std::span<double>) { seen = taihu::arch::threads_for_call(); }, 1);
    EXPECT_EQ(seen, expected) << d.str();
    ASSERT_FALSE(c.timing_records().empty());
    for (const auto& r : c.timing_records()) EXPECT_EQ(r.threads, expected) << d.str() << " " << r.algo;
    EXPECT_EQ(taihu::arch::threads_for_call(), 2);
  }
}

}  // namespace
