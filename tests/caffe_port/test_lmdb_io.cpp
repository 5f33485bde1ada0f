// LmdbReader against corrupt and truncated databases (issue 23): liblmdb trusts its
// page structure, so before the structural check a leaf node running past its page,
// a branch page with one child or a duplicate-data node crashed the reader (SIGBUS,
// SIGSEGV, or liblmdb's assertion abort). Each corruption here is made by hand in a
// database liblmdb wrote, at the bytes LMDB's documented page layout puts it; the
// reader must throw a taihu::Error naming data.mdb. A seeded sweep of random byte
// corruptions must give either the records or an Error, never a signal. The pristine
// database must still read back exactly what was written.
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

#include "caffe_test_util.hpp"
#include "taihu/arch/error.hpp"
#include "taihu/caffe/data_sources.hpp"

namespace taihu::caffe::test {
namespace {

constexpr std::size_t kPage = 4096;  // liblmdb's page size on x86-64 Linux
constexpr std::uint16_t kBranch = 1, kLeaf = 2, kMeta = 8;

std::string value_bytes(std::size_t i) {
  // Records 0-35: 784-byte MNIST-like images (several per leaf page); records 36-39:
  // 9000-byte images, which liblmdb stores on overflow pages.
  return std::string(i < 36 ? 784 : 9000, static_cast<char>('a' + i % 26));
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void write_file(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}

template <class T>
T get(const std::string& b, std::size_t at) {
  T v;
  std::memcpy(&v, b.data() + at, sizeof v);
  return v;
}

template <class T>
void put(std::string& b, std::size_t at, T v) {
  std::memcpy(b.data() + at, &v, sizeof v);
}

// Page header: pgno u64 @0, flags u16 @10, lower u16 @12, upper u16 @14, then u16
// node offsets; node: size lo u16, size hi u16, flags u16, key size u16, key, data.
std::uint16_t page_flags(const std::string& b, std::size_t page) { return get<std::uint16_t>(b, page * kPage + 10); }
std::size_t node_at(const std::string& b, std::size_t page, std::size_t i) {
  return page * kPage + get<std::uint16_t>(b, page * kPage + 16 + 2 * i);
}

std::size_t first_page_with(const std::string& b, std::uint16_t flags) {
  for (std::size_t p = 2; p < b.size() / kPage; ++p)
    if (page_flags(b, p) == flags) return p;
  ADD_FAILURE() << "no page with flags " << flags;
  return 0;
}

// A leaf whose first node carries its value inline (not on overflow pages).
std::size_t inline_leaf(const std::string& b) {
  for (std::size_t p = 2; p < b.size() / kPage; ++p)
    if (page_flags(b, p) == kLeaf && (get<std::uint16_t>(b, node_at(b, p, 0) + 4) & 1) == 0) return p;
  ADD_FAILURE() << "no leaf with an inline value";
  return 0;
}

std::size_t overflow_node(const std::string& b) {
  for (std::size_t p = 2; p < b.size() / kPage; ++p) {
    if (page_flags(b, p) != kLeaf) continue;
    const std::size_t keys = (get<std::uint16_t>(b, p * kPage + 12) - 16u) / 2u;
    for (std::size_t i = 0; i < keys; ++i)
      if (get<std::uint16_t>(b, node_at(b, p, i) + 4) == 1) return node_at(b, p, i);
  }
  ADD_FAILURE() << "no overflow value";
  return 0;
}

// Opens the database and reads every record twice (with the wrap-around).
std::vector<std::string> read_all(const std::string& db) {
  LmdbReader r(db);
  std::vector<std::string> out;
  for (std::size_t i = 0; i < 2 * r.entries(); ++i) {
    const proto::Datum d = r.read(i);
    if (i < r.entries()) out.push_back(d.data());
  }
  return out;
}

class LmdbCorruption : public ::testing::Test {
 protected:
  void SetUp() override {
    LmdbWriter w(dir / "db");
    for (std::size_t i = 0; i < 40; ++i) {
      proto::Datum d;
      d.set_channels(1);
      d.set_height(1);
      d.set_width(static_cast<int>(value_bytes(i).size()));
      d.set_label(static_cast<int>(i % 10));
      d.set_data(value_bytes(i));
      char key[16];
      std::snprintf(key, sizeof key, "%08zu", i);
      w.put(key, d);
    }
    w.commit();
    pristine = read_file(dir / "db/data.mdb");
    ASSERT_EQ(pristine.size() % kPage, 0u);
    ASSERT_EQ(page_flags(pristine, 0) & kMeta, kMeta);
  }
  // The reader's error for the database with data.mdb replaced by `bytes`.
  std::string error_for(const std::string& bytes) {
    write_file(dir / "db/data.mdb", bytes);
    return error_of([&] { read_all(dir / "db"); });
  }
  void expect_rejected(const std::string& bytes, const std::string& phrase) {
    const std::string e = error_for(bytes);
    EXPECT_NE(e.find(dir / "db/data.mdb"), std::string::npos) << e;
    EXPECT_NE(e.find(phrase), std::string::npos) << e;
  }
  TempDir dir;
  std::string pristine;
};

TEST_F(LmdbCorruption, PristineDatabaseReadsBackWhatWasWritten) {
  const auto got = read_all(dir / "db");
  ASSERT_EQ(got.size(), 40u);
  for (std::size_t i = 0; i < got.size(); ++i) EXPECT_EQ(got[i], value_bytes(i)) << "record " << i;
  EXPECT_NE(first_page_with(pristine, kBranch), 0u);  // the cases below need a branch page
}

// tests/fuzz/known's SIGBUS: a leaf node claiming a 512-byte key and a 5899-byte value.
TEST_F(LmdbCorruption, LeafNodeRunningPastItsPage) {
  std::string b = pristine;
  const std::size_t n = node_at(b, inline_leaf(b), 0);
  put<std::uint16_t>(b, n, 5899);
  put<std::uint16_t>(b, n + 6, 512);
  expect_rejected(b, "running past the page");
  b = pristine;
  put<std::uint16_t>(b, n, 0xffff);  // a value of 4 GiB - 1 bytes
  put<std::uint16_t>(b, n + 2, 0xffff);
  expect_rejected(b, "-byte value running past the page");
}

TEST_F(LmdbCorruption, OverflowValueOutsideTheFile) {
  std::string b = pristine;
  const std::size_t n = overflow_node(b);
  const std::size_t data = n + 8 + get<std::uint16_t>(b, n + 6);
  put<std::uint64_t>(b, data, std::uint64_t{1} << 40);
  expect_rejected(b, "outside the file");
  b = pristine;  // the first overflow page right, but the value longer than the file
  put<std::uint16_t>(b, n + 2, 0x00ff);
  expect_rejected(b, "outside the file");
}

TEST_F(LmdbCorruption, BranchPagesThatLoopOrHaveOneChild) {
  std::string b = pristine;
  const std::size_t branch = first_page_with(b, kBranch);
  const std::size_t n = node_at(b, branch, 1);
  put<std::uint16_t>(b, n, static_cast<std::uint16_t>(branch));  // child = the branch itself
  put<std::uint16_t>(b, n + 2, 0);
  put<std::uint16_t>(b, n + 4, 0);
  expect_rejected(b, "corrupt LMDB file: page " + std::to_string(branch));
  b = pristine;
  put<std::uint16_t>(b, branch * kPage + 12, 18);  // one child: liblmdb asserts (abort)
  expect_rejected(b, "has 1 entries");
}

TEST_F(LmdbCorruption, DuplicateDataNodeOrWrongPageKind) {
  std::string b = pristine;
  const std::size_t leaf = inline_leaf(b);
  put<std::uint16_t>(b, node_at(b, leaf, 0) + 4, 4);  // F_DUPDATA: liblmdb's xcursor is null
  expect_rejected(b, "duplicate data");
  b = pristine;
  put<std::uint16_t>(b, leaf * kPage + 10, kBranch);
  expect_rejected(b, "page flags 0x1");
}

TEST_F(LmdbCorruption, MetaPagesAndTruncation) {
  std::string b = pristine;
  put<std::uint32_t>(b, 16 + 24, 0);  // page size 0 in both metas: liblmdb divides by it
  put<std::uint32_t>(b, kPage + 16 + 24, 0);
  expect_rejected(b, "page size of 0 bytes");
  expect_rejected(pristine.substr(0, pristine.size() - kPage), "truncated LMDB file");
  expect_rejected(pristine.substr(0, 100), "too short for an LMDB file");
  expect_rejected(std::string(), "empty file");
}

// Random corruption of 1-4 bytes in the tree pages, 300 seeded trials: each gives the
// records or an Error; a signal fails the whole test binary.
TEST_F(LmdbCorruption, RandomByteCorruptionNeverCrashes) {
  std::mt19937_64 rng(23);
  const std::size_t pages = pristine.size() / kPage;
  int rejected = 0;
  for (int trial = 0; trial < 300; ++trial) {
    std::string b = pristine;
    const int bytes = 1 + static_cast<int>(rng() % 4);
    for (int k = 0; k < bytes; ++k) {
      const std::size_t page = 2 + rng() % (pages - 2);
      // Half the hits in the header and first node offsets, where a flip matters most.
      const std::size_t off = rng() % 2 ? rng() % 64 : rng() % kPage;
      b[page * kPage + off] = static_cast<char>(rng());
    }
    if (!error_for(b).empty()) ++rejected;
  }
  EXPECT_GT(rejected, 50) << "the corruptions should mostly be detected";
}

// The writer builds the database beside its target and renames it into place on
// commit: abandoned (an exception, a full disk) it leaves nothing; committed, only
// the database, which reads back what was put.
TEST(LmdbWriterAtomic, NothingUnderTheNameUntilCommit) {
  TempDir dir;
  auto entries = [&] {
    std::vector<std::string> names;
    for (const auto& e : std::filesystem::directory_iterator(dir.path())) names.push_back(e.path().filename());
    return names;
  };
  proto::Datum d;
  d.set_channels(1);
  d.set_height(1);
  d.set_width(3);
  d.set_label(7);
  d.set_data("abc");
  {
    LmdbWriter w(dir / "db");
    w.put("00000000", d);
    EXPECT_FALSE(std::filesystem::exists(dir / "db"));
  }
  EXPECT_TRUE(entries().empty()) << entries().front();
  {
    LmdbWriter w(dir / "db");
    w.put("00000000", d);
    w.commit();
    EXPECT_THROW(w.commit(), Error);
  }
  EXPECT_EQ(entries(), std::vector<std::string>{"db"});
  LmdbReader r(dir / "db");
  ASSERT_EQ(r.entries(), 1u);
  EXPECT_EQ(r.read(0).data(), "abc");
  EXPECT_EQ(r.read(0).label(), 7);
  EXPECT_THROW(LmdbWriter(dir / "db"), Error);  // exists
}

}  // namespace
}  // namespace taihu::caffe::test
