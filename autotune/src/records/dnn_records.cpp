// conv2d tuning results in dnn/'s record format (see records.hpp and
// dnn/include/taihu/dnn/tuning_records.hpp). The key is rebuilt from the record's
// shape exactly as dnn's ConvDesc::str() prints it (benchdnn-style, shortened).
#include <nlohmann/json.hpp>

#include <map>

#include "taihu/autotune/problem.hpp"
#include "taihu/autotune/records.hpp"

namespace taihu::autotune {

std::string dnn_conv_line(const Record& r) {
  if (r.op != "conv2d" || !r.ok) return "";
  auto algo_it = r.schedule.find("algorithm");
  if (algo_it == r.schedule.end()) return "";
  std::map<std::string, std::int64_t> d;
  try {
    d = parse_shape(r.shape);
  } catch (const std::exception&) {
    return "";
  }
  for (const char* k : {"N", "C", "H", "W", "KO", "R", "S", "P"})
    if (!d.count(k)) return "";
  const std::int64_t oh = d["H"] + 2 * d["P"] - d["R"] + 1, ow = d["W"] + 2 * d["P"] - d["S"] + 1;
  auto s = [](std::int64_t v) { return std::to_string(v); };
  std::string key = "mb" + s(d["N"]) + "ic" + s(d["C"]) + "ih" + s(d["H"]);
  if (d["W"] != d["H"]) key += "iw" + s(d["W"]);
  key += "oc" + s(d["KO"]) + "oh" + s(oh);
  if (ow != oh) key += "ow" + s(ow);
  key += "kh" + s(d["R"]);
  if (d["S"] != d["R"]) key += "kw" + s(d["S"]);
  if (d["P"] != 0) key += "ph" + s(d["P"]);  // stride 1, dilation 1: omitted like ConvDesc::str()
  nlohmann::json j;
  j["op"] = "conv2d";
  j["key"] = key;
  j["dir"] = "forward";
  j["isa"] = r.isa;
  j["threads"] = r.threads;
  if (algo_it->second == "winograd") {  // conv2d.tdsl's derived winograd(direct): dnn's winograd_MxM
    auto m = r.schedule.find("winograd m");
    const std::string tile = m == r.schedule.end() ? "4" : m->second;
    j["algo"] = "winograd_" + tile + "x" + tile;
  } else {
    j["algo"] = algo_it->second == "im2col" ? "explicit_gemm" : "direct";
  }
  j["median_s"] = r.median_s;
  return j.dump();
}

}  // namespace taihu::autotune
