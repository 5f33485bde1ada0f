// The node's MPI-3 shared-memory window (MPI_Win_allocate_shared on a communicator of
// ranks that share memory): one data slot per local rank, readable by every local rank
// through plain loads, plus a control slot per rank (the count of the current call, for
// mismatch detection) and a node barrier built on one shared atomic counter.
//
// Data slots have two halves used alternately by consecutive calls (parity), so a rank
// may publish the next call's data while slower ranks still read the previous call's
// results; this is what lets the algorithms run with one or two barriers per call.
// grow() is collective over the node and preceded by a barrier.
#pragma once
#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace taihu::comm::detail {

class ShmNode {
 public:
  // `node` must contain only ranks sharing memory; `world_ranks` names them in errors.
  ShmNode(MPI_Comm node, std::vector<int> world_ranks);
  ~ShmNode();
  ShmNode(const ShmNode&) = delete;
  ShmNode& operator=(const ShmNode&) = delete;

  int local_rank() const { return local_rank_; }
  int local_size() const { return local_size_; }
  MPI_Comm comm() const { return comm_; }

  // Announces this call's element count and flips the parity; grows the slots (after
  // a barrier and the count check) when `bytes` does not fit one half.
  void begin_call(std::uint64_t count, std::size_t bytes);
  // Throws taihu::Error on every rank of the node when the announced counts differ.
  void check_counts() const;
  // This call's half of `local`'s slot.
  unsigned char* slot(int local) const;
  void barrier();

 private:
  void allocate(std::size_t half_bytes);
  void release();
  MPI_Comm comm_;
  std::vector<int> world_ranks_;
  int local_rank_ = 0, local_size_ = 1;
  bool yield_ = false;  // more ranks than hardware threads: yield instead of spinning
  double timeout_seconds_ = 300;  // TAIHU_COMM_TIMEOUT
  MPI_Win data_win_ = MPI_WIN_NULL, ctrl_win_ = MPI_WIN_NULL;
  std::vector<unsigned char*> data_base_;
  std::vector<std::uint64_t*> ctrl_base_;  // [parity] count of the call; rank 0: [8] barrier counter
  std::size_t half_bytes_ = 0;
  std::uint64_t calls_ = 0, barriers_ = 0;
};

}  // namespace taihu::comm::detail
