// CIFAR-10 binary batches: records of 1 label byte + 3072 pixel bytes (R, G, B planes).
#include <fstream>

#include "taihu/arch/error.hpp"
#include "taihu/caffe/data_sources.hpp"

namespace taihu::caffe {

ImageSet read_cifar10(const std::string& paths) {
  ImageSet set;
  set.channels = 3;
  set.height = set.width = 32;
  constexpr std::size_t kRecord = 1 + 3072;
  std::size_t start = 0;
  while (start <= paths.size()) {
    const std::size_t comma = paths.find(',', start);
    const std::string path = paths.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    start = comma == std::string::npos ? paths.size() + 1 : comma + 1;
    if (path.empty()) continue;
    std::ifstream in(path, std::ios::binary | std::ios::ate);
    if (!in) throw Error(path + ": cannot open CIFAR-10 file");
    const auto size = static_cast<std::size_t>(in.tellg());
    if (size == 0 || size % kRecord != 0) {
      throw Error(path + ": " + std::to_string(size) + " bytes is not a whole number of CIFAR-10 records (3073 bytes each)");
    }
    in.seekg(0);
    std::vector<unsigned char> bytes(size);
    in.read(reinterpret_cast<char*>(bytes.data()), static_cast<std::streamsize>(size));
    for (std::size_t r = 0; r < size / kRecord; ++r) {
      const unsigned char* rec = bytes.data() + r * kRecord;
      if (rec[0] > 9) throw Error(path + ": record " + std::to_string(r) + " has label " + std::to_string(rec[0]) + " (expected 0-9)");
      set.labels.push_back(rec[0]);
      set.pixels.insert(set.pixels.end(), rec + 1, rec + kRecord);
    }
  }
  if (set.count() == 0) throw Error("CIFAR-10 source \"" + paths + "\": no records");
  return set;
}

}  // namespace taihu::caffe
