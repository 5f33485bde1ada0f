// Topology descriptions (env string, file) and the rank layout built from them.
#include "taihu/comm/topology.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>

#include "taihu/arch/error.hpp"

namespace taihu::comm {

namespace {

std::string trim(std::string_view s) {
  std::size_t b = 0, e = s.size();
  while (b < e && (s[b] == ' ' || s[b] == '\t' || s[b] == '\r')) ++b;
  while (e > b && (s[e - 1] == ' ' || s[e - 1] == '\t' || s[e - 1] == '\r')) --e;
  return std::string(s.substr(b, e - b));
}

bool valid_name(const std::string& n) {
  if (n.empty()) return false;
  for (char c : n)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-')) return false;
  return true;
}

// Parses a positive integer; returns false on junk or overflow.
bool parse_int(const std::string& s, int& out) {
  if (s.empty()) return false;
  char* end = nullptr;
  errno = 0;
  const long v = std::strtol(s.c_str(), &end, 10);
  if (errno != 0 || *end != '\0' || v <= 0 || v > (1L << 30)) return false;
  out = static_cast<int>(v);
  return true;
}

bool parse_positive(const std::string& s, double& out) {
  if (s.empty()) return false;
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(s.c_str(), &end);
  if (errno != 0 || *end != '\0' || !(v > 0) || v > 1e300) return false;
  out = v;
  return true;
}

void check_tiers(const TopologySpec& spec, const std::string& where) {
  for (std::size_t i = 0; i < spec.tiers.size(); ++i)
    for (std::size_t j = 0; j < i; ++j)
      if (spec.tiers[i].name == spec.tiers[j].name)
        throw Error(where + ": tier '" + spec.tiers[i].name + "' is given twice");
}

}  // namespace

TopologySpec parse_topology_string(std::string_view text, std::string_view what) {
  TopologySpec spec;
  spec.source = std::string(what);
  const std::string w(what);
  std::size_t pos = 0;
  while (pos <= text.size()) {
    std::size_t comma = text.find(',', pos);
    if (comma == std::string_view::npos) comma = text.size();
    const std::string item = trim(text.substr(pos, comma - pos));
    pos = comma + 1;
    if (item.empty()) {
      if (comma == text.size() && !spec.tiers.empty()) break;
      throw Error(w + "='" + std::string(text) + "': empty item; expected e.g. node=2,supernode=4");
    }
    const std::size_t eq = item.find('=');
    if (eq == std::string::npos)
      throw Error(w + ": item '" + item + "' has no '='; expected <tier>=<size>, e.g. node=2");
    Tier t;
    t.name = trim(item.substr(0, eq));
    if (!valid_name(t.name)) throw Error(w + ": bad tier name in '" + item + "'");
    if (!parse_int(trim(item.substr(eq + 1)), t.size))
      throw Error(w + ": size in '" + item + "' must be a positive integer");
    spec.tiers.push_back(t);
    if (comma == text.size()) break;
  }
  if (spec.tiers.empty()) throw Error(w + " is empty; expected e.g. node=2,supernode=4");
  if (spec.tiers[0].name != "node") {
    // Only outer tiers given: the node tier is detected.
    spec.tiers.insert(spec.tiers.begin(), Tier{"node", 0, 0, 0, 1});
  }
  check_tiers(spec, w);
  return spec;
}

TopologySpec parse_topology_file_text(std::string_view text, const std::string& path) {
  TopologySpec spec;
  spec.source = path;
  std::istringstream in{std::string(text)};
  std::string line;
  int line_no = 0;
  while (std::getline(in, line)) {
    ++line_no;
    if (const auto hash = line.find('#'); hash != std::string::npos) line.resize(hash);
    // Tokenize keeping columns for error messages.
    std::vector<std::pair<std::string, int>> tokens;
    for (std::size_t i = 0; i < line.size();) {
      while (i < line.size() && (line[i] == ' ' || line[i] == '\t' || line[i] == '\r')) ++i;
      if (i >= line.size()) break;
      const std::size_t start = i;
      while (i < line.size() && line[i] != ' ' && line[i] != '\t' && line[i] != '\r') ++i;
      tokens.emplace_back(line.substr(start, i - start), static_cast<int>(start) + 1);
    }
    if (tokens.empty()) continue;
    const auto where = [&](int column) {
      return path + ":" + std::to_string(line_no) + ":" + std::to_string(column);
    };
    Tier t;
    t.name = tokens[0].first;
    if (!valid_name(t.name)) throw Error(where(tokens[0].second) + ": bad tier name '" + t.name + "'");
    if (tokens.size() < 2) throw Error(where(tokens[0].second) + ": tier '" + t.name + "' needs a size");
    if (!parse_int(tokens[1].first, t.size))
      throw Error(where(tokens[1].second) + ": size '" + tokens[1].first + "' must be a positive integer");
    for (std::size_t k = 2; k < tokens.size(); ++k) {
      const auto& [tok, col] = tokens[k];
      const auto eq = tok.find('=');
      const std::string key = tok.substr(0, eq);
      double v = 0;
      if (eq == std::string::npos || !parse_positive(tok.substr(eq + 1), v))
        throw Error(where(col) + ": expected bandwidth=<GB/s>, latency=<us> or oversubscription=<x>, got '" + tok + "'");
      if (key == "bandwidth") t.bandwidth_gbs = v;
      else if (key == "latency") t.latency_us = v;
      else if (key == "oversubscription") t.oversubscription = v;
      else throw Error(where(col) + ": unknown key '" + key + "' (bandwidth, latency, oversubscription)");
    }
    if (spec.tiers.empty() && t.name != "node") spec.tiers.push_back(Tier{"node", 0, 0, 0, 1});
    if (!spec.tiers.empty() && t.name == "node")
      throw Error(where(tokens[0].second) + ": 'node' must be the first tier");
    spec.tiers.push_back(t);
  }
  if (spec.tiers.empty()) throw Error(path + ": no tiers (expected lines like 'node 4' or 'supernode 256')");
  check_tiers(spec, path);
  return spec;
}

TopologySpec load_topology_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw Error("topology file '" + path + "' cannot be opened");
  std::stringstream ss;
  ss << in.rdbuf();
  return parse_topology_file_text(ss.str(), path);
}

