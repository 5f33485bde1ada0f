// check_lmdb_file: LMDB's on-disk format (liblmdb 0.9, 64-bit page numbers), read
// with pread and checked against what a read-only cursor walk of the main database
// dereferences (mdb.c: mdb_page_search_root, mdb_cursor_sibling, mdb_node_read).
// Layout: page = 16-byte header {pgno u64, pad u16, flags u16, lower u16, upper u16}
// then u16 node offsets; node = {lo u16, hi u16, flags u16, ksize u16, key, data};
// pages 0 and 1 are meta pages, the one with the larger txnid is current.
#include "lmdb_check.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <utility>
#include <vector>

#include "taihu/arch/error.hpp"

namespace taihu::caffe {
namespace {

constexpr std::size_t kPageHeader = 16;
constexpr std::size_t kNodeHeader = 8;
constexpr std::uint16_t kBranch = 0x01, kLeaf = 0x02, kOverflow = 0x04, kMeta = 0x08, kLeaf2 = 0x20, kSubPage = 0x40;
constexpr std::uint16_t kStructuralFlags = kBranch | kLeaf | kOverflow | kMeta | kLeaf2 | kSubPage;
constexpr std::uint16_t kBigData = 0x01, kSubData = 0x02;
constexpr std::uint32_t kMagic = 0xBEEFC0DE, kVersion = 1;
constexpr std::uint16_t kDupSort = 0x04;          // MDB_DUPSORT
constexpr std::uint64_t kInvalidPage = ~0ull;     // md_root of an empty database
constexpr unsigned kCursorStack = 32;             // liblmdb's deepest cursor
constexpr std::size_t kMetaBytes = kPageHeader + 136;  // header + MDB_meta

std::string hex(unsigned v) {
  char b[16];
  std::snprintf(b, sizeof b, "0x%x", v);
  return b;
}

template <class T>
T load(const unsigned char* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

struct Meta {
  std::uint32_t page_size;
  std::uint16_t main_flags, main_depth;
  std::uint64_t main_entries, main_root, last_page, txnid;
};

class File {
 public:
  explicit File(std::string path) : path_(std::move(path)) {
    fd_ = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd_ < 0) throw Error(path_ + ": cannot open (" + std::strerror(errno) + ")");
    struct stat st {};
    if (::fstat(fd_, &st) != 0) throw Error(path_ + ": cannot stat (" + std::strerror(errno) + ")");
    size_ = static_cast<std::uint64_t>(st.st_size);
  }
  ~File() { ::close(fd_); }
  File(const File&) = delete;
  File& operator=(const File&) = delete;
  std::uint64_t size() const { return size_; }
  const std::string& path() const { return path_; }
  [[noreturn]] void corrupt(const std::string& what) const { throw Error(path_ + ": corrupt LMDB file: " + what); }

  void read(std::uint64_t offset, std::size_t n, unsigned char* out) const {
    std::size_t done = 0;
    while (done < n) {
      const ssize_t r = ::pread(fd_, out + done, n - done, static_cast<off_t>(offset + done));
      if (r < 0 && errno == EINTR) continue;
      if (r < 0) throw Error(path_ + ": read failed at byte " + std::to_string(offset + done) + " (" + std::strerror(errno) + ")");
      if (r == 0) throw Error(path_ + ": truncated LMDB file: ends at byte " + std::to_string(offset + done));
      done += static_cast<std::size_t>(r);
    }
  }

 private:
  std::string path_;
  int fd_ = -1;
  std::uint64_t size_ = 0;
};

Meta read_meta(const File& f, std::uint64_t offset, int which) {
  unsigned char b[kMetaBytes];
  f.read(offset, sizeof b, b);
  const std::string name = "meta page " + std::to_string(which);
  if (!(load<std::uint16_t>(b + 10) & kMeta)) f.corrupt(name + " is not marked as a meta page (not an LMDB file?)");
  const unsigned char* m = b + kPageHeader;
  if (load<std::uint32_t>(m) != kMagic) f.corrupt(name + " has no LMDB magic number (not an LMDB file?)");
  if (load<std::uint32_t>(m + 4) != kVersion) {
    f.corrupt(name + " has format version " + std::to_string(load<std::uint32_t>(m + 4)) + ", liblmdb reads version 1");
  }
  const unsigned char* main_db = m + 24 + 48;  // mm_dbs[1]: {pad u32, flags u16, depth u16, 4 counts u64, root u64}
  Meta meta{};
  meta.page_size = load<std::uint32_t>(m + 24);  // mm_dbs[0].md_pad holds the page size
  meta.main_flags = load<std::uint16_t>(main_db + 4);
  meta.main_depth = load<std::uint16_t>(main_db + 6);
  meta.main_entries = load<std::uint64_t>(main_db + 32);
  meta.main_root = load<std::uint64_t>(main_db + 40);
  meta.last_page = load<std::uint64_t>(m + 120);
  meta.txnid = load<std::uint64_t>(m + 128);
  const std::uint32_t ps = meta.page_size;
  if (ps < 512 || ps > 65536 || (ps & (ps - 1)) != 0) {
    f.corrupt(name + " gives a page size of " + std::to_string(ps) + " bytes (a power of two from 512 to 65536 expected)");
  }
  return meta;
}

// Walks the main database's B-tree from its root, depth first, checking every branch
// and leaf page and every overflow run it refers to. Returns the records counted.
std::uint64_t walk_tree(const File& f, const Meta& meta, std::uint64_t pages_in_file) {
  const std::size_t ps = meta.page_size;
  const std::uint64_t usable = std::min(meta.last_page + 1, pages_in_file);  // page numbers < usable are readable
  std::vector<bool> seen(usable, false);
  std::vector<std::pair<std::uint64_t, unsigned>> todo{{meta.main_root, 1}};  // (page, level; root = 1)
  std::vector<unsigned char> page(ps);
  std::uint64_t entries = 0;
  while (!todo.empty()) {
    const auto [pgno, level] = todo.back();
    todo.pop_back();
    const bool leaf = level == meta.main_depth;
    const std::string where = "page " + std::to_string(pgno) + (leaf ? " (leaf" : " (branch") + ", level " + std::to_string(level) + ")";
    if (pgno < 2 || pgno >= usable) f.corrupt(where + " is outside the file's " + std::to_string(usable) + " pages");
    if (seen[pgno]) f.corrupt(where + " is referenced twice in the tree");
    seen[pgno] = true;
    f.read(pgno * ps, ps, page.data());
    const unsigned char* p = page.data();
    if (load<std::uint64_t>(p) != pgno) f.corrupt(where + " carries page number " + std::to_string(load<std::uint64_t>(p)));
    const std::uint16_t flags = load<std::uint16_t>(p + 10) & kStructuralFlags;
    if (flags != (leaf ? kLeaf : kBranch)) {
      f.corrupt(where + " has page flags " + hex(flags) + ", expected a plain " + (leaf ? "leaf" : "branch") +
                " page at this level of a depth-" + std::to_string(meta.main_depth) + " tree");
    }
    const std::size_t lower = load<std::uint16_t>(p + 12), upper = load<std::uint16_t>(p + 14);
    if (lower < kPageHeader || lower > upper || upper > ps || (lower - kPageHeader) % 2 != 0) {
      f.corrupt(where + " has free-space bounds lower " + std::to_string(lower) + ", upper " + std::to_string(upper) +
                " outside its " + std::to_string(ps) + " bytes");
    }
    const std::size_t keys = (lower - kPageHeader) / 2;
    if (keys < (leaf ? 1u : 2u)) {  // liblmdb asserts a branch page has >= 2 children
      f.corrupt(where + " has " + std::to_string(keys) + " entries");
    }
    for (std::size_t i = 0; i < keys; ++i) {
      const std::size_t off = load<std::uint16_t>(p + kPageHeader + 2 * i);
      const std::string node = where + ", entry " + std::to_string(i);
      if (off < upper || off + kNodeHeader > ps) f.corrupt(node + " starts at byte " + std::to_string(off) + ", outside the page's node area");
      const unsigned char* n = p + off;
      const std::uint64_t lo = load<std::uint16_t>(n), hi = load<std::uint16_t>(n + 2);
      const std::uint16_t node_flags = load<std::uint16_t>(n + 4);
      const std::size_t key_size = load<std::uint16_t>(n + 6);
      if (off + kNodeHeader + key_size > ps) f.corrupt(node + " has a " + std::to_string(key_size) + "-byte key running past the page");
      if (!leaf) {
        const std::uint64_t child = lo | hi << 16 | std::uint64_t{node_flags} << 32;
        todo.emplace_back(child, level + 1);
        continue;
      }
      const std::uint64_t data_size = lo | hi << 16;
      const std::size_t data_at = off + kNodeHeader + key_size;
      if (node_flags == kBigData) {
        if (data_at + 8 > ps) f.corrupt(node + " has its overflow page number past the page");
        const std::uint64_t first = load<std::uint64_t>(p + data_at);
        const std::uint64_t count = (kPageHeader - 1 + data_size) / ps + 1;
        if (first < 2 || first >= usable || count > usable - first) {
          f.corrupt(node + " has a " + std::to_string(data_size) + "-byte value on pages " + std::to_string(first) + " to " +
                    std::to_string(first + count - 1) + ", outside the file's " + std::to_string(usable) + " pages");
        }
      } else if (node_flags == 0 || node_flags == kSubData) {
        if (data_at + data_size > ps) f.corrupt(node + " has a " + std::to_string(data_size) + "-byte value running past the page");
      } else {
        f.corrupt(node + " has node flags " + hex(node_flags) + " (duplicate data in a database without duplicates)");
      }
      ++entries;
    }
  }
  return entries;
}

}  // namespace

LmdbLayout check_lmdb_file(const std::string& data_file) {
  const File f(data_file);
  if (f.size() == 0) throw Error(data_file + ": empty file, not an LMDB database");
  if (f.size() < kMetaBytes) throw Error(data_file + ": " + std::to_string(f.size()) + " bytes, too short for an LMDB file");
  const Meta m0 = read_meta(f, 0, 0);
  if (f.size() < m0.page_size + kMetaBytes) {
    throw Error(data_file + ": truncated LMDB file: " + std::to_string(f.size()) + " bytes, shorter than its two meta pages");
  }
  const Meta m1 = read_meta(f, m0.page_size, 1);
  if (m1.page_size != m0.page_size) {
    f.corrupt("the meta pages give page sizes " + std::to_string(m0.page_size) + " and " + std::to_string(m1.page_size));
  }
  const Meta& m = m1.txnid > m0.txnid ? m1 : m0;  // as liblmdb's mdb_env_pick_meta
  const std::uint64_t ps = m.page_size;
  const std::uint64_t pages_in_file = f.size() / ps;
  if (m.last_page < 1 || m.last_page >= ~0ull / ps || pages_in_file < m.last_page + 1) {
    const std::uint64_t pages = m.last_page + 1;
    throw Error(data_file + ": truncated LMDB file: " + std::to_string(f.size()) + " bytes, its meta page says " +
                std::to_string(pages) + " pages of " + std::to_string(ps) + " bytes (" +
                (pages > ~0ull / ps ? std::string("more than 2^64") : std::to_string(pages * ps)) + ")");
  }
  if (m.main_flags & kDupSort) f.corrupt("the main database has sorted duplicates (MDB_DUPSORT), not Caffe's key -> Datum layout");
  LmdbLayout layout{m.page_size, m.last_page, 0, m.main_depth};
  if (m.main_root == kInvalidPage) {
    if (m.main_entries != 0 || m.main_depth != 0) f.corrupt("the main database has no root page but claims " + std::to_string(m.main_entries) + " records");
    return layout;
  }
  if (m.main_depth < 1 || m.main_depth > kCursorStack) {
    f.corrupt("the main database claims a depth of " + std::to_string(m.main_depth) + " (1 to " + std::to_string(kCursorStack) + " expected)");
  }
  layout.entries = walk_tree(f, m, pages_in_file);
  if (layout.entries != m.main_entries) {
    f.corrupt("the meta page claims " + std::to_string(m.main_entries) + " records, the tree holds " + std::to_string(layout.entries));
  }
  return layout;
}

}  // namespace taihu::caffe
