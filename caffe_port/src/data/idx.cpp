// MNIST IDX reading and writing through zlib (gzip or plain files alike).
#include <zlib.h>

#include <cstdint>
#include <memory>

#include "taihu/arch/error.hpp"
#include "taihu/caffe/data_sources.hpp"

namespace taihu::caffe {
namespace {

struct GzFile {
  explicit GzFile(const std::string& path, const char* mode) : path_(path), f_(gzopen(path.c_str(), mode)) {
    if (!f_) throw Error(path + ": cannot open");
  }
  ~GzFile() {
    if (f_) gzclose(f_);
  }
  GzFile(const GzFile&) = delete;
  GzFile& operator=(const GzFile&) = delete;
  void read(void* dst, std::size_t n, const char* what) {
    const int got = gzread(f_, dst, static_cast<unsigned>(n));
    if (got < 0 || static_cast<std::size_t>(got) != n) {
      throw Error(path_ + ": truncated or corrupt IDX file (reading " + what + ")");
    }
  }
  void write(const void* src, std::size_t n) {
    if (gzwrite(f_, src, static_cast<unsigned>(n)) != static_cast<int>(n)) throw Error(path_ + ": write failed");
  }
  void close() {
    if (gzclose(f_) != Z_OK) {
      f_ = nullptr;
      throw Error(path_ + ": write failed on close");
    }
    f_ = nullptr;
  }
  std::string path_;
  gzFile f_;
};

std::uint32_t be32(const unsigned char* b) {
  return (std::uint32_t{b[0]} << 24) | (std::uint32_t{b[1]} << 16) | (std::uint32_t{b[2]} << 8) | b[3];
}

void put_be32(unsigned char* b, std::uint32_t v) {
  b[0] = static_cast<unsigned char>(v >> 24);
  b[1] = static_cast<unsigned char>(v >> 16);
  b[2] = static_cast<unsigned char>(v >> 8);
  b[3] = static_cast<unsigned char>(v);
}

}  // namespace

ImageSet read_idx(const std::string& image_path, const std::string& label_path) {
  ImageSet set;
  GzFile img(image_path, "rb");
  unsigned char head[16];
  img.read(head, 16, "header");
  if (be32(head) != 0x00000803) {
    throw Error(image_path + ": not an IDX image file (magic " + std::to_string(be32(head)) + ", expected 2051)");
  }
  const std::uint32_t n = be32(head + 4), rows = be32(head + 8), cols = be32(head + 12);
  if (rows == 0 || cols == 0 || rows > 4096 || cols > 4096) throw Error(image_path + ": implausible image size");
  set.channels = 1;
  set.height = static_cast<int>(rows);
  set.width = static_cast<int>(cols);
  set.pixels.resize(static_cast<std::size_t>(n) * rows * cols);
  img.read(set.pixels.data(), set.pixels.size(), "pixels");
  set.labels.assign(n, 0);
  if (!label_path.empty()) {
    GzFile lab(label_path, "rb");
    unsigned char lh[8];
    lab.read(lh, 8, "header");
    if (be32(lh) != 0x00000801) {
      throw Error(label_path + ": not an IDX label file (magic " + std::to_string(be32(lh)) + ", expected 2049)");
    }
    if (be32(lh + 4) != n) {
      throw Error(label_path + ": " + std::to_string(be32(lh + 4)) + " labels for " + std::to_string(n) + " images in " + image_path);
    }
    std::vector<unsigned char> l(n);
    lab.read(l.data(), n, "labels");
    for (std::size_t i = 0; i < n; ++i) set.labels[i] = l[i];
  }
  return set;
}

static const char* write_mode(const std::string& path) {
  return path.size() > 3 && path.compare(path.size() - 3, 3, ".gz") == 0 ? "wb6" : "wbT";
}

void write_idx_images(const std::string& path, const ImageSet& set) {
  GzFile f(path, write_mode(path));
  unsigned char head[16];
  put_be32(head, 0x803);
  put_be32(head + 4, static_cast<std::uint32_t>(set.count()));
  put_be32(head + 8, static_cast<std::uint32_t>(set.height));
  put_be32(head + 12, static_cast<std::uint32_t>(set.width));
  f.write(head, 16);
  f.write(set.pixels.data(), set.pixels.size());
  f.close();
}

void write_idx_labels(const std::string& path, const ImageSet& set) {
  GzFile f(path, write_mode(path));
  unsigned char head[8];
  put_be32(head, 0x801);
  put_be32(head + 4, static_cast<std::uint32_t>(set.count()));
  f.write(head, 8);
  std::vector<unsigned char> l(set.count());
  for (std::size_t i = 0; i < l.size(); ++i) l[i] = static_cast<unsigned char>(set.labels[i]);
  f.write(l.data(), l.size());
  f.close();
}

}  // namespace taihu::caffe
