// libFuzzer harness: Caffe Datum records as the data layer reads them from an LMDB,
// through taihu::caffe::LmdbReader (open, page structure check, count, cursor walk with
// wrap-around, Datum decode). The input is split at each "\n--\n" into up to 8 record
// values; each is stored verbatim (no re-encoding) under Caffe's "%08d" keys in a valid
// single-file LMDB on /dev/shm, which the reader then reads in full, twice.
// A taihu::Error is a clean rejection; a crash is a bug.
// The LMDB container itself is written by liblmdb here, not mutated, so that every
// input reaches the Datum decode; fuzz_lmdb_file.cpp fuzzes the container (the page
// structure check before liblmdb maps it).
#include <lmdb.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "fuzz_util.hpp"
#include "lmdb_read_all.hpp"

namespace {
void must(int rc) {
  if (rc != MDB_SUCCESS) std::abort();  // the harness's own failure, not the reader's
}

std::string write_db(const std::vector<std::string>& values) {
  static const std::string path = "/dev/shm/taihu-fuzz-lmdb-" + std::to_string(::getpid()) + ".mdb";
  std::remove(path.c_str());
  taihu::fuzz::scratch_files().paths.insert(path);  // removed at exit
  MDB_env* env = nullptr;
  must(mdb_env_create(&env));
  must(mdb_env_set_mapsize(env, std::size_t{1} << 26));
  must(mdb_env_open(env, path.c_str(), MDB_NOSUBDIR | MDB_NOLOCK | MDB_NOSYNC, 0600));
  MDB_txn* txn = nullptr;
  MDB_dbi dbi = 0;
  must(mdb_txn_begin(env, nullptr, 0, &txn));
  must(mdb_dbi_open(txn, nullptr, 0, &dbi));
  for (std::size_t i = 0; i < values.size(); ++i) {
    char key[16];
    std::snprintf(key, sizeof key, "%08zu", i);
    MDB_val k{8, key};
    MDB_val v{values[i].size(), const_cast<char*>(values[i].data())};
    must(mdb_put(txn, dbi, &k, &v, 0));
  }
  must(mdb_txn_commit(txn));
  mdb_env_close(env);
  return path;
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string input(reinterpret_cast<const char*>(data), size);
  std::vector<std::string> values;
  std::size_t start = 0;
  while (values.size() < 8) {
    const auto sep = input.find("\n--\n", start);
    values.push_back(input.substr(start, sep == std::string::npos ? std::string::npos : sep - start));
    if (sep == std::string::npos) break;
    start = sep + 4;
  }
  const std::string path = write_db(values);
  taihu::fuzz::read_all_lmdb_records(path);
  return 0;
}
