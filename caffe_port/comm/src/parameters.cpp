// Parameter broadcast and cross-rank checksum comparison.
#include "taihu/comm/parameters.hpp"

#include <cstring>
#include <string>
#include <vector>

#include "detail.hpp"

namespace taihu::comm {

namespace {
template <class T>
void bcast(MPI_Comm comm, T* data, std::size_t count, int root) {
  for (std::size_t done = 0; done < count;) {
    const std::size_t n = std::min(detail::kMaxMessageElems, count - done);
    detail::check_mpi(MPI_Bcast(data + done, static_cast<int>(n), detail::mpi_type<T>(), root, comm), "MPI_Bcast");
    done += n;
  }
}
std::uint64_t fnv(const unsigned char* p, std::size_t n, std::uint64_t h) {
  for (std::size_t i = 0; i < n; ++i) {
    h ^= p[i];
    h *= 0x100000001b3ull;
  }
  return h;
}
}  // namespace

void broadcast(MPI_Comm comm, float* data, std::size_t count, int root) { bcast(comm, data, count, root); }
void broadcast(MPI_Comm comm, double* data, std::size_t count, int root) { bcast(comm, data, count, root); }

std::uint64_t checksum(std::span<const float> data, std::uint64_t seed) {
  return fnv(reinterpret_cast<const unsigned char*>(data.data()), data.size_bytes(), seed);
}
std::uint64_t checksum(std::span<const double> data, std::uint64_t seed) {
  return fnv(reinterpret_cast<const unsigned char*>(data.data()), data.size_bytes(), seed);
}

void verify_identical(MPI_Comm comm, std::uint64_t local_checksum, const char* what) {
  int p = 1;
  MPI_Comm_size(comm, &p);
  std::vector<unsigned long long> all(p);
  unsigned long long mine = local_checksum;
  detail::check_mpi(MPI_Allgather(&mine, 1, MPI_UNSIGNED_LONG_LONG, all.data(), 1, MPI_UNSIGNED_LONG_LONG, comm),
                    "MPI_Allgather");
  std::string differ;
  for (int q = 1; q < p; ++q)
    if (all[q] != all[0]) differ += (differ.empty() ? "" : ", ") + std::to_string(q);
  if (!differ.empty())
    throw Error(std::string(what) + " differ across ranks: rank(s) " + differ + " disagree with rank 0");
}

}  // namespace taihu::comm
