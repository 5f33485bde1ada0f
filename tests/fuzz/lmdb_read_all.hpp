// How the LMDB harnesses drive taihu::caffe::LmdbReader once it has a database file:
// every record read in order, twice (the second pass wraps around, as the Data layer's
// epochs do), then a rewind to record 0 from the middle. A taihu::Error is a clean
// rejection and is swallowed; anything else (a signal, an ASan report) is a finding.
#pragma once
#include <cstddef>
#include <string>

#include "taihu/arch/error.hpp"
#include "taihu/caffe/data_sources.hpp"

namespace taihu::fuzz {

inline void read_all_lmdb_records(const std::string& path) {
  try {
    taihu::caffe::LmdbReader reader(path);
    for (std::size_t i = 0; i < 2 * reader.entries(); ++i) {
      const auto d = reader.read(i);
      (void)d.data().size();
    }
    (void)reader.read(0);  // rewind from the middle
  } catch (const taihu::Error&) {
  }
}

}  // namespace taihu::fuzz
