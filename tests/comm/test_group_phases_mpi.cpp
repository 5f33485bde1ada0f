// The hierarchical algorithm's in-group phases (caffe_port/comm/src/group_phases.cpp)
// against an exact reference, at every rank count ctest launches (2..5: halving /
// doubling at 2 and 4, the ring fallback at 3 and 5): after the reduce-scatter rank r
// holds block r of the partition block_begin(count, p, i) fully summed (integer data:
// exact), and the allgather then gives every rank the whole sum; counts 0 to 70001, not
// divisible by p, float and double.
#include <gtest/gtest.h>
#include <mpi.h>

#include <vector>

#include "detail.hpp"
#include "mpi_world.hpp"

namespace td = taihu::comm::detail;
using taihu_test::world_rank;
using taihu_test::world_size;

namespace {

// Input of rank r at element i: small integers, so any summation order is exact.
template <class T>
T input(int r, std::size_t i) {
  return static_cast<T>(static_cast<int>((i * 31 + static_cast<std::size_t>(r) * 17) % 23) - 11);
}
template <class T>
T exact_sum(std::size_t i, int p) {
  T s = 0;
  for (int r = 0; r < p; ++r) s += input<T>(r, i);
  return s;
}

template <class T>
void check_count(std::size_t count) {
  const int p = world_size(), r = world_rank();
  std::vector<T> v(count);
  for (std::size_t i = 0; i < count; ++i) v[i] = input<T>(r, i);
  td::Scratch scratch;
  td::group_reduce_scatter(MPI_COMM_WORLD, v.data(), count, scratch);
  const std::size_t b = td::block_begin(count, p, r), e = td::block_begin(count, p, r + 1);
  for (std::size_t i = b; i < e; ++i) ASSERT_EQ(v[i], exact_sum<T>(i, p)) << "count " << count << " element " << i;
  // Outside its block a rank's values are scratch; the allgather must overwrite them.
  for (std::size_t i = 0; i < count; ++i)
    if (i < b || i >= e) v[i] = T(-1e6);
  td::group_allgather(MPI_COMM_WORLD, v.data(), count);
  for (std::size_t i = 0; i < count; ++i) ASSERT_EQ(v[i], exact_sum<T>(i, p)) << "count " << count << " element " << i;
}

TEST(CommGroupPhases, ReduceScatterOwnsBlockRAndAllgatherRestoresTheSum) {
  for (std::size_t count : {0u, 1u, 3u, 4u, 5u, 17u, 1000u, 4099u, 70001u}) {
    check_count<float>(count);
    check_count<double>(count);
  }
}

}  // namespace
