// Structural check of an LMDB data file before liblmdb maps it. liblmdb trusts its
// page structure: a node whose key or value runs past its page, a value or overflow
// run past the end of the file, a branch page with fewer than two children, or a
// duplicate-data node in a plain database makes it (or the caller reading the value it
// returns) fault with SIGBUS/SIGSEGV or abort on an assertion. check_lmdb_file reads
// the file with pread (never through a mapping) and verifies everything a read-only
// cursor walk of the main database dereferences; a file that passes can be walked
// with MDB_FIRST/MDB_NEXT/MDB_GET_CURRENT and its values read without leaving the file.
// Cost: one read of every branch and leaf page (overflow values are range-checked,
// not read). The file must not change between the check and the walk (taihu opens
// LMDBs read-only with MDB_NOLOCK, which already assumes no concurrent writer).
#pragma once
#include <cstdint>
#include <string>

namespace taihu::caffe {

struct LmdbLayout {
  std::uint32_t page_size = 0;
  std::uint64_t last_page = 0;  // the newest meta page's last used page number
  std::uint64_t entries = 0;    // records in the main database (counted, = the meta's count)
  std::uint16_t depth = 0;      // B-tree depth of the main database (0 when empty)
};

// Throws taihu::Error "<data_file>: ..." naming the first inconsistency found.
LmdbLayout check_lmdb_file(const std::string& data_file);

}  // namespace taihu::caffe