TopologySpec topology_from_environment(const std::string& explicit_text) {
  if (!explicit_text.empty()) return parse_topology_string(explicit_text, "topology option");
  if (const char* env = std::getenv("TAIHU_TOPOLOGY"); env && *env)
    return parse_topology_string(env, "TAIHU_TOPOLOGY");
  if (const char* file = std::getenv("TAIHU_TOPOLOGY_FILE"); file && *file)
    return load_topology_file(file);
  TopologySpec spec;
  spec.tiers.push_back(Tier{"node", 0, 0, 0, 1});
  spec.source = "detected";
  return spec;
}

bool RankLayout::uniform_nodes() const {
  return std::all_of(ranks_per_node.begin(), ranks_per_node.end(),
                     [&](int n) { return n == ranks_per_node.front(); });
}

bool RankLayout::complete_tiers() const {
  long long product = 1;
  for (int s : tier_sizes) product *= s;
  return nodes() % product == 0;
}

RankLayout make_layout(const std::vector<int>& physical_node_of_rank, const TopologySpec& spec) {
  RankLayout layout;
  const int p = static_cast<int>(physical_node_of_rank.size());
  layout.world_size = p;
  const int node_size = spec.user_node_size() ? spec.tiers[0].size : 0;
  // Fake nodes: consecutive ranks of each physical node, node_size at a time.
  std::map<std::pair<int, int>, int> node_index;  // (physical, part) -> node, in order
  std::map<int, int> seen_in_physical;
  std::vector<std::pair<int, int>> key_of_rank(p);
  for (int r = 0; r < p; ++r) {
    const int phys = physical_node_of_rank[r];
    const int k = seen_in_physical[phys]++;
    key_of_rank[r] = {phys, node_size > 0 ? k / node_size : 0};
  }
  // Node indices in order of the first rank of each node.
  for (int r = 0; r < p; ++r)
    if (!node_index.count(key_of_rank[r])) {
      const int idx = static_cast<int>(node_index.size());
      node_index[key_of_rank[r]] = idx;
    }
  layout.ranks_per_node.assign(node_index.size(), 0);
  layout.node_of_rank.resize(p);
  layout.local_rank.resize(p);
  for (int r = 0; r < p; ++r) {
    const int node = node_index[key_of_rank[r]];
    layout.node_of_rank[r] = node;
    layout.local_rank[r] = layout.ranks_per_node[node]++;
  }
  for (std::size_t t = 1; t < spec.tiers.size(); ++t) layout.tier_sizes.push_back(spec.tiers[t].size);
  return layout;
}

std::string describe(const RankLayout& layout) {
  std::ostringstream os;
  os << layout.world_size << " ranks on " << layout.nodes() << " node(s) [";
  for (int i = 0; i < layout.nodes(); ++i) os << (i ? "," : "") << layout.ranks_per_node[i];
  os << " ranks]";
  for (int s : layout.tier_sizes) os << " x groups of " << s;
  if (!layout.complete_tiers()) os << " (incomplete outer tiers: flat across nodes)";
  return os.str();
}

}  // namespace taihu::comm
