// Non-power-of-two handling shared by recursive doubling and Rabenseifner (as in
// MPICH): with p' the largest power of two <= p and rem = p - p', each even rank below
// 2*rem hands its vector to the odd rank above it and sits out; the remaining p' ranks
// run the power-of-two algorithm under "new ranks"; finally the odd ranks hand the
// result back. Every value is still reduced exactly once, so ranks stay identical.
#pragma once
#include "detail.hpp"

namespace taihu::comm::detail {

struct Fold {
  int rank = 0, size = 1;
  int pow2 = 1, rem = 0;
  int new_rank = 0;  // -1: this rank sits out
  int real_rank(int nr) const { return nr < rem ? nr * 2 + 1 : nr + rem; }
};

inline Fold make_fold(MPI_Comm comm) {
  Fold f;
  MPI_Comm_rank(comm, &f.rank);
  MPI_Comm_size(comm, &f.size);
  while (f.pow2 * 2 <= f.size) f.pow2 *= 2;
  f.rem = f.size - f.pow2;
  if (f.rank < 2 * f.rem) f.new_rank = (f.rank % 2 == 0) ? -1 : f.rank / 2;
  else f.new_rank = f.rank - f.rem;
  return f;
}

constexpr int kFoldTag = 7001;

template <class T>
void fold_in(const Fold& f, MPI_Comm comm, T* data, std::size_t count, T* tmp) {
  if (f.rank >= 2 * f.rem) return;
  if (f.rank % 2 == 0) {
    send(data, count, f.rank + 1, kFoldTag, comm);
  } else {
    recv(tmp, count, f.rank - 1, kFoldTag, comm);
    add_into(data, tmp, count);
  }
}

template <class T>
void fold_out(const Fold& f, MPI_Comm comm, T* data, std::size_t count) {
  if (f.rank >= 2 * f.rem) return;
  if (f.rank % 2 == 0) recv(data, count, f.rank + 1, kFoldTag + 1, comm);
  else send(data, count, f.rank - 1, kFoldTag + 1, comm);
}

}  // namespace taihu::comm::detail
