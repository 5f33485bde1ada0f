// Dataset readers the data layers and the CLI share:
//   - LMDB databases of Caffe Datum records (liblmdb), read sequentially with
//     wrap-around, as Caffe's DataLayer reads them; and writing them (convert_mnist);
//   - MNIST IDX files (idx3-ubyte images, idx1-ubyte labels), gzip or plain (zlib);
//   - CIFAR-10 binary batches (1 label byte + 3x32x32 pixel bytes per record).
// Every reader throws taihu::Error naming the file and what was wrong with it.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "taihu/caffe/proto.hpp"

namespace taihu::caffe {

// An in-memory labelled image set, uint8 pixels, CHW per record.
struct ImageSet {
  int channels = 0, height = 0, width = 0;
  std::vector<std::uint8_t> pixels;  // count * channels * height * width
  std::vector<int> labels;
  std::size_t count() const { return labels.size(); }
  std::size_t image_size() const {
    return static_cast<std::size_t>(channels) * static_cast<std::size_t>(height) *
           static_cast<std::size_t>(width);
  }
};

// Reads MNIST IDX images (+ labels when label_path is non-empty; else labels 0).
ImageSet read_idx(const std::string& image_path, const std::string& label_path);
// Writes IDX files (gzip when the name ends in .gz): used by the synthetic generator.
void write_idx_images(const std::string& path, const ImageSet& set);
void write_idx_labels(const std::string& path, const ImageSet& set);
// Reads CIFAR-10 binary files (comma-separated list), appending records.
ImageSet read_cifar10(const std::string& paths);

// Sequential reader over an LMDB of Datum records; wraps around at the end.
class LmdbReader {
 public:
  explicit LmdbReader(const std::string& path);  // throws naming the path
  ~LmdbReader();
  LmdbReader(const LmdbReader&) = delete;
  LmdbReader& operator=(const LmdbReader&) = delete;
  std::size_t entries() const { return entries_; }
  // Reads the record at `position` (0-based, sequential access is fast).
  proto::Datum read(std::size_t position);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  std::size_t entries_ = 0;
};

// Writes Datum records to a new LMDB (Caffe's convert_mnist_data key format "%08d"),
// built in a temporary directory beside `path` that commit() renames into place; a
// writer destroyed before commit() (an error, a full disk) removes it.
class LmdbWriter {
 public:
  explicit LmdbWriter(const std::string& path);  // fails if it exists
  ~LmdbWriter();
  LmdbWriter(const LmdbWriter&) = delete;
  LmdbWriter& operator=(const LmdbWriter&) = delete;
  void put(const std::string& key, const proto::Datum& datum);
  void commit();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// A set's records [first, first+count) as Datums into a new LMDB at db_path.
void write_lmdb(const ImageSet& set, std::size_t first, std::size_t count,
                const std::string& db_path);

// Synthetic handwritten-like digits (seven-segment strokes with random offsets,
// thickness and noise), 28x28, labels 0-9: the demo's and the tests' MNIST stand-in.
ImageSet synthetic_digits(std::size_t count, std::uint64_t seed);

}  // namespace taihu::caffe
