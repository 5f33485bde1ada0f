// taihu/arch/atomic_file.hpp: a committed file holds exactly the bytes written (read
// back with std::ifstream and compared with the same bytes built independently); an
// uncommitted one (exception, early destruction, failed write) leaves neither a final
// file nor a temporary, and an existing file under the name keeps its old contents;
// errors name the path and the OS's reason; concurrent writers never share a temporary.
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "taihu/arch/atomic_file.hpp"
#include "taihu/arch/error.hpp"
#include "error_text.hpp"

namespace fs = std::filesystem;
using taihu::AtomicOutputFile;
using taihu::AtomicTempPath;
using taihu_test::error_of;

namespace {

struct TempDir {
  fs::path path = fs::temp_directory_path() / ("taihu_atomic_" + std::to_string(::getpid()) + "_" +
                                               ::testing::UnitTest::GetInstance()->current_test_info()->name());
  TempDir() {
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~TempDir() {
    std::error_code ignored;
    fs::remove_all(path, ignored);
  }
  std::string operator/(const std::string& name) const { return (path / name).string(); }
  std::set<std::string> entries() const {
    std::set<std::string> names;
    for (const auto& e : fs::directory_iterator(path)) names.insert(e.path().filename().string());
    return names;
  }
};

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::string random_bytes(std::size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::string s(n, '\0');
  for (char& c : s) c = static_cast<char>(rng());
  return s;
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace

// Pieces of every size class (1 byte, under and over the 64 KiB buffer, several MiB in
// all, embedded NULs) arrive in order, exactly; only the final name is left.
TEST(AtomicOutputFile, CommittedFileHoldsExactlyTheBytesWritten) {
  TempDir dir;
  const std::string path = dir / "out.bin";
  const std::string expected = random_bytes(5u << 20, 1);
  std::mt19937 rng(2);
  const std::size_t sizes[] = {1, 7, 4096, 65535, 65536, 65537, 300000, 1u << 20};
  {
    AtomicOutputFile out(path);
    EXPECT_EQ(out.path(), path);
    EXPECT_TRUE(fs::exists(out.temp_path()));
    EXPECT_FALSE(fs::exists(path)) << "the final name appears only at commit";
    std::size_t done = 0;
    while (done < expected.size()) {
      const std::size_t n = std::min(sizes[rng() % std::size(sizes)], expected.size() - done);
      out.write(expected.data() + done, n);
      done += n;
    }
    EXPECT_FALSE(fs::exists(path));
    out.commit();
  }
  const std::string got = slurp(path);
  ASSERT_EQ(got.size(), expected.size());
  EXPECT_TRUE(got == expected) << "contents differ";
  EXPECT_EQ(dir.entries(), std::set<std::string>{"out.bin"});
  // An empty file is a file too; write_file_atomic replaces an existing one whole.
  AtomicOutputFile empty(dir / "empty");
  empty.commit();
  EXPECT_EQ(fs::file_size(dir / "empty"), 0u);
  taihu::write_file_atomic(path, "short");
  EXPECT_EQ(slurp(path), "short");
  EXPECT_EQ(dir.entries(), (std::set<std::string>{"empty", "out.bin"}));
}

// An exception (or any early destruction) before commit: no final file, no temporary,
// and an existing file under the name keeps its contents. discard() does the same.
TEST(AtomicOutputFile, UncommittedOutputLeavesNothing) {
  TempDir dir;
  const std::string fresh = dir / "fresh.bin", old = dir / "old.bin";
  taihu::write_file_atomic(old, "old contents");
  try {
    AtomicOutputFile a(fresh);
    AtomicOutputFile b(old);
    a.write(random_bytes(200000, 3));  // some of it past the buffer, on disk
    b.write("new contents that never land");
    throw std::runtime_error("interrupted");
  } catch (const std::runtime_error&) {
  }
  EXPECT_EQ(dir.entries(), std::set<std::string>{"old.bin"});
  EXPECT_EQ(slurp(old), "old contents");
  AtomicOutputFile c(old);
  c.write("discarded");
  const std::string temp = c.temp_path();
  c.discard();
  EXPECT_FALSE(fs::exists(temp));
  EXPECT_EQ(slurp(old), "old contents");
  // A discarded (or committed) output is spent: using it is an error naming the path.
  EXPECT_TRUE(contains(error_of([&] { c.write("x"); }), old));
  EXPECT_TRUE(contains(error_of([&] { c.commit(); }), "discarded"));
  AtomicOutputFile d(fresh);
  d.commit();
  EXPECT_TRUE(contains(error_of([&] { d.commit(); }), "committed"));
  EXPECT_TRUE(contains(error_of([&] { d.write("x"); }), fresh));
}

// Failures: the error names the path and the OS's reason, an existing file (or
// directory) under the name is untouched, and no temporary is left.
TEST(AtomicOutputFile, FailuresNameThePathAndReasonAndKeepTheOldFile) {
  TempDir dir;
  // A parent that does not exist: nothing can be created.
  const std::string missing = dir / "no/such/dir/f.bin";
  const std::string m1 = error_of([&] { taihu::write_file_atomic(missing, "x"); });
  EXPECT_TRUE(contains(m1, "cannot create '" + missing + "'")) << m1;
  EXPECT_TRUE(contains(m1, std::strerror(ENOENT))) << m1;
  // The name is an existing non-empty directory: written, then the rename fails.
  const std::string busy = dir / "busy";
  fs::create_directories(fs::path(busy) / "child");
  const std::string m2 = error_of([&] { taihu::write_file_atomic(busy, random_bytes(100000, 4)); });
  EXPECT_TRUE(contains(m2, "'" + busy + "'")) << m2;
  EXPECT_TRUE(contains(m2, std::strerror(EISDIR)) || contains(m2, std::strerror(ENOTEMPTY))) << m2;
  EXPECT_TRUE(fs::is_directory(fs::path(busy) / "child"));
  EXPECT_EQ(dir.entries(), std::set<std::string>{"busy"});
  // A write that fails part-way (RLIMIT_FSIZE gives EFBIG, as a full disk gives ENOSPC),
  // in a child so the limit stays there, streaming 1 MiB in pieces past a 100 KB limit.
  const std::string old = dir / "old.bin";
  const std::string old_bytes = random_bytes(5000, 5);
  taihu::write_file_atomic(old, old_bytes);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    std::signal(SIGXFSZ, SIG_IGN);
    const rlimit limit{100000, 100000};
    ::setrlimit(RLIMIT_FSIZE, &limit);
    try {
      AtomicOutputFile out(old);
      const std::string piece = random_bytes(10000, 6);
      for (int i = 0; i < 100; ++i) out.write(piece);
      out.commit();
    } catch (const taihu::Error& e) {
      const std::string m = e.what();
      ::_exit(contains(m, "cannot write '" + old + "'") && contains(m, std::strerror(EFBIG)) ? 0 : 2);
    }
    ::_exit(1);  // no error: the limit did not bite
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "1: no error; 2: the error did not name the path and EFBIG";
  EXPECT_TRUE(slurp(old) == old_bytes) << "the old file changed";
  EXPECT_EQ(dir.entries(), (std::set<std::string>{"busy", "old.bin"}));
}

// Writers of different paths, interleaved, each get their own bytes.
TEST(AtomicOutputFile, InterleavedWritersOfDifferentPaths) {
  TempDir dir;
  const std::string a_bytes = random_bytes(300000, 7), b_bytes = random_bytes(123457, 8);
  AtomicOutputFile a(dir / "a"), b(dir / "b");
  EXPECT_NE(a.temp_path(), b.temp_path());
  for (std::size_t i = 0; i < std::max(a_bytes.size(), b_bytes.size()); i += 1000) {
    if (i < a_bytes.size()) a.write(a_bytes.substr(i, 1000));
    if (i < b_bytes.size()) b.write(b_bytes.substr(i, 1000));
  }
  b.commit();
  a.commit();
  EXPECT_TRUE(slurp(dir / "a") == a_bytes);
  EXPECT_TRUE(slurp(dir / "b") == b_bytes);
  EXPECT_EQ(dir.entries(), (std::set<std::string>{"a", "b"}));
}

// Two writers of one path in one process get different temporaries ("<path>.tmp.<pid>",
// then "<path>.tmp.<pid>.1"); the later commit wins whole. Threads racing on one path:
// the file is always one writer's bytes, never a mixture, and no temporary remains.
TEST(AtomicOutputFile, WritersOfOnePathNeverShareATemporary) {
  TempDir dir;
  const std::string path = dir / "same";
  {
    AtomicOutputFile first(path), second(path);
    EXPECT_EQ(first.temp_path(), path + ".tmp." + std::to_string(::getpid()));
    EXPECT_EQ(second.temp_path(), path + ".tmp." + std::to_string(::getpid()) + ".1");
    first.write(std::string(70000, 'a'));
    second.write(std::string(90000, 'b'));
    second.commit();
    first.commit();
  }
  EXPECT_EQ(slurp(path), std::string(70000, 'a'));
  const std::string contents[2] = {random_bytes(200000, 9), random_bytes(150000, 10)};
  std::vector<std::thread> threads;
  for (int t = 0; t < 2; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < 20; ++i) {
        AtomicOutputFile out(path);
        for (std::size_t k = 0; k < contents[t].size(); k += 30000) out.write(contents[t].substr(k, 30000));
        out.commit();
      }
    });
  for (auto& th : threads) th.join();
  const std::string got = slurp(path);
  EXPECT_TRUE(got == contents[0] || got == contents[1]) << "a mixture of " << got.size() << " bytes";
  EXPECT_EQ(dir.entries(), std::set<std::string>{"same"});
}

// For a library that opens the file itself: it writes to temp_path(), commit() renames.
// A directory temporary (an LMDB database) is removed recursively when abandoned.
TEST(AtomicTempPath, ExternalWritersFileAndDirectory) {
  TempDir dir;
  const std::string path = dir / "ext.bin";
  {
    AtomicTempPath tmp(path);
    std::FILE* f = std::fopen(tmp.temp_path().c_str(), "wb");
    ASSERT_NE(f, nullptr);
    std::fputs("written by stdio", f);
    ASSERT_EQ(std::fclose(f), 0);
    EXPECT_FALSE(fs::exists(path));
    tmp.commit();
    EXPECT_TRUE(tmp.committed());
    EXPECT_TRUE(contains(error_of([&] { tmp.commit(); }), "committed twice"));
  }
  EXPECT_EQ(slurp(path), "written by stdio");
  {
    AtomicTempPath tmp(path);
    std::ofstream(tmp.temp_path()) << "abandoned";
  }
  EXPECT_EQ(slurp(path), "written by stdio");
  const std::string db = dir / "db";
  {
    AtomicTempPath tmp(db, AtomicTempPath::Kind::directory);
    ASSERT_TRUE(fs::is_directory(tmp.temp_path()));
    fs::create_directories(fs::path(tmp.temp_path()) / "sub");
    std::ofstream(fs::path(tmp.temp_path()) / "sub" / "data.mdb") << "x";
  }
  EXPECT_EQ(dir.entries(), std::set<std::string>{"ext.bin"});
  {
    AtomicTempPath tmp(db, AtomicTempPath::Kind::directory);
    std::ofstream(fs::path(tmp.temp_path()) / "data.mdb") << "records";
    tmp.commit();
  }
  EXPECT_EQ(slurp(dir / "db/data.mdb"), "records");
  EXPECT_EQ(dir.entries(), (std::set<std::string>{"db", "ext.bin"}));
  const std::string m = error_of([&] { AtomicTempPath never(dir / "no/such/x", AtomicTempPath::Kind::directory); });
  EXPECT_TRUE(contains(m, dir / "no/such/x") && contains(m, std::strerror(ENOENT))) << m;
}
