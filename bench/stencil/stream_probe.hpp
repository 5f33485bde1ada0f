// In-run bandwidth ceilings for bench_stencil, timed between the kernel's own calls so
// that host noise (other tenants, frequency) hits the ceiling and the kernel alike:
//  - triad():   STREAM triad a = b + s c over three arrays of 4x the last-level cache,
//               12 B counted per element as STREAM does;
//  - streams(): the kernel's compulsory DRAM streams with no stencil work: `reads`
//               arrays read and `updates` arrays read and rewritten in place (the
//               in-place update, no write-allocate), 4 (reads + 2 updates) B per point,
//               the same bytes the compulsory-traffic model counts for the kernel.
// Both run on `threads` pinned threads, each streaming one contiguous part (as the
// kernel's y slabs do), first touched by the thread that streams it, on transparent
// huge pages like the stencil's fields. Each call is one pass; it returns seconds.
#pragma once
#include <vector>

#include "taihu/arch/aligned_buffer.hpp"

namespace taihu::stencil::bench {

class StreamProbe {
 public:
  // points: floats per stream array (a field's size); reads/updates as above.
  StreamProbe(int threads, long points, int reads, int updates);

  double triad();    // seconds of one triad pass
  double streams();  // seconds of one pass over the kernel's streams

  double triad_bytes() const { return 12.0 * double(triad_elements_); }
  double streams_bytes() const { return 4.0 * double(points_) * double(reads_ + 2 * updates_); }

 private:
  int threads_;
  long triad_elements_, points_;
  int reads_, updates_;
  std::vector<arch::AlignedBuffer<float>> triad_arrays_, stream_arrays_;
};

}  // namespace taihu::stencil::bench
