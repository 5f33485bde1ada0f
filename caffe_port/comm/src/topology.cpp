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
    spec.tiers.insert(spec.tiers.begin(), Tier{"node", 0, 0, 0, 1, {}});
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
    if (tokens[0].first == "members") {
      if (tokens.size() < 3)
        throw Error(where(tokens[0].second) + ": expected 'members <tier> <host> <host>...'");
      auto tier = std::find_if(spec.tiers.begin(), spec.tiers.end(),
                               [&](const Tier& x) { return x.name == tokens[1].first; });
      if (tier == spec.tiers.end() || tier == spec.tiers.begin())
        throw Error(where(tokens[1].second) + ": '" + tokens[1].first +
                    "' is not a tier above node declared before this line");
      std::vector<std::string> group;
      for (std::size_t k = 2; k < tokens.size(); ++k) {
        for (const auto& g : tier->members)
          if (std::find(g.begin(), g.end(), tokens[k].first) != g.end())
            throw Error(where(tokens[k].second) + ": host '" + tokens[k].first + "' is already in a " +
                        tier->name + " group");
        if (std::find(group.begin(), group.end(), tokens[k].first) != group.end())
          throw Error(where(tokens[k].second) + ": host '" + tokens[k].first + "' is listed twice");
        group.push_back(tokens[k].first);
      }
      tier->members.push_back(std::move(group));
      continue;
    }
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
    if (spec.tiers.empty() && t.name != "node") spec.tiers.push_back(Tier{"node", 0, 0, 0, 1, {}});
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
  spec.tiers.push_back(Tier{"node", 0, 0, 0, 1, {}});
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

namespace {

// Per rank: the group index in every tier with members, outer tier first (empty when no
// tier has members).
std::vector<std::vector<int>> member_keys(const TopologySpec& spec, const std::vector<std::string>& host_of_rank,
                                          int ranks) {
  std::vector<std::vector<int>> keys(ranks);
  bool any = false;
  for (const Tier& t : spec.tiers) any = any || !t.members.empty();
  if (!any) return keys;
  if (static_cast<int>(host_of_rank.size()) != ranks)
    throw Error("topology from " + spec.source + " lists members by hostname, but the hostnames of the ranks are unknown");
  for (std::size_t ti = spec.tiers.size(); ti-- > 1;) {
    const Tier& t = spec.tiers[ti];
    if (t.members.empty()) continue;
    for (int r = 0; r < ranks; ++r) {
      int found = -1;
      for (std::size_t g = 0; g < t.members.size() && found < 0; ++g)
        if (std::find(t.members[g].begin(), t.members[g].end(), host_of_rank[r]) != t.members[g].end())
          found = static_cast<int>(g);
      if (found < 0)
        throw Error("topology from " + spec.source + ": host '" + host_of_rank[r] + "' (rank " + std::to_string(r) +
                    ") is in no 'members " + t.name + "' group");
      keys[r].push_back(found);
    }
  }
  return keys;
}

}  // namespace

RankLayout make_layout(const std::vector<int>& physical_node_of_rank, const TopologySpec& spec,
                       const std::vector<std::string>& host_of_rank) {
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
  // Node indices in order of the first rank of each node, group by group when tiers
  // list their members.
  const auto groups = member_keys(spec, host_of_rank, p);
  std::vector<int> first_rank_of_node;
  for (int r = 0; r < p; ++r)
    if (!node_index.count(key_of_rank[r])) {
      node_index[key_of_rank[r]] = 0;
      first_rank_of_node.push_back(r);
    }
  std::stable_sort(first_rank_of_node.begin(), first_rank_of_node.end(),
                   [&](int a, int b) { return groups[a] < groups[b]; });
  for (std::size_t i = 0; i < first_rank_of_node.size(); ++i)
    node_index[key_of_rank[first_rank_of_node[i]]] = static_cast<int>(i);
  for (std::size_t t = 1; t < spec.tiers.size(); ++t) layout.tier_sizes.push_back(spec.tiers[t].size);
  // With members, the groups of the innermost listed tier must hold equally many of this
  // job's nodes, or the per-tier communicators would straddle groups. A job on part of
  // each group (4 of 8 hosts) uses the number it has.
  for (std::size_t ti = 1; ti < spec.tiers.size(); ++ti) {
    if (spec.tiers[ti].members.empty()) continue;
    const std::size_t depth = groups[0].size() - 1;
    std::map<std::vector<int>, int> nodes_in;
    for (int r : first_rank_of_node) ++nodes_in[groups[r]];
    const int have = nodes_in.begin()->second;
    for (const auto& [g, n] : nodes_in)
      if (n != have)
        throw Error("topology from " + spec.source + ": the '" + spec.tiers[ti].name + "' groups hold different " +
                    "numbers of this job's nodes (" + std::to_string(have) + " and " + std::to_string(n) +
                    " in the group of " + spec.tiers[ti].members[static_cast<std::size_t>(g[depth])].front() +
                    "); run on whole groups or equal parts of them");
    long long below = 1;
    for (std::size_t k = 1; k < ti; ++k) below *= spec.tiers[k].size;
    if (have % below != 0)
      throw Error("topology from " + spec.source + ": a '" + spec.tiers[ti].name + "' group holds " +
                  std::to_string(have) + " node(s), not a multiple of the tiers below it");
    layout.tier_sizes[ti - 1] = static_cast<int>(have / below);
    break;  // the innermost listed tier decides
  }
  layout.ranks_per_node.assign(node_index.size(), 0);
  layout.node_of_rank.resize(p);
  layout.local_rank.resize(p);
  for (int r = 0; r < p; ++r) {
    const int node = node_index[key_of_rank[r]];
    layout.node_of_rank[r] = node;
    layout.local_rank[r] = layout.ranks_per_node[node]++;
  }
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
