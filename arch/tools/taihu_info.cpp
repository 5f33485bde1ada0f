// taihu-info: the machine as taihu sees it, plus measured roofline ceilings.
//   taihu-info [--json] [--no-measure]
#include <cstdio>
#include <cstring>
#include <string>

#include "taihu/arch/build_config.hpp"
#include "taihu/arch/cpu_features.hpp"
#include "taihu/arch/environment.hpp"
#include "taihu/arch/error.hpp"
#include "taihu/arch/gpu.hpp"
#include "taihu/arch/isa.hpp"
#include "taihu/arch/roofline.hpp"
#include "taihu/arch/threads.hpp"
#include "taihu/arch/topology.hpp"

namespace {

using namespace taihu::arch;

std::string json_escape(const std::string& s) {
  std::string out;
  for (char ch : s) {
    if (ch == '"' || ch == '\\') out += '\\';
    if (static_cast<unsigned char>(ch) >= 0x20) out += ch;
  }
  return out;
}

std::string feature_list(const CpuFeatures& f) {
  std::string s;
  auto add = [&s](bool on, const char* name) {
    if (!on) return;
    if (!s.empty()) s += ' ';
    s += name;
  };
  add(f.sse42, "sse4.2");
  add(f.avx, "avx");
  add(f.fma, "fma");
  add(f.avx2, "avx2");
  add(f.avx512f, "avx512f");
  add(f.avx512bw, "avx512bw");
  add(f.avx512vl, "avx512vl");
  add(f.avx512dq, "avx512dq");
  add(f.avx512vnni, "avx512vnni");
  add(f.avx512bf16, "avx512bf16");
  return s;
}

std::string size_text(std::size_t bytes) {
  char buf[32];
  if (bytes >= (1u << 20))
    std::snprintf(buf, sizeof buf, "%zu MiB", bytes >> 20);
  else
    std::snprintf(buf, sizeof buf, "%zu KiB", bytes >> 10);
  return buf;
}

void print_text(const CpuFeatures& f, Isa isa, const Topology& t, const GpuQuery& g,
                const Ceilings* c) {
  std::printf("taihu %s (CUDA %s, MPI %s, Halide %s)\n", taihu::kVersion,
              taihu::kHaveCuda ? "yes" : "no", taihu::kHaveMpi ? "yes" : "no",
              taihu::kHaveHalide ? "yes" : "no");
  std::printf("CPU      : %s (%s, family %d model %d)\n", f.model_name.c_str(), f.vendor.c_str(),
              f.family, f.model);
  std::printf("ISA      : %s\n", feature_list(f).c_str());
  std::printf("dispatch : %s (best supported: %s)\n", isa_name(isa),
              isa_name(best_supported_isa(f)));
  std::printf("cores    : %d physical, %d hardware threads, %d package(s), %d NUMA node(s)\n",
              t.cores, t.hardware_threads, t.packages, t.numa_nodes);
  std::printf("threads  : %d\n", num_threads());
  for (const auto& cache : t.caches)
    std::printf("L%d cache : %s x %d, %d-byte lines, %d-way\n", cache.level,
                size_text(cache.size_bytes).c_str(), cache.instances, cache.line_bytes,
                cache.associativity);
  std::printf("GPU      : %s\n", g.status.c_str());
  for (const auto& d : g.devices)
    std::printf("  [%d] %s, %d SMs, %.1f GiB, compute %d.%d\n", d.index, d.name.c_str(),
                d.multiprocessors, static_cast<double>(d.memory_bytes) / (1 << 30),
                d.compute_major, d.compute_minor);
  if (c == nullptr) return;
  std::printf("measured ceilings (pinned threads, best of repeats):\n");
  std::printf("  peak SP  : %7.1f GFLOP/s 1 thread, %7.1f GFLOP/s %d threads\n",
              c->peak_gflops_sp_1t, c->peak_gflops_sp, c->threads);
  std::printf("  peak DP  : %7.1f GFLOP/s 1 thread, %7.1f GFLOP/s %d threads\n",
              c->peak_gflops_dp_1t, c->peak_gflops_dp, c->threads);
  std::printf("  STREAM   : triad %.1f GB/s, triad non-temporal %.1f GB/s, copy %.1f GB/s\n",
              c->stream_gbps, c->stream_nt_gbps, c->stream_copy_gbps);
}

void print_json(const CpuFeatures& f, Isa isa, const Topology& t, const GpuQuery& g,
                const Ceilings* c) {
  std::printf("{\n  \"version\": \"%s\",\n", taihu::kVersion);
  std::printf("  \"built_with\": {\"cuda\": %s, \"mpi\": %s, \"halide\": %s},\n",
              taihu::kHaveCuda ? "true" : "false", taihu::kHaveMpi ? "true" : "false",
              taihu::kHaveHalide ? "true" : "false");
  std::printf("  \"cpu\": {\"vendor\": \"%s\", \"model\": \"%s\", \"features\": \"%s\"},\n",
              json_escape(f.vendor).c_str(), json_escape(f.model_name).c_str(),
              feature_list(f).c_str());
  std::printf("  \"isa\": \"%s\",\n  \"best_isa\": \"%s\",\n", isa_name(isa),
              isa_name(best_supported_isa(f)));
  std::printf("  \"cores\": %d,\n  \"hardware_threads\": %d,\n  \"numa_nodes\": %d,\n", t.cores,
              t.hardware_threads, t.numa_nodes);
  std::printf("  \"threads\": %d,\n  \"caches\": [", num_threads());
  for (std::size_t i = 0; i < t.caches.size(); ++i)
    std::printf("%s{\"level\": %d, \"bytes\": %zu, \"line\": %d, \"instances\": %d}",
                i ? ", " : "", t.caches[i].level, t.caches[i].size_bytes, t.caches[i].line_bytes,
                t.caches[i].instances);
  std::printf("],\n  \"gpus\": [");
  for (std::size_t i = 0; i < g.devices.size(); ++i) {
    const auto& d = g.devices[i];
    std::printf("%s{\"name\": \"%s\", \"sms\": %d, \"memory_bytes\": %zu, \"cc\": \"%d.%d\"}",
                i ? ", " : "", json_escape(d.name).c_str(), d.multiprocessors, d.memory_bytes,
                d.compute_major, d.compute_minor);
  }
  std::printf("]");
  if (c != nullptr) {
    std::printf(",\n  \"peak_gflops_sp_1t\": %.2f,\n  \"peak_gflops_dp_1t\": %.2f,\n",
                c->peak_gflops_sp_1t, c->peak_gflops_dp_1t);
    std::printf("  \"peak_gflops_sp\": %.2f,\n  \"peak_gflops_dp\": %.2f,\n", c->peak_gflops_sp,
                c->peak_gflops_dp);
    std::printf("  \"stream_gbps\": %.2f,\n  \"stream_nt_gbps\": %.2f,\n  \"stream_copy_gbps\": %.2f",
                c->stream_gbps, c->stream_nt_gbps, c->stream_copy_gbps);
  }
  std::printf("\n}\n");
}

int usage(const char* bad) {
  if (bad) std::fprintf(stderr, "taihu-info: unknown argument '%s'\n", bad);
  std::fprintf(stderr,
               "usage: taihu-info [--json] [--no-measure]\n"
               "  --json        machine-readable output\n"
               "  --no-measure  skip the roofline measurements (peak FLOP/s, STREAM)\n"
               "environment: TAIHU_ISA=generic|avx2|avx512, TAIHU_NUM_THREADS=n, TAIHU_VERBOSE=1\n");
  return bad ? 2 : 0;
}

}  // namespace

int main(int argc, char** argv) {
  bool json = false, measure = true;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--json")) json = true;
    else if (!std::strcmp(argv[i], "--no-measure")) measure = false;
    else if (!std::strcmp(argv[i], "--help") || !std::strcmp(argv[i], "-h")) return usage(nullptr);
    else return usage(argv[i]);
  }
  try {
    check_environment();  // the library would warn and go on; a tool rejects (status 2)
    const CpuFeatures& f = cpu_features();
    const Isa isa = active_isa();
    const Topology& t = topology();
    const GpuQuery g = query_gpus();
    Ceilings c;
    if (measure) {
      if (!json) std::fprintf(stderr, "taihu-info: measuring peak FLOP/s and STREAM bandwidth...\n");
      c = measure_ceilings();
    }
    (json ? print_json : print_text)(f, isa, t, g, measure ? &c : nullptr);
  } catch (const taihu::Error& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 2;
  }
  return 0;
}
