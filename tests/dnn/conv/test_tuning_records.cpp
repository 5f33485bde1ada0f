// Tuning records: the JSON-lines format (parse, best-of, errors naming file:line,
// atomic save + load round trip, format 1 read and format 2 written) and, through
// TAIHU_TUNING_RECORDS, steering the `automatic` choice. Its own binary: the environment file is read once per process.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>

#include "taihu/arch/error.hpp"
#include "taihu/arch/isa.hpp"
#include "taihu/arch/threads.hpp"
#include "taihu/dnn/conv.hpp"
#include "taihu/dnn/tuning_records.hpp"

namespace {

using namespace taihu::dnn;

TEST(TuningRecords, ParseKeepsTheFastest) {
  const std::string text =
      "# measured by autotune\n"
      "{\"op\":\"conv2d\",\"key\":\"mb1ic64ih56oc64oh56kh3ph1\",\"isa\":\"avx2\",\"threads\":2,\"algo\":\"winograd_2x2\",\"median_s\":0.002}\n"
      "\n"
      "{\"op\":\"conv2d\",\"key\":\"mb1ic64ih56oc64oh56kh3ph1\",\"isa\":\"avx2\",\"threads\":2,\"algo\":\"winograd_4x4\",\"median_s\":0.001,\"extra\":1}\n"
      "{\"op\":\"conv2d\",\"key\":\"mb1ic64ih56oc64oh56kh3ph1\",\"dir\":\"backward_data\",\"isa\":\"avx2\",\"threads\":2,\"algo\":\"explicit_gemm\",\"median_s\":0.003}\n";
  const auto recs = TuningRecords::parse(text, "mem");
  EXPECT_EQ(recs.size(), 2u);
  auto best = recs.best("conv2d", "mb1ic64ih56oc64oh56kh3ph1", "forward", "avx2", 2);
  ASSERT_TRUE(best);
  EXPECT_EQ(best->algo, "winograd_4x4");
  EXPECT_DOUBLE_EQ(best->median_s, 0.001);
  EXPECT_FALSE(recs.best("conv2d", "mb1ic64ih56oc64oh56kh3ph1", "forward", "avx2", 1));
  EXPECT_EQ(recs.best("conv2d", "mb1ic64ih56oc64oh56kh3ph1", "backward_data", "avx2", 2)->algo, "explicit_gemm");
}

TEST(TuningRecords, BadLinesNameFileAndLine) {
  try {
    TuningRecords::parse("{\"op\":\"conv2d\",\"key\":\"k\",\"isa\":\"avx2\",\"threads\":2,\"algo\":\"direct\",\"median_s\":1}\n{\"op\":1}\n", "recs.jsonl");
    FAIL();
  } catch (const taihu::Error& e) {
    EXPECT_NE(std::string(e.what()).find("recs.jsonl:2"), std::string::npos) << e.what();
  }
  EXPECT_THROW(TuningRecords::parse("not json\n", "f"), taihu::Error);
  EXPECT_THROW(TuningRecords::parse("{\"op\":\"conv2d\",\"key\":\"k\",\"isa\":\"avx2\",\"threads\":0,\"algo\":\"direct\",\"median_s\":1}", "f"), taihu::Error);
  // 2^32 + 1 threads must not wrap to a record for 1 thread (seen while writing tests/fuzz/tuning_records).
  EXPECT_THROW(TuningRecords::parse("{\"op\":\"conv2d\",\"key\":\"k\",\"isa\":\"avx2\",\"threads\":4294967297,\"algo\":\"direct\",\"median_s\":1}", "f"), taihu::Error);
  EXPECT_THROW(TuningRecords::load("/nonexistent/records.jsonl"), taihu::Error);
  // An algorithm dnn's list does not have, or a format it does not know: the line named.
  try {
    TuningRecords::parse("\n{\"op\":\"conv2d\",\"key\":\"k\",\"isa\":\"avx2\",\"threads\":1,\"algo\":\"fft\",\"median_s\":1}\n", "r.jsonl");
    FAIL();
  } catch (const taihu::Error& e) {
    EXPECT_NE(std::string(e.what()).find("r.jsonl:2: unknown convolution algorithm \"fft\""), std::string::npos) << e.what();
  }
  EXPECT_THROW(TuningRecords::parse("{\"format\":3,\"op\":\"conv2d\",\"key\":\"k\",\"isa\":\"avx2\",\"threads\":1,\"algo\":\"direct\",\"median_s\":1}", "f"), taihu::Error);
}

// Lines without "format" are format 1 (written before the direct kernels were separate
// entries); dnn's writer marks its lines format 2.
TEST(TuningRecords, ReadsTheOldFormatAndWritesTheNew) {
  const auto old = TuningRecords::parse(
      "{\"op\":\"conv2d\",\"key\":\"mb1ic16ih8oc8oh8kh1\",\"isa\":\"avx2\",\"threads\":1,\"algo\":\"direct\",\"median_s\":1}\n", "old");
  ASSERT_EQ(old.size(), 1u);
  EXPECT_EQ(old.records()[0].format, 1);
  EXPECT_EQ(format_tuning_record(old.records()[0]).rfind("{\"format\":1,", 0), 0u);
  const TuningRecord r = conv_tuning_record(ConvDesc::parse("mb1ic16ih8oc8kh1"), ConvDirection::backward_data, "avx512", 2,
                                            ConvAlgo::pointwise, 0.5);
  EXPECT_EQ(format_tuning_record(r),
            "{\"format\":2,\"op\":\"conv2d\",\"key\":\"mb1ic16ih8oc8oh8kh1\",\"dir\":\"backward_data\",\"isa\":\"avx512\","
            "\"threads\":2,\"algo\":\"pointwise\",\"median_s\":0.5}");
  const auto back = TuningRecords::parse(format_tuning_record(r), "new");
  EXPECT_EQ(back.records()[0].format, 2);
  EXPECT_EQ(back.records()[0].algo, "pointwise");
  EXPECT_THROW(conv_tuning_record(ConvDesc::parse("mb1ic16ih8oc8kh1"), ConvDirection::forward, "avx2", 1,
                                  ConvAlgo::automatic, 1.0),
               taihu::Error);
}

TEST(TuningRecords, SaveLoadRoundTrip) {
  TuningRecords recs;
  recs.add({"conv2d", "mb1ic3ih5oc2oh3kh3", "forward", "generic", 1, "reference", 0.5});
  recs.add({"conv2d", "mb1ic3ih5oc2oh3kh3", "forward", "generic", 1, "direct", 0.25});
  const std::string path = ::testing::TempDir() + "taihu_records_roundtrip.jsonl";
  save_tuning_records(recs, path);
  const auto back = TuningRecords::load(path);
  ASSERT_EQ(back.size(), 1u);
  EXPECT_EQ(back.records()[0].algo, "direct");
  EXPECT_EQ(format_tuning_record(back.records()[0]), format_tuning_record(recs.records()[0]));
  std::remove(path.c_str());
}

// A record overrides the heuristic for its exact key, ISA level and thread count.
// One thread: these small problems run (and look their records up) on one thread
// whatever the count (dnn/src/conv/conv_threads.hpp).
TEST(TuningRecords, SteerAutomaticChoice) {
  taihu::arch::set_num_threads(1);
  const ConvDesc d = ConvDesc::parse("mb1ic32ih14oc32kh3ph1");
  const std::string isa = taihu::arch::isa_name(taihu::arch::active_isa());
  const int threads = taihu::arch::threads_for_call();
  const std::string path = ::testing::TempDir() + "taihu_records_steer.jsonl";
  const ConvDesc pw = ConvDesc::parse("mb1ic32ih14oc16kh1"), first = ConvDesc::parse("mb1ic3ih30oc16kh3sh2");
  {
    std::ofstream f(path);
    f << format_tuning_record({"conv2d", d.str(), "forward", isa, threads, "implicit_gemm", 1e-4}) << "\n";
    f << format_tuning_record({"conv2d", d.str(), "backward_weights", isa, threads, "reference", 1e-4}) << "\n";
    // Format 1's "direct" is the kernel the direct object ran: pointwise on a 1x1 layer
    // forward, the first-layer kernel on a first layer; format 2 names the entry.
    f << "{\"op\":\"conv2d\",\"key\":\"" << pw.str() << "\",\"dir\":\"forward\",\"isa\":\"" << isa
      << "\",\"threads\":" << threads << ",\"algo\":\"direct\",\"median_s\":1e-4}\n";
    f << "{\"op\":\"conv2d\",\"key\":\"" << first.str() << "\",\"isa\":\"" << isa << "\",\"threads\":" << threads
      << ",\"algo\":\"direct\",\"median_s\":1e-4}\n";
    f << format_tuning_record(conv_tuning_record(first, ConvDirection::backward_weights, isa, threads,
                                                 ConvAlgo::minibatch, 1e-4))
      << "\n";
    f << format_tuning_record(conv_tuning_record(pw, ConvDirection::backward_weights, isa, threads, ConvAlgo::direct, 1e-4))
      << "\n";
  }
  setenv("TAIHU_TUNING_RECORDS", path.c_str(), 1);
  Convolution conv(d);
  EXPECT_EQ(conv.algorithm(), ConvAlgo::implicit_gemm);
  EXPECT_EQ(conv.algorithm(ConvDirection::backward_weights), ConvAlgo::reference);
  // No record for backward_data: the heuristic decides.
  EXPECT_NE(conv.algorithm(ConvDirection::backward_data), ConvAlgo::automatic);
  EXPECT_EQ(Convolution(pw).algorithm(), ConvAlgo::pointwise);
  EXPECT_EQ(Convolution(pw).algorithm(ConvDirection::backward_weights), ConvAlgo::direct);
  EXPECT_EQ(Convolution(first).algorithm(), ConvAlgo::first_layer);
  EXPECT_EQ(Convolution(first).algorithm(ConvDirection::backward_weights), ConvAlgo::minibatch);
  std::remove(path.c_str());
  taihu::arch::set_num_threads(0);
}

}  // namespace
