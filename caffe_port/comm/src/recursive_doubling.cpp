// Recursive doubling allreduce: log2(p') rounds, in round k each rank exchanges its
// whole vector with the rank 2^k away and adds. Latency-optimal (fewest rounds), so the
// choice for tiny messages; any rank count via the fold in fold.hpp. Each round's
// partners compute a+b and b+a, which IEEE addition makes bitwise equal.
#include "fold.hpp"

namespace taihu::comm::detail {

template <class T>
void recursive_doubling_allreduce(MPI_Comm comm, T* data, std::size_t count, Scratch& s) {
  const Fold f = make_fold(comm);
  if (f.size == 1 || count == 0) return;
  T* tmp = s.get<T>(count);
  fold_in(f, comm, data, count, tmp);
  if (f.new_rank >= 0) {
    for (int mask = 1; mask < f.pow2; mask <<= 1) {
      const int partner = f.real_rank(f.new_rank ^ mask);
      sendrecv(data, count, partner, tmp, count, partner, 7100 + mask % 1000, comm);
      add_into(data, tmp, count);
    }
  }
  fold_out(f, comm, data, count);
}

template void recursive_doubling_allreduce<float>(MPI_Comm, float*, std::size_t, Scratch&);
template void recursive_doubling_allreduce<double>(MPI_Comm, double*, std::size_t, Scratch&);

}  // namespace taihu::comm::detail
