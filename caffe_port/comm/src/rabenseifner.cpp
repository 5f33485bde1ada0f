// Rabenseifner's allreduce: reduce-scatter by recursive halving, then allgather by
// recursive doubling; 2 log2(p') messages and 2(p'-1)/p' of the vector moved per rank.
// Halving runs with increasing distance (1, 2, 4, ...), so the heaviest exchange (half
// the vector) is between neighbouring ranks: with ranks in topology order (the
// Communicator's ordered communicator) it stays inside the fastest tier. Any rank
// count via the fold in fold.hpp. Each block is reduced by exactly one rank.
#include <vector>

#include "fold.hpp"

namespace taihu::comm::detail {

template <class T>
void rabenseifner_allreduce(MPI_Comm comm, T* data, std::size_t count, Scratch& s) {
  const Fold f = make_fold(comm);
  if (f.size == 1 || count == 0) return;
  T* tmp = s.get<T>(count);
  fold_in(f, comm, data, count, tmp);
  if (f.new_rank >= 0) {
    const int P = f.pow2;
    auto at = [&](int block) { return block_begin(count, P, block); };
    int lo = 0, hi = P;  // my block range
    std::vector<std::pair<int, int>> parents;
    for (int mask = 1; mask < P; mask <<= 1) {
      parents.emplace_back(lo, hi);
      halving_step(comm, data, tmp, count, P, (f.new_rank & mask) == 0, f.real_rank(f.new_rank ^ mask),
                   7200 + mask % 1000, lo, hi);
    }
    for (int mask = P / 2; mask >= 1; mask >>= 1) {
      const int partner = f.real_rank(f.new_rank ^ mask);
      const auto [plo, phi] = parents.back();
      parents.pop_back();
      const int olo = (lo == plo) ? hi : plo, ohi = (lo == plo) ? phi : lo;  // sibling
      sendrecv(data + at(lo), at(hi) - at(lo), partner, data + at(olo), at(ohi) - at(olo),
               partner, 7300 + mask % 1000, comm);
      lo = plo;
      hi = phi;
    }
  }
  fold_out(f, comm, data, count);
}

template void rabenseifner_allreduce<float>(MPI_Comm, float*, std::size_t, Scratch&);
template void rabenseifner_allreduce<double>(MPI_Comm, double*, std::size_t, Scratch&);

}  // namespace taihu::comm::detail
