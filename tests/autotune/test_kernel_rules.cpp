// Rules the search and the generated conv kernels must keep, checked against
// independent definitions:
//   - no ocvec register tile the space accepts (or a template picks) needs more vector
//     registers than the ISA has: accumulators k x x, the k weight vectors and one
//     broadcast (written out here, from the ISA's register count);
//   - on a 1x1 layer the ocvec templates are measured first, before the schedules a new
//     shape carries over from other shapes in the log and before the model's picks;
//   - a Winograd / ocvec kernel built for 1 thread runs on 1 thread even when the
//     process default is more (taihu-tune --threads 1 used to time it on every core,
//     and its figure then read ~1.8x fast against a 1-thread re-timing).
#include <gtest/gtest.h>
#include <time.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <set>
#include <string>
#include <thread>

#include "taihu/arch/isa.hpp"
#include "taihu/arch/threads.hpp"
#include "taihu/autotune/backend.hpp"
#include "taihu/autotune/interpreter.hpp"
#include "taihu/autotune/parser.hpp"
#include "taihu/autotune/records.hpp"
#include "taihu/autotune/search.hpp"
#include "taihu/autotune/space.hpp"
#include "taihu/autotune/tuner.hpp"

namespace ta = taihu::autotune;

namespace {

ta::Problem conv2d(const std::string& shape) {
  return ta::Problem(ta::parse_spec_file(std::string(TAIHU_DSL_DIR) + "/conv2d.tdsl"), ta::parse_shape(shape));
}

int isa_registers() { return taihu::arch::active_isa() == taihu::arch::Isa::avx512 ? 32 : 16; }
int isa_lanes() {
  switch (taihu::arch::active_isa()) {
    case taihu::arch::Isa::avx512: return 16;
    case taihu::arch::Isa::avx2: return 8;
    default: return 4;
  }
}

std::string label_of(const ta::Space& space, const ta::Point& pt, const std::string& name) { return space.to_map(pt).at(name); }

double cpu_seconds(clockid_t clock) {
  timespec t{};
  clock_gettime(clock, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

}  // namespace

TEST(AutotuneKernelRules, NoOcvecTileExceedsTheRegisters) {
  // 1x1 with 64 output channels (4 vectors on AVX-512), 3x3 with a narrow row (x clamps
  // to 7) and 20 channels (a ragged vector: k clamps to 2 on AVX-512, 3 on AVX2).
  for (const char* shape : {"N=1,C=32,H=28,W=28,KO=64,R=1,S=1,P=0", "N=1,C=16,H=7,W=7,KO=20,R=3,S=3,P=1"}) {
    SCOPED_TRACE(shape);
    ta::Problem p = conv2d(shape);
    ta::Space space(p);
    std::map<std::string, std::vector<std::string>> labels;
    for (const auto& k : space.knobs())
      if (k.kind == "ocvec") labels["ocvec " + k.target] = k.labels;
    ASSERT_EQ(labels.size(), 6u);  // x, k, c, o, l, s (l left at 0: output channels in the lanes)
    const std::int64_t k_vectors = (p.dim("KO") + isa_lanes() - 1) / isa_lanes();
    int valid = 0;
    for (const auto& x : labels["ocvec x"])
      for (const auto& k : labels["ocvec k"])
        for (const auto& c : labels["ocvec c"])
          for (const auto& o : labels["ocvec o"]) {
            auto m = space.to_map(space.default_point());
            m["algorithm"] = "ocvec";
            m["ocvec x"] = x, m["ocvec k"] = k, m["ocvec c"] = c, m["ocvec o"] = o;
            const ta::Point pt = space.from_map(m);
            const std::int64_t tx = std::min<std::int64_t>(std::stoll(x), p.dim("OW"));
            const std::int64_t tk = std::min<std::int64_t>(std::stoll(k), k_vectors);
            const bool fits = tx * tk + tk + 1 <= isa_registers();
            EXPECT_EQ(space.valid(pt), fits) << "x " << x << " k " << k << ": " << space.why_invalid(pt);
            if (!fits) {
              EXPECT_NE(space.why_invalid(pt).find("would spill"), std::string::npos) << space.why_invalid(pt);
            }
            valid += fits;
          }
    EXPECT_GT(valid, 0);
    // Templates: every ocvec tile fits; the widest of them uses the registers (within 4).
    int widest = 0;
    for (const ta::Point& t : space.templates()) {
      const ta::Schedule s = space.schedule(t);
      if (!p.is_ocvec(s.algorithm)) continue;
      const int need = s.ocvec.k_vectors * s.ocvec.x_tile + s.ocvec.k_vectors + 1;
      EXPECT_LE(need, isa_registers()) << space.describe(t);
      widest = std::max(widest, need);
    }
    if (p.dim("OW") >= 28) {
      EXPECT_GE(widest, isa_registers() - 4);
    }
  }
  // On AVX-512 the spilling 4 x 7 (33 registers) is refused, 2 x 14 (31) and 1 x 28 (30) are not.
  if (taihu::arch::active_isa() == taihu::arch::Isa::avx512) {
    EXPECT_EQ(ta::ocvec_registers_needed(4, 7), 33);
    EXPECT_EQ(ta::ocvec_registers_needed(2, 14), 31);
  }
}

// A 32-wide output row (CIFAR-10 quick conv1, 32 channels): besides 2 vectors x the
// widest row that fits (2 x 14 on AVX-512: tiles of 14, 14 and a ragged 4), the templates
// offer 2 x the widest that divides the row (2 x 8; 2 x 4 on AVX2's 16 registers), which
// a 20 s search did not reach on its own (0.049 ms against the `direct` it picked, 0.055).
TEST(AutotuneKernelRules, OcvecTemplatesIncludeATileThatDividesTheRow) {
  ta::Problem p = conv2d("N=1,C=3,H=32,W=32,KO=32,R=5,S=5,P=2");
  ta::Space space(p);
  int want = 0;
  for (int x : {4, 6, 7, 8, 12, 14, 28})
    if (32 % x == 0 && 2 * x + 3 <= isa_registers()) want = x;
  ASSERT_GT(want, 0);
  bool found = false;
  for (const ta::Point& t : space.templates()) {
    const ta::Schedule s = space.schedule(t);
    if (!p.is_ocvec(s.algorithm) || s.ocvec.pixel_lanes != 0) continue;
    found = found || (s.ocvec.k_vectors == 2 && s.ocvec.x_tile == want && s.ocvec.rows_outer == 0 && s.ocvec.c_block == 0);
  }
  EXPECT_TRUE(found) << "no ocvec template 2 x " << want;
}

// A log holding another 1x1 layer's records (the carried-over seeds and a model trained
// on them): the new layer still measures its ocvec templates first, in order.
TEST(AutotuneKernelRules, OcvecTemplatesComeBeforeTransferSeeds) {
  ta::Problem other = conv2d("N=1,C=64,H=28,W=28,KO=128,R=1,S=1,P=0");
  ta::Space other_space(other);
  const std::string log =
      (std::filesystem::temp_directory_path() / ("taihu-rules-" + std::to_string(::getpid()) + ".jsonl")).string();
  std::filesystem::remove(log);
  ta::TuneOptions o;
  o.budget_s = 0;
  o.max_trials = 40;
  o.seed = 3;
  o.log_path = log;
  // Synthetic times that favour direct loops: the carried-over seeds are not ocvec.
  auto fake = [&](const ta::Space& s, const ta::Point& pt) {
    const std::string a = label_of(s, pt, "algorithm");
    return (a == "direct" ? 1e-3 : 4e-3) * (1.0 + 0.01 * static_cast<double>(std::hash<std::string>{}(s.describe(pt)) % 50));
  };
  (void)ta::tune(other, other_space, o, [&](const ta::Point& pt) { return fake(other_space, pt); });

  ta::Problem p = conv2d("N=1,C=32,H=28,W=28,KO=64,R=1,S=1,P=0");
  ta::Space space(p);
  const std::size_t lead = space.leading_templates();
  ASSERT_GE(lead, 2u);
  const auto templates = space.templates();
  for (std::size_t i = 0; i < lead; ++i) EXPECT_TRUE(p.is_ocvec(space.schedule(templates[i]).algorithm));
  o.max_trials = static_cast<int>(lead) + 4;
  const ta::TuneResult r = ta::tune(p, space, o, [&](const ta::Point& pt) { return fake(space, pt); });
  ASSERT_GE(r.measured.size(), lead + 1);
  for (std::size_t i = 0; i < lead; ++i) EXPECT_EQ(r.measured[i], templates[i]) << i << ": " << space.describe(r.measured[i]);
  // ...and a carried-over seed (the other layer's direct best) right after them.
  EXPECT_EQ(label_of(space, r.measured[lead], "algorithm"), "direct") << space.describe(r.measured[lead]);
  // A 3x3 layer leads with Winograd: nothing goes before its seeds.
  ta::Problem p3 = conv2d("N=1,C=32,H=14,W=14,KO=64,R=3,S=3,P=1");
  EXPECT_EQ(ta::Space(p3).leading_templates(), 0u);
  std::filesystem::remove(log);
}

TEST(AutotuneKernelRules, PackedConvKernelsRunOnTheirOwnThreadCount) {
  if (!ta::halide_available()) GTEST_SKIP() << "built without Halide";
  taihu::arch::set_num_threads(2);  // the process default: 2 (restored below)
  ta::Problem p = conv2d("N=1,C=64,H=28,W=28,KO=64,R=3,S=3,P=1");
  ta::Space space(p);
  std::set<std::string> seen;
  for (const ta::Point& t : space.templates()) {
    const ta::Schedule s = space.schedule(t);
    const std::string algo = label_of(space, t, "algorithm");
    if ((algo != "ocvec" && algo != "winograd") || !seen.insert(algo).second) continue;
    SCOPED_TRACE(algo + ": " + space.describe(t));
    auto kernel = ta::make_halide_kernel(p, s, 1);
    const ta::TensorMap in = ta::random_inputs(p, 7);
    std::vector<const float*> ptrs;
    for (const auto& n : p.inputs()) ptrs.push_back(in.at(n).data());
    std::vector<float> out(static_cast<std::size_t>(p.tensor(p.output()).size()));
    kernel->run(ptrs, out.data());
    // Other kernels' pool helpers spin briefly after their last loop, then sleep.
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    const double proc0 = cpu_seconds(CLOCK_PROCESS_CPUTIME_ID), self0 = cpu_seconds(CLOCK_THREAD_CPUTIME_ID);
    for (int i = 0; i < 30; ++i) kernel->run(ptrs, out.data());
    const double self = cpu_seconds(CLOCK_THREAD_CPUTIME_ID) - self0;
    const double others = cpu_seconds(CLOCK_PROCESS_CPUTIME_ID) - proc0 - self;
    // With the process default (2 threads) a helper ran about half of the tasks.
    EXPECT_LT(others, 0.05 * self + 2e-3) << "calling thread " << self << " s, other threads " << others << " s";
  }
  EXPECT_EQ(seen.size(), 2u);
  taihu::arch::set_num_threads(0);
}
