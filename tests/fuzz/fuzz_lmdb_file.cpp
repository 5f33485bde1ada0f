// libFuzzer harness: a whole LMDB data file as a user hands it to the Data layer
// (data_param.source), through taihu::caffe::LmdbReader: the structural check of the
// pages (lmdb_check.cpp), liblmdb's open and cursor walk, and the Datum decode. The
// input is written verbatim as a single-file LMDB (MDB_NOSUBDIR) and read in full,
// twice, then rewound. A taihu::Error is a clean rejection; a signal inside liblmdb
// (it trusts its page structure) or an ASan report in the reader is a bug.
// fuzz_lmdb_datum.cpp covers the record values in a well-formed container.
#include <cstddef>
#include <cstdint>

#include "fuzz_util.hpp"
#include "lmdb_read_all.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string path = taihu::fuzz::scratch_file(data, size, "lmdb-file", ".mdb");
  taihu::fuzz::read_all_lmdb_records(path);
  return 0;
}
