// Names of algorithms and ops, and their parsing from user text.
#include "taihu/comm/types.hpp"

#include <array>
#include <string>

#include "taihu/arch/error.hpp"

namespace taihu::comm {

namespace {
constexpr std::array<std::pair<Algorithm, std::string_view>, 7> kNames{{
    {Algorithm::automatic, "auto"},
    {Algorithm::ring, "ring"},
    {Algorithm::recursive_doubling, "recursive_doubling"},
    {Algorithm::rabenseifner, "rabenseifner"},
    {Algorithm::shared_memory, "shm"},
    {Algorithm::hierarchical, "hierarchical"},
    {Algorithm::mpi, "mpi"},
}};
}  // namespace

std::string_view to_string(Algorithm algorithm) {
  for (const auto& [a, n] : kNames)
    if (a == algorithm) return n;
  return "?";
}

std::string_view to_string(Op op) { return op == Op::sum ? "sum" : "average"; }

Algorithm parse_algorithm(std::string_view name, std::string_view what) {
  for (const auto& [a, n] : kNames)
    if (n == name) return a;
  std::string valid;
  for (const auto& [a, n] : kNames) {
    if (!valid.empty()) valid += ", ";
    valid += n;
  }
  throw Error(std::string(what) + "='" + std::string(name) + "' is not an allreduce algorithm; use one of: " + valid);
}

}  // namespace taihu::comm
