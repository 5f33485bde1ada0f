// ShmNode: allocation of the shared window, the counter barrier and the count check.
#include "shm_window.hpp"

#include <sched.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <string>

#include "detail.hpp"
#include "taihu/arch/error.hpp"
#include "taihu/arch/timer.hpp"
#include "taihu/arch/topology.hpp"

namespace taihu::comm::detail {

namespace {
constexpr std::size_t kCtrlWords = 16;  // 128 bytes per rank: no false sharing
}

ShmNode::ShmNode(MPI_Comm node, std::vector<int> world_ranks)
    : comm_(node), world_ranks_(std::move(world_ranks)) {
  MPI_Comm_rank(comm_, &local_rank_);
  MPI_Comm_size(comm_, &local_size_);
  yield_ = local_size_ > arch::topology().hardware_threads;
  if (const char* t = std::getenv("TAIHU_COMM_TIMEOUT"); t && *t) {
    char* end = nullptr;
    timeout_seconds_ = std::strtod(t, &end);
    if (*end != '\0' || !(timeout_seconds_ > 0))
      throw Error(std::string("TAIHU_COMM_TIMEOUT='") + t + "': expected a positive number of seconds");
  }
  std::uint64_t* base = nullptr;
  check_mpi(MPI_Win_allocate_shared(static_cast<MPI_Aint>(kCtrlWords * sizeof(std::uint64_t)),
                                    sizeof(std::uint64_t), MPI_INFO_NULL, comm_, &base, &ctrl_win_),
            "MPI_Win_allocate_shared (control)");
  std::memset(base, 0, kCtrlWords * sizeof(std::uint64_t));
  ctrl_base_.resize(local_size_);
  for (int q = 0; q < local_size_; ++q) {
    MPI_Aint size = 0;
    int disp = 0;
    check_mpi(MPI_Win_shared_query(ctrl_win_, q, &size, &disp, &ctrl_base_[q]), "MPI_Win_shared_query");
  }
  MPI_Win_lock_all(MPI_MODE_NOCHECK, ctrl_win_);
  MPI_Barrier(comm_);  // control words are zero everywhere before first use
}

ShmNode::~ShmNode() {
  release();
  if (ctrl_win_ != MPI_WIN_NULL) {
    MPI_Win_unlock_all(ctrl_win_);
    MPI_Win_free(&ctrl_win_);
  }
}

void ShmNode::release() {
  if (data_win_ != MPI_WIN_NULL) {
    MPI_Win_unlock_all(data_win_);
    MPI_Win_free(&data_win_);
  }
  data_win_ = MPI_WIN_NULL;
  data_base_.clear();
  half_bytes_ = 0;
}

void ShmNode::allocate(std::size_t half_bytes) {
  release();
  MPI_Info info;
  MPI_Info_create(&info);
  MPI_Info_set(info, "alloc_shared_noncontig", "true");
  unsigned char* base = nullptr;
  check_mpi(MPI_Win_allocate_shared(static_cast<MPI_Aint>(2 * half_bytes), 1, info, comm_, &base, &data_win_),
            "MPI_Win_allocate_shared (data)");
  MPI_Info_free(&info);
  data_base_.resize(local_size_);
  for (int q = 0; q < local_size_; ++q) {
    MPI_Aint size = 0;
    int disp = 0;
    check_mpi(MPI_Win_shared_query(data_win_, q, &size, &disp, &data_base_[q]), "MPI_Win_shared_query");
  }
  MPI_Win_lock_all(MPI_MODE_NOCHECK, data_win_);
  half_bytes_ = half_bytes;
}

void ShmNode::begin_call(std::uint64_t count, std::size_t bytes) {
  ++calls_;
  // Counts alternate between two words like the data halves: with one barrier per call
  // a fast rank may announce the next count while others still check this one.
  std::atomic_ref<std::uint64_t>(ctrl_base_[local_rank_][calls_ % 2]).store(count, std::memory_order_relaxed);
  if (bytes > half_bytes_ || data_win_ == MPI_WIN_NULL) {
    barrier();        // everyone is done with the old window and has announced a count
    check_counts();   // same verdict on every rank, so either all grow or all throw
    std::size_t half = std::max<std::size_t>({bytes, 2 * half_bytes_, std::size_t{4096}});
    half = (half + 4095) / 4096 * 4096;
    allocate(half);
  }
}

void ShmNode::check_counts() const {
  const std::uint64_t mine = std::atomic_ref<std::uint64_t>(ctrl_base_[0][calls_ % 2]).load(std::memory_order_relaxed);
  std::string bad;
  for (int q = 1; q < local_size_; ++q) {
    const std::uint64_t c = std::atomic_ref<std::uint64_t>(ctrl_base_[q][calls_ % 2]).load(std::memory_order_relaxed);
    if (c != mine)
      bad += " rank " + std::to_string(world_ranks_[q]) + " has count " + std::to_string(c) + ";";
  }
  if (!bad.empty())
    throw Error("taihu::comm allreduce: counts differ across ranks: rank " + std::to_string(world_ranks_[0]) +
                " has count " + std::to_string(mine) + ";" + bad + " every rank must pass the same count");
}

unsigned char* ShmNode::slot(int local) const {
  return data_base_[local] + (calls_ % 2) * half_bytes_;
}

void ShmNode::barrier() {
  if (local_size_ == 1) return;
  ++barriers_;
  std::atomic_ref<std::uint64_t> counter(ctrl_base_[0][8]);
  counter.fetch_add(1, std::memory_order_acq_rel);
  const std::uint64_t target = barriers_ * static_cast<std::uint64_t>(local_size_);
  unsigned long spins = 0;
  double started = 0;
  while (counter.load(std::memory_order_acquire) < target) {
    if ((spins & 1023) == 1023) {
      // A rank that died never arrives: fail with a clear message instead of hanging.
      const double now = arch::now_seconds();
      if (started == 0) started = now;
      else if (now - started > timeout_seconds_)
        throw Error("taihu::comm: node barrier timed out after " + std::to_string(static_cast<int>(timeout_seconds_)) +
                    " s: " + std::to_string(target - counter.load()) + " of " + std::to_string(local_size_) +
                    " local ranks did not arrive (a rank died or stopped calling allreduce; TAIHU_COMM_TIMEOUT)");
    }
    ++spins;
    if (yield_ || spins > 2000) {
      sched_yield();
    } else {
#if defined(__x86_64__) || defined(__i386__)
      __builtin_ia32_pause();
#endif
    }
  }
}

}  // namespace taihu::comm::detail
