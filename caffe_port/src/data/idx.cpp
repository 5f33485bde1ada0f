// MNIST IDX reading and writing through zlib (gzip or plain files alike); writes are
// atomic (temp file + rename), so a full disk leaves no truncated file.
// A header's count is never trusted beyond the file: a plain file must hold the bytes
// it claims before anything is allocated; a gzip file is checked against deflate's
// best ratio, then read in chunks so memory grows only with the data really there.
#include <sys/stat.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>

#include "taihu/arch/error.hpp"
#include "taihu/caffe/data_sources.hpp"
#include "taihu/caffe/proto.hpp"

namespace taihu::caffe {
namespace {

struct GzFile {
  explicit GzFile(const std::string& path, const char* mode) : path_(path), f_(gzopen(path.c_str(), mode)) {
    if (!f_) throw Error(path + ": cannot open (" + std::strerror(errno) + ")");
  }
  ~GzFile() {
    if (f_) gzclose(f_);
  }
  GzFile(const GzFile&) = delete;
  GzFile& operator=(const GzFile&) = delete;
  // gzread/gzwrite take an unsigned length and return an int: at most this per call.
  static constexpr std::size_t kChunk = std::size_t{1} << 30;
  // Reads up to n bytes; returns how many arrived (fewer only at the end of the file).
  std::size_t read_some(void* dst, std::size_t n) {
    std::size_t done = 0;
    while (done < n) {
      const int got = gzread(f_, static_cast<char*>(dst) + done, static_cast<unsigned>(std::min(kChunk, n - done)));
      if (got < 0) {
        int zerr = 0;
        const char* msg = gzerror(f_, &zerr);
        throw Error(path_ + ": corrupt IDX file (" + (zerr == Z_ERRNO ? std::strerror(errno) : msg) + ")");
      }
      if (got == 0) break;
      done += static_cast<std::size_t>(got);
    }
    return done;
  }
  void read(void* dst, std::size_t n, const char* what) {
    if (read_some(dst, n) != n) throw Error(path_ + ": truncated or corrupt IDX file (reading " + what + ")");
  }
  // The largest payload the file can hold after `header` bytes: exact for a plain
  // file, deflate's maximum ratio (1032:1) times the file size for gzip.
  std::uint64_t payload_bound(std::uint64_t header) const {
    struct stat st {};
    if (::stat(path_.c_str(), &st) != 0) throw Error(path_ + ": cannot stat (" + std::strerror(errno) + ")");
    const auto size = static_cast<std::uint64_t>(st.st_size);
    if (gzdirect(f_)) return size > header ? size - header : 0;
    return size * 1032 + 1024;
  }
  // Reads exactly n payload bytes into out, growing it as data arrives.
  void read_payload(std::vector<std::uint8_t>* out, std::uint64_t n, const std::string& claim) {
    const std::uint64_t bound = payload_bound(gzdirect(f_) ? static_cast<std::uint64_t>(gztell(f_)) : 0);
    if (n > bound || n > out->max_size()) {
      throw Error(path_ + ": truncated IDX file: the header claims " + claim + " (" + std::to_string(n) +
                  " bytes), more than the file can hold (" + (gzdirect(f_) ? "" : "gzip, at most ") +
                  std::to_string(bound) + " bytes)");
    }
    out->clear();
    if (gzdirect(f_)) out->reserve(static_cast<std::size_t>(n));
    constexpr std::size_t kGrow = std::size_t{64} << 20;
    while (out->size() < n) {
      const std::size_t have = out->size(), want = static_cast<std::size_t>(std::min<std::uint64_t>(kGrow, n - have));
      out->resize(have + want);
      const std::size_t got = read_some(out->data() + have, want);
      if (got != want) {
        throw Error(path_ + ": truncated IDX file: the header claims " + claim + " (" + std::to_string(n) +
                    " bytes), the file ends after " + std::to_string(have + got));
      }
    }
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
  // n < 2^32 and rows, cols <= 4096: the product fits 64 bits.
  const std::uint64_t bytes = std::uint64_t{n} * rows * cols;
  img.read_payload(&set.pixels, bytes, std::to_string(n) + " images of " + std::to_string(rows) + "x" + std::to_string(cols));
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
    std::vector<std::uint8_t> l;
    lab.read_payload(&l, n, std::to_string(n) + " labels");
    set.labels.assign(n, 0);
    for (std::size_t i = 0; i < n; ++i) set.labels[i] = l[i];
  } else {
    set.labels.assign(n, 0);
  }
  return set;
}

namespace {

// `raw` as a gzip stream (RFC 1952, level 6 as gzopen "wb6"); zlib counts input in
// 32-bit lengths, so it is fed in chunks.
std::string gzip(const std::string& raw, const std::string& path) {
  z_stream z{};
  if (deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
    throw Error(path + ": zlib deflateInit2 failed");
  }
  constexpr std::size_t kChunk = std::size_t{1} << 30;
  std::string out;
  char buf[1 << 16];
  std::size_t fed = 0;
  int rc = Z_OK;
  do {
    if (z.avail_in == 0 && fed < raw.size()) {
      const std::size_t n = std::min(kChunk, raw.size() - fed);
      z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(raw.data() + fed));
      z.avail_in = static_cast<uInt>(n);
      fed += n;
    }
    z.next_out = reinterpret_cast<Bytef*>(buf);
    z.avail_out = sizeof buf;
    rc = deflate(&z, fed == raw.size() ? Z_FINISH : Z_NO_FLUSH);
    if (rc == Z_STREAM_ERROR) break;
    out.append(buf, sizeof buf - z.avail_out);
  } while (rc != Z_STREAM_END);
  deflateEnd(&z);
  if (rc != Z_STREAM_END) throw Error(path + ": zlib deflate failed");
  return out;
}

bool gzip_name(const std::string& path) {
  return path.size() > 3 && path.compare(path.size() - 3, 3, ".gz") == 0;
}

// Whole files through write_file_atomic: a failed write (a full disk) leaves nothing
// under the final name.
void write_idx_file(const std::string& path, const std::string& raw) {
  write_file_atomic(path, gzip_name(path) ? gzip(raw, path) : raw);
}

}  // namespace

void write_idx_images(const std::string& path, const ImageSet& set) {
  unsigned char head[16];
  put_be32(head, 0x803);
  put_be32(head + 4, static_cast<std::uint32_t>(set.count()));
  put_be32(head + 8, static_cast<std::uint32_t>(set.height));
  put_be32(head + 12, static_cast<std::uint32_t>(set.width));
  std::string raw(reinterpret_cast<const char*>(head), sizeof head);
  raw.append(reinterpret_cast<const char*>(set.pixels.data()), set.pixels.size());
  write_idx_file(path, raw);
}

void write_idx_labels(const std::string& path, const ImageSet& set) {
  unsigned char head[8];
  put_be32(head, 0x801);
  put_be32(head + 4, static_cast<std::uint32_t>(set.count()));
  std::string raw(reinterpret_cast<const char*>(head), sizeof head);
  raw.reserve(sizeof head + set.count());
  for (std::size_t i = 0; i < set.count(); ++i) raw.push_back(static_cast<char>(set.labels[i]));
  write_idx_file(path, raw);
}

}  // namespace taihu::caffe
