// SEG-Y shot gathers through segyio (see segy.hpp).
#include <segyio/segy.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <algorithm>
#include <cstring>
#include <memory>

#include "taihu/arch/atomic_file.hpp"
#include "taihu/arch/error.hpp"
#include "taihu/stencil/segy.hpp"

namespace taihu::stencil {
namespace {

struct FileCloser {
  void operator()(segy_file* f) const { segy_close(f); }
};
using SegyPtr = std::unique_ptr<segy_file, FileCloser>;

void check(int rc, const std::string& path, const char* what) {
  if (rc != SEGY_OK) throw Error("taihu: SEG-Y '" + path + "': " + what + " failed (segyio error " + std::to_string(rc) + ")");
}

// A segyio call that writes: segyio reports a failed fopen/fseek/fwrite/fflush as a bare
// code, and errno at that moment holds the reason (ENOSPC, EFBIG, EIO, ...).
template <class Call>
void write_call(Call&& call, const std::string& path, const char* what) {
  errno = 0;
  const int rc = call();
  const int err = errno;
  if (rc == SEGY_OK) return;
  if (err != 0 && rc >= SEGY_FOPEN_ERROR && rc <= SEGY_FWRITE_ERROR)
    throw Error("taihu: cannot write SEG-Y '" + path + "' (" + what + "): " + std::strerror(err));
  check(rc, path, what);
}

constexpr int kCoordScalar = -100;  // stored value / 100 = metres

std::int32_t scaled(double metres) { return static_cast<std::int32_t>(std::lround(metres * 100.0)); }

// Creates `path` atomically as a big-endian IEEE-float SEG-Y file: `fill(fp)` writes its
// headers and traces into segyio's file on a temporary (AtomicTempPath), which is
// fsync'ed and renamed over `path` once flushed and closed; on any error the temporary
// is removed and nothing appears under `path`.
template <class Fill>
void write_segy_atomically(const std::string& path, Fill&& fill) {
  AtomicTempPath tmp(path);
  {
    errno = 0;
    SegyPtr fp(segy_open(tmp.temp_path().c_str(), "w+b"));
    if (!fp) throw Error("taihu: cannot create SEG-Y file '" + path + "': " + std::strerror(errno ? errno : EIO));
    check(segy_set_format(fp.get(), static_cast<int>(SEGY_IEEE_FLOAT_4_BYTE) | static_cast<int>(SEGY_MSB)), path, "set format");
    fill(fp.get());
    write_call([&] { return segy_flush(fp.get(), false); }, path, "flush");
    // segy_close flushes again but ignores fclose's result; everything is written by now.
  }
  tmp.commit();
}

double unscale(std::int32_t v, std::int32_t scalar) {
  if (scalar == 0) return v;
  return scalar < 0 ? double(v) / -scalar : double(v) * scalar;
}

}  // namespace

std::string segy_sampling_problem(double dt, long samples) {
  char buf[256];
  if (samples < 1 || samples > kSegyMaxSamples) {
    std::snprintf(buf, sizeof buf, "a SEG-Y trace holds 1..%ld samples, the run has %ld", kSegyMaxSamples, samples);
    return buf;
  }
  const double us = dt * 1e6;
  if (!(us >= 0.5 && us < double(kSegyMaxIntervalUs) + 0.5)) {
    std::snprintf(buf, sizeof buf,
                  "the SEG-Y sample interval is whole microseconds, 1..%ld us (%g..%g s): dt = %g s does not fit",
                  kSegyMaxIntervalUs, 1e-6, double(kSegyMaxIntervalUs) * 1e-6, dt);
    return buf;
  }
  if (std::abs(us - std::round(us)) > 1e-6) {  // the header would say a different dt
    std::snprintf(buf, sizeof buf,
                  "dt = %g s is not a whole number of microseconds, which is all SEG-Y stores (use %g or %g s)", dt,
                  std::floor(us) * 1e-6, std::ceil(us) * 1e-6);
    return buf;
  }
  return "";
}

namespace {
void write_traces(const std::string& path, const std::vector<ShotRecord>& shots, const std::vector<std::string>& lines);
}  // namespace

void write_segy(const std::string& path, const std::vector<ShotRecord>& shots) {
  write_traces(path, shots,
               {"C 1 SYNTHETIC SHOT GATHERS WRITTEN BY TAIHU-SEISMIC",
                "C 2 SAMPLES IEEE FLOAT32, COORDINATES IN METRES WITH SCALAR -100",
                "C 3 DEPTHS: SOURCE DEPTH (49), RECEIVER ELEVATION = -DEPTH (41), SCALAR -100"});
}

void write_segy_image(const std::string& path, const Grid& grid, const std::vector<float>& image) {
  if (image.size() != std::size_t(grid.points())) throw Error("taihu: write_segy_image: the image does not match the grid");
  std::vector<ShotRecord> columns(1);
  ShotRecord& r = columns[0];
  r.nt = int(grid.n[0]);
  r.dt = grid.h[0] * 1e-3;  // depth step in millimetres where the header says microseconds
  r.data = image;           // z fastest: one trace per (x, y) column
  for (long y = 0; y < grid.n[2]; ++y)
    for (long x = 0; x < grid.n[1]; ++x)
      r.receivers.push_back({0.0, double(x) * grid.h[1], grid.dim == 3 ? double(y) * grid.h[2] : 0.0});
  r.source = r.receivers.front();
  if (const std::string why = segy_sampling_problem(r.dt, r.nt); !why.empty())
    throw Error("taihu: SEG-Y image '" + path + "' (depth step " + std::to_string(grid.h[0]) +
                " m stored in mm): " + why);
  write_traces(path, columns,
               {"C 1 DEPTH IMAGE (REVERSE-TIME MIGRATION) WRITTEN BY TAIHU-SEISMIC",
                "C 2 ONE TRACE PER COLUMN AT GROUP X/Y (METRES, SCALAR -100), SAMPLES IEEE FLOAT32",
                "C 3 SAMPLE INTERVAL FIELDS HOLD THE DEPTH STEP IN MILLIMETRES, FIRST SAMPLE AT Z = 0"});
}

namespace {
void write_traces(const std::string& path, const std::vector<ShotRecord>& shots, const std::vector<std::string>& lines) {
  if (shots.empty()) throw Error("taihu: write_segy: no shots to write to '" + path + "'");
  const int ns = shots[0].nt;
  const double dt = shots[0].dt;
  if (const std::string why = segy_sampling_problem(dt, ns); !why.empty())
    throw Error("taihu: SEG-Y '" + path + "': " + why);
  const auto dt_us = static_cast<std::int32_t>(std::lround(dt * 1e6));
  write_segy_atomically(path, [&](segy_file* fp) {
    std::string text(3200, ' ');
    for (std::size_t i = 0; i < lines.size() && i < 40; ++i) text.replace(i * 80, std::min<std::size_t>(80, lines[i].size()), lines[i]);
    write_call([&] { return segy_write_textheader(fp, 0, text.c_str()); }, path, "text header");
    char bin[SEGY_BINARY_HEADER_SIZE] = {};
    segy_set_bfield(bin, SEGY_BIN_INTERVAL, dt_us);
    segy_set_bfield(bin, SEGY_BIN_SAMPLES, ns);
    segy_set_bfield(bin, SEGY_BIN_FORMAT, SEGY_IEEE_FLOAT_4_BYTE);
    segy_set_bfield(bin, SEGY_BIN_SEGY_REVISION, 0x0100);
    segy_set_bfield(bin, SEGY_BIN_TRACE_FLAG, 1);
    write_call([&] { return segy_write_binheader(fp, bin); }, path, "binary header");
    const long trace0 = SEGY_TEXT_HEADER_SIZE + SEGY_BINARY_HEADER_SIZE;
    const int bsize = segy_trsize(SEGY_IEEE_FLOAT_4_BYTE, ns);
    std::vector<float> buf(static_cast<std::size_t>(ns));
    int traceno = 0;
    for (std::size_t s = 0; s < shots.size(); ++s) {
      const ShotRecord& rec = shots[s];
      if (rec.nt != ns || std::abs(rec.dt - dt) > 1e-12)
        throw Error("taihu: write_segy: all shots must share nt and dt");
      for (std::size_t r = 0; r < rec.receivers.size(); ++r, ++traceno) {
        char th[SEGY_TRACE_HEADER_SIZE] = {};
        const Position& src = rec.source;
        const Position& g = rec.receivers[r];
        segy_set_field(th, SEGY_TR_SEQ_LINE, traceno + 1);
        segy_set_field(th, SEGY_TR_SEQ_FILE, traceno + 1);
        segy_set_field(th, SEGY_TR_FIELD_RECORD, static_cast<int>(s + 1));
        segy_set_field(th, SEGY_TR_NUMBER_ORIG_FIELD, static_cast<int>(r + 1));
        segy_set_field(th, SEGY_TR_ENERGY_SOURCE_POINT, static_cast<int>(s + 1));
        segy_set_field(th, SEGY_TR_TRACE_ID, 1);
        segy_set_field(th, SEGY_TR_OFFSET,
                       static_cast<std::int32_t>(std::lround(std::hypot(g.x - src.x, g.y - src.y))));
        segy_set_field(th, SEGY_TR_ELEV_SCALAR, kCoordScalar);
        segy_set_field(th, SEGY_TR_RECV_GROUP_ELEV, scaled(-g.z));
        segy_set_field(th, SEGY_TR_SOURCE_DEPTH, scaled(src.z));
        segy_set_field(th, SEGY_TR_SOURCE_GROUP_SCALAR, kCoordScalar);
        segy_set_field(th, SEGY_TR_SOURCE_X, scaled(src.x));
        segy_set_field(th, SEGY_TR_SOURCE_Y, scaled(src.y));
        segy_set_field(th, SEGY_TR_GROUP_X, scaled(g.x));
        segy_set_field(th, SEGY_TR_GROUP_Y, scaled(g.y));
        segy_set_field(th, SEGY_TR_COORD_UNITS, 1);
        segy_set_field(th, SEGY_TR_SAMPLE_COUNT, ns);
        segy_set_field(th, SEGY_TR_SAMPLE_INTER, dt_us);
        write_call([&] { return segy_write_traceheader(fp, traceno, th, trace0, bsize); }, path, "trace header");
        const float* t = rec.trace(r);
        std::copy(t, t + ns, buf.begin());
        check(segy_from_native(SEGY_IEEE_FLOAT_4_BYTE, ns, buf.data()), path, "sample conversion");
        write_call([&] { return segy_writetrace(fp, traceno, buf.data(), trace0, bsize); }, path, "trace");
      }
    }
  });
}
}  // namespace

void write_segy_like(const std::string& path, const std::string& like, const std::vector<float>& data) {
  SegyPtr in(segy_open(like.c_str(), "rb"));
  if (!in) throw Error("taihu: cannot open SEG-Y file '" + like + "'");
  char text[SEGY_TEXT_HEADER_SIZE + 1] = {};
  check(segy_read_textheader(in.get(), text), like, "reading the text header");
  char bin[SEGY_BINARY_HEADER_SIZE];
  check(segy_binheader(in.get(), bin), like, "reading the binary header");
  const int format = segy_format(bin);
  const int ns = segy_samples(bin);
  const long trace0 = segy_trace0(bin);
  const int in_size = segy_trsize(format, ns);
  int traces = 0;
  check(segy_traces(in.get(), &traces, trace0, in_size), like, "counting traces");
  if (data.size() != std::size_t(traces) * std::size_t(ns))
    throw Error("taihu: write_segy_like: " + std::to_string(data.size()) + " samples for the " + std::to_string(traces) +
                " traces of " + std::to_string(ns) + " samples in '" + like + "'");
  segy_set_bfield(bin, SEGY_BIN_FORMAT, SEGY_IEEE_FLOAT_4_BYTE);  // the samples are IEEE floats whatever the input's were
  const int bsize = segy_trsize(SEGY_IEEE_FLOAT_4_BYTE, ns);
  write_segy_atomically(path, [&](segy_file* fp) {
    // segy_read_textheader converted EBCDIC to ASCII; segy_write_textheader converts back.
    write_call([&] { return segy_write_textheader(fp, 0, text); }, path, "text header");
    write_call([&] { return segy_write_binheader(fp, bin); }, path, "binary header");
    const long out0 = SEGY_TEXT_HEADER_SIZE + SEGY_BINARY_HEADER_SIZE;
    std::vector<float> buf(static_cast<std::size_t>(ns));
    for (int t = 0; t < traces; ++t) {
      char th[SEGY_TRACE_HEADER_SIZE];
      check(segy_traceheader(in.get(), t, th, trace0, in_size), like, "trace header");
      write_call([&] { return segy_write_traceheader(fp, t, th, out0, bsize); }, path, "trace header");
      std::copy(data.begin() + std::ptrdiff_t(t) * ns, data.begin() + std::ptrdiff_t(t + 1) * ns, buf.begin());
      check(segy_from_native(SEGY_IEEE_FLOAT_4_BYTE, ns, buf.data()), path, "sample conversion");
      write_call([&] { return segy_writetrace(fp, t, buf.data(), out0, bsize); }, path, "trace");
    }
  });
}

SegyTraces read_segy(const std::string& path) {
  SegyPtr fp(segy_open(path.c_str(), "rb"));
  if (!fp) throw Error("taihu: cannot open SEG-Y file '" + path + "'");
  char bin[SEGY_BINARY_HEADER_SIZE];
  check(segy_binheader(fp.get(), bin), path, "reading the binary header (not a SEG-Y file?)");
  const int format = segy_format(bin);
  if (format != SEGY_IEEE_FLOAT_4_BYTE && format != SEGY_IBM_FLOAT_4_BYTE)
    throw Error("taihu: SEG-Y '" + path + "': sample format " + std::to_string(format) +
                " is not supported (IEEE or IBM float32 only)");
  check(segy_set_format(fp.get(), format), path, "set format");
  SegyTraces out;
  out.samples = segy_samples(bin);
  if (out.samples <= 0) throw Error("taihu: SEG-Y '" + path + "': the binary header says " + std::to_string(out.samples) + " samples");
  const long trace0 = segy_trace0(bin);
  const int bsize = segy_trsize(format, out.samples);
  int traces = 0;
  check(segy_traces(fp.get(), &traces, trace0, bsize), path, "counting traces (file size disagrees with the header?)");
  float dt_us = 0;
  check(segy_sample_interval(fp.get(), 0.f, &dt_us), path, "sample interval");
  out.dt = dt_us * 1e-6;
  out.data.resize(static_cast<std::size_t>(traces) * out.samples);
  for (int t = 0; t < traces; ++t) {
    char th[SEGY_TRACE_HEADER_SIZE];
    check(segy_traceheader(fp.get(), t, th, trace0, bsize), path, "trace header");
    auto field = [&](int f) {
      std::int32_t v = 0;
      segy_get_field(th, f, &v);
      return v;
    };
    const std::int32_t cs = field(SEGY_TR_SOURCE_GROUP_SCALAR), es = field(SEGY_TR_ELEV_SCALAR);
    out.field_record.push_back(field(SEGY_TR_FIELD_RECORD));
    out.offset.push_back(field(SEGY_TR_OFFSET));
    out.source_x.push_back(unscale(field(SEGY_TR_SOURCE_X), cs));
    out.source_y.push_back(unscale(field(SEGY_TR_SOURCE_Y), cs));
    out.group_x.push_back(unscale(field(SEGY_TR_GROUP_X), cs));
    out.group_y.push_back(unscale(field(SEGY_TR_GROUP_Y), cs));
    out.source_depth.push_back(unscale(field(SEGY_TR_SOURCE_DEPTH), es));
    out.group_depth.push_back(-unscale(field(SEGY_TR_RECV_GROUP_ELEV), es));
    float* dst = out.data.data() + static_cast<std::size_t>(t) * out.samples;
    check(segy_readtrace(fp.get(), t, dst, trace0, bsize), path, "reading a trace");
    check(segy_to_native(format, out.samples, dst), path, "sample conversion");
  }
  return out;
}

}  // namespace taihu::stencil
