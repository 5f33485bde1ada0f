// onednn3_conv_server: oneDNN 3.x convolutions timed in their own process, for
// bench_conv and conv_cputime (onednn3_conv_client.hpp drives it over pipes).
//
// Why a process of its own: oneDNN 2.x (Debian's, linked into the benchmarks) and 3.x
// (PyPI's, in build/anchors/venv) export the same dnnl_* C symbols, so one process
// cannot hold both. The client keeps the calls interleaved with taihu's call by call:
// it asks for one call at a time.
//
// Contract: one command per line on stdin, one reply line on stdout, flushed (anything
// the library itself prints goes to stderr).
//   setup <problem> <fwd|bwd_d|bwd_w> <auto|direct>
//       -> "ok <slot> <implementation> <layout>" (format_tag::any everywhere; inputs
//          reordered into the picked layouts once, untimed), or "unavailable <why>".
//   run <slot> <n> <flush|noflush>
//       -> "times <s1> ... <sn>": n executions (each waited for), seconds per call,
//          each preceded by a 96 MiB cache flush when asked, as conv_cputime does.
//   impl <slot> -> "<implementation> <layout>"
//   free <slot> -> "ok": releases that primitive and its buffers (slots are not reused)
//   version     -> "oneDNN <major>.<minor>.<patch> <cpu runtime>"
//   quit (or end of input) -> exits 0. A malformed command -> "error <why>".
// Clock (--clock=cpu|wall, default wall): "cpu" is the CPU time of this whole process
// (CLOCK_PROCESS_CPUTIME_ID). This build's CPU engine is a SYCL device: a primitive
// runs as a host task on a SYCL runtime thread, not on the thread that submits it, so
// the submitting thread's own CPU clock would read ~0; the process clock counts the
// worker's time and, like the thread clock, not the time the host gives to others.
// The client uses it for 1-thread runs, where nothing else in this process works.
// Threads: TBB sizes itself from the affinity mask this process starts with (the
// client sets it); OMP_NUM_THREADS does not apply.
#include <time.h>
#include <unistd.h>

#include <cstdio>
#include <iostream>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <unordered_map>
#include <vector>

#include <oneapi/dnnl/dnnl.hpp>

#include "cache_flush.hpp"
#include "onednn_conv_shape.hpp"
#include "taihu/dnn/conv.hpp"

