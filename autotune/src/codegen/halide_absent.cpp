// The Halide entry points of backend.hpp in a build without Halide: each says so.
#include "taihu/arch/error.hpp"
#include "taihu/autotune/backend.hpp"

namespace taihu::autotune {
namespace {
[[noreturn]] void absent() {
  throw Error("this taihu was built without Halide 14 (install libhalide14-0-dev and reconfigure); use --backend=cpp");
}
}  // namespace

bool halide_available() { return false; }
std::string halide_version() { return "none"; }
std::unique_ptr<Kernel> make_halide_kernel(const Problem&, const Schedule&, int) { absent(); }
std::unique_ptr<Kernel> make_halide_autoscheduled(const Problem&, int, const std::string&, int) { absent(); }
std::vector<std::string> emit_halide_aot(const Problem&, const Schedule&, const std::string&, const std::string&) { absent(); }

}  // namespace taihu::autotune
