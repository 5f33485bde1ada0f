// libFuzzer harness: the allreduce topology description (taihu::comm): the
// TAIHU_TOPOLOGY string form ("node=2,supernode=4") and the file form (one tier per
// line, "members" lines), then the rank layout built from a parsed spec for 8 ranks on
// 8 hosts (h0..h7), as the communicator does. A taihu::Error is a clean rejection.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "taihu/arch/error.hpp"
#include "taihu/comm/topology.hpp"

namespace tc = taihu::comm;

namespace {
void layout_of(const tc::TopologySpec& spec) {
  const std::vector<int> nodes = {0, 1, 2, 3, 4, 5, 6, 7};
  const std::vector<std::string> hosts = {"h0", "h1", "h2", "h3", "h4", "h5", "h6", "h7"};
  try {
    const tc::RankLayout layout = tc::make_layout(nodes, spec, hosts);
    (void)tc::describe(layout);
    (void)layout.complete_tiers();
  } catch (const taihu::Error&) {
  }
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    layout_of(tc::parse_topology_string(text, "TAIHU_TOPOLOGY"));
  } catch (const taihu::Error&) {
  }
  try {
    layout_of(tc::parse_topology_file_text(text, "fuzz.topo"));
  } catch (const taihu::Error&) {
  }
  return 0;
}