namespace {

using dnnl::memory;
using tag = memory::format_tag;
using dt = memory::data_type;

bool g_cpu_clock = false;

double seconds() {
  timespec t{};
  clock_gettime(g_cpu_clock ? CLOCK_PROCESS_CPUTIME_ID : CLOCK_MONOTONIC, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

using taihu::bench::flush_cache;

// A 4-D activation layout in taihu's spelling (nchw, nhwc, nChw16c), else the blocks.
std::string layout_name(const memory::desc& md) {
  if (md.get_format_kind() != memory::format_kind::blocked) return "other";
  const int nblks = md.get_inner_nblks();
  const memory::dims blks = md.get_inner_blks(), idxs = md.get_inner_idxs(), s = md.get_strides();
  if (nblks == 0) {
    if (s[1] >= s[2] && s[2] >= s[3]) return "nchw";
    if (s[1] == 1) return "nhwc";
    return "strided";
  }
  if (nblks == 1 && idxs[0] == 1) return "nChw" + std::to_string(blks[0]) + "c";
  std::string out = "blocked:";
  for (int i = 0; i < nblks; ++i) out += std::to_string(blks[i]) + "abcd"[idxs[i]];
  return out;
}
std::string layout_pair(const memory::desc& src, const memory::desc& dst) {
  const std::string a = layout_name(src), b = layout_name(dst);
  return a == b ? a : a + "->" + b;
}

struct Conv {
  dnnl::primitive prim;
  std::unordered_map<int, memory> args;
  std::string impl, layout;
};

class Server {
 public:
  Server() : eng_(dnnl::engine::kind::cpu, 0), strm_(eng_) {}

  std::string setup(const std::string& problem, const std::string& dir, const std::string& algo) {
    const taihu::dnn::ConvDesc d = taihu::dnn::ConvDesc::parse(problem);
    d.validate();
    if (dir != "fwd" && dir != "bwd_d" && dir != "bwd_w") return "error direction '" + dir + "'";
    if (algo != "auto" && algo != "direct") return "error algorithm '" + algo + "'";
    const dnnl::algorithm a =
        algo == "direct" ? dnnl::algorithm::convolution_direct : dnnl::algorithm::convolution_auto;
    const taihu::bench::OnednnConvShape shape = taihu::bench::onednn_conv_shape(d);
    const memory::dims &src = shape.src, &dst = shape.dst, &bias = shape.bias, &wei = shape.wei,
                       &strides = shape.strides, &dil = shape.dilation, &pad_l = shape.pad_l,
                       &pad_r = shape.pad_r;
    const tag wtag = shape.grouped ? tag::goihw : tag::oihw;
    const memory::desc src_any(src, dt::f32, tag::any), dst_any(dst, dt::f32, tag::any),
        wei_any(wei, dt::f32, tag::any), bias_md(bias, dt::f32, tag::x);
    const memory::desc src_user(src, dt::f32, tag::nchw), dst_user(dst, dt::f32, tag::nchw),
        wei_user(wei, dt::f32, wtag);
    auto c = std::make_unique<Conv>();
    try {
      const dnnl::convolution_forward::primitive_desc fpd(eng_, dnnl::prop_kind::forward_training, a, src_any,
                                                          wei_any, bias_md, dst_any, strides, dil, pad_l, pad_r);
      if (dir == "fwd") {
        c->prim = dnnl::convolution_forward(fpd);
        c->impl = fpd.impl_info_str();
        c->layout = layout_pair(fpd.src_desc(), fpd.dst_desc());
        c->args = {{DNNL_ARG_SRC, filled(fpd.src_desc(), src_user, 1)},
                   {DNNL_ARG_WEIGHTS, filled(fpd.weights_desc(), wei_user, 2)},
                   {DNNL_ARG_BIAS, filled(fpd.bias_desc(), bias_md, 3)},
                   {DNNL_ARG_DST, memory(fpd.dst_desc(), eng_)}};
      } else if (dir == "bwd_d") {
        const dnnl::convolution_backward_data::primitive_desc bpd(eng_, a, src_any, wei_any, dst_any, strides, dil,
                                                                  pad_l, pad_r, fpd);
        c->prim = dnnl::convolution_backward_data(bpd);
        c->impl = bpd.impl_info_str();
        c->layout = layout_pair(bpd.diff_src_desc(), bpd.diff_dst_desc());
        c->args = {{DNNL_ARG_DIFF_DST, filled(bpd.diff_dst_desc(), dst_user, 4)},
                   {DNNL_ARG_WEIGHTS, filled(bpd.weights_desc(), wei_user, 2)},
                   {DNNL_ARG_DIFF_SRC, memory(bpd.diff_src_desc(), eng_)}};
      } else {
        const dnnl::convolution_backward_weights::primitive_desc wpd(eng_, a, src_any, wei_any, bias_md, dst_any,
                                                                     strides, dil, pad_l, pad_r, fpd);
        c->prim = dnnl::convolution_backward_weights(wpd);
        c->impl = wpd.impl_info_str();
        c->layout = layout_pair(wpd.src_desc(), wpd.diff_dst_desc());
        c->args = {{DNNL_ARG_SRC, filled(wpd.src_desc(), src_user, 1)},
                   {DNNL_ARG_DIFF_DST, filled(wpd.diff_dst_desc(), dst_user, 4)},
                   {DNNL_ARG_DIFF_WEIGHTS, memory(wpd.diff_weights_desc(), eng_)},
                   {DNNL_ARG_DIFF_BIAS, memory(wpd.diff_bias_desc(), eng_)}};
      }
    } catch (const dnnl::error& e) {
      return std::string("unavailable ") + e.what();  // not offered for this problem here
    }
    convs_.push_back(std::move(c));
    return "ok " + std::to_string(convs_.size() - 1) + " " + describe(*convs_.back());
  }

  std::string run(std::size_t slot, int n, bool flush) {
    if (slot >= convs_.size() || !convs_[slot] || n < 1) return "error bad slot or count";
    Conv& c = *convs_[slot];
    std::string out = "times";
    char buf[32];
    for (int i = 0; i < n; ++i) {
      if (flush) flush_cache();
      const double t0 = seconds();
      c.prim.execute(strm_, c.args);
      strm_.wait();
      std::snprintf(buf, sizeof buf, " %.9g", seconds() - t0);
      out += buf;
    }
    return out;
  }

  std::string impl(std::size_t slot) const {
    return slot < convs_.size() && convs_[slot] ? describe(*convs_[slot]) : "error bad slot";
  }

  std::string free(std::size_t slot) {
    if (slot >= convs_.size()) return "error bad slot";
    convs_[slot].reset();
    return "ok";
  }

 private:
  static std::string describe(const Conv& c) { return c.impl + " " + c.layout; }

  // User data (uniform [-1, 1), plain layout) reordered once into the picked layout.
  memory filled(const memory::desc& want, const memory::desc& user, unsigned seed) {
    memory u(user, eng_);
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> dist(-1.f, 1.f);
    auto* p = u.map_data<float>();
    for (std::size_t i = 0; i < user.get_size() / sizeof(float); ++i) p[i] = dist(rng);
    u.unmap_data(p);
    memory m(want, eng_);
    dnnl::reorder(u, m).execute(strm_, u, m);
    strm_.wait();
    return m;
  }

  dnnl::engine eng_;
  dnnl::stream strm_;
  std::vector<std::unique_ptr<Conv>> convs_;
};

std::string version() {
  const dnnl_version_t* v = dnnl_version();
  return "oneDNN " + std::to_string(v->major) + "." + std::to_string(v->minor) + "." +
         std::to_string(v->patch) + (v->cpu_runtime == DNNL_RUNTIME_SYCL ? " sycl" : " native");
}

}  // namespace

int main(int argc, char** argv) {
  // Replies go to a private copy of stdout; fd 1 becomes stderr, so whatever the
  // library prints there (oneDNN's verbose and error lines) cannot break the protocol.
  FILE* reply_out = fdopen(dup(STDOUT_FILENO), "w");
  if (reply_out == nullptr || dup2(STDERR_FILENO, STDOUT_FILENO) < 0) return 1;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--clock=cpu")
      g_cpu_clock = true;
    else if (a != "--clock=wall") {
      std::fprintf(stderr, "onednn3_conv_server: unknown option '%s'\n", a.c_str());
      return 2;
    }
  }
  std::unique_ptr<Server> server;
  try {
    server = std::make_unique<Server>();
  } catch (const dnnl::error& e) {  // e.g. no SYCL CPU device (OCL_ICD_FILENAMES unset)
    std::fprintf(reply_out, "error no CPU engine: %s\n", e.what());
    std::fflush(reply_out);
    return 1;
  }
  std::string line;
  while (std::getline(std::cin, line)) {
    std::istringstream in(line);
    std::string cmd, reply;
    in >> cmd;
    try {
      if (cmd == "setup") {
        std::string problem, dir, algo;
        in >> problem >> dir >> algo;
        reply = server->setup(problem, dir, algo);
      } else if (cmd == "run") {
        std::size_t slot = 0;
        int n = 0;
        std::string flush;
        in >> slot >> n >> flush;
        reply = in ? server->run(slot, n, flush == "flush") : "error usage: run <slot> <n> <flush|noflush>";
      } else if (cmd == "impl") {
        std::size_t slot = 0;
        in >> slot;
        reply = server->impl(slot);
      } else if (cmd == "free") {
        std::size_t slot = 0;
        in >> slot;
        reply = server->free(slot);
      } else if (cmd == "version") {
        reply = version();
      } else if (cmd == "quit") {
        break;
      } else {
        reply = "error unknown command '" + cmd + "'";
      }
    } catch (const std::exception& e) {  // a bad problem string: say why, keep serving
      reply = std::string("error ") + e.what();
    }
    std::fprintf(reply_out, "%s\n", reply.c_str());
    std::fflush(reply_out);
  }
  return 0;
}
