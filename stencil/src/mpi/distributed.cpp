// MPI domain decomposition (see distributed.hpp).
#include "taihu/stencil/distributed.hpp"

#include <algorithm>
#include <string>

#include "physics/divergence.hpp"
#include "taihu/arch/error.hpp"
#include "taihu/arch/log.hpp"

namespace taihu::stencil {
namespace {

void check(int rc, const char* what) {
  if (rc != MPI_SUCCESS) throw Error(std::string("taihu: MPI error in ") + what);
}

// Exchanges `half` planes with both neighbours; planes are contiguous because the slow
// axis is the outermost of the padded layout.
class MpiHalo final : public HaloExchange {
 public:
  MpiHalo(const Decomposition& d, int dim, int half) : d_(d), dim_(dim), half_(half) {}
  void start(const std::vector<Field*>& fields) override {
    requests_.clear();
    int tag = 0;
    for (Field* f : fields) {
      const Layout& L = f->layout();
      const long stride = dim_ == 3 ? L.s2 : L.s1;
      const long ns = L.n[dim_ == 3 ? 2 : 1];
      float* plane0 = f->data() + (dim_ == 3 ? L.index(-L.pad[0], -L.pad[1], 0) : L.index(-L.pad[0], 0, 0));
      const int count = static_cast<int>(stride * half_);
      // To the lower neighbour: my first planes; from it: its last planes into my low halo.
      post(MPI_Irecv(plane0 - stride * half_, count, MPI_FLOAT, d_.lower, tag + 1, d_.cart, next()), "Irecv");
      post(MPI_Irecv(plane0 + stride * ns, count, MPI_FLOAT, d_.upper, tag, d_.cart, next()), "Irecv");
      post(MPI_Isend(plane0, count, MPI_FLOAT, d_.lower, tag, d_.cart, next()), "Isend");
      post(MPI_Isend(plane0 + stride * (ns - half_), count, MPI_FLOAT, d_.upper, tag + 1, d_.cart, next()), "Isend");
      tag += 2;
    }
  }
  void finish() override {
    check(MPI_Waitall(static_cast<int>(requests_.size()), requests_.data(), MPI_STATUSES_IGNORE), "Waitall");
  }

 private:
  MPI_Request* next() {
    requests_.push_back(MPI_REQUEST_NULL);
    return &requests_.back();
  }
  static void post(int rc, const char* what) { check(rc, what); }
  const Decomposition& d_;
  int dim_, half_;
  std::vector<MPI_Request> requests_;
};

}  // namespace

Decomposition decompose(MPI_Comm comm, const Model& model, const Options& options) {
  Decomposition d;
  check(MPI_Comm_size(comm, &d.ranks), "Comm_size");
  int dims[1] = {d.ranks}, periods[1] = {0};
  check(MPI_Dims_create(d.ranks, 1, dims), "Dims_create");
  check(MPI_Cart_create(comm, 1, dims, periods, 0, &d.cart), "Cart_create");
  check(MPI_Comm_rank(d.cart, &d.rank), "Comm_rank");
  check(MPI_Cart_shift(d.cart, 0, 1, &d.lower, &d.upper), "Cart_shift");
  const Grid& g = model.grid;
  const long n = g.n[g.slow_axis()];
  const long begin = n * d.rank / d.ranks, end = n * (d.rank + 1) / d.ranks;
  d.sub = {begin, end - begin};
  const long half = options.space_order / 2;
  // Edge slabs must hold the absorbing layer plus a stencil radius; every slab a radius.
  const long edge_min = options.boundary.kind == BoundaryKind::none ? half : options.boundary.width + 2 * half;
  const long first = n / d.ranks, last = n - n * (d.ranks - 1) / d.ranks;
  if (d.ranks > 1 && (std::min(first, last) < edge_min || n / d.ranks < half)) {
    MPI_Comm_free(&d.cart);
    throw Error("taihu: cannot split " + std::to_string(n) + " points of the slow axis over " +
                std::to_string(d.ranks) + " ranks: the edge slabs need >= " + std::to_string(edge_min) +
                " points (absorbing width + 2 x stencil radius); use fewer ranks");
  }
  arch::log_verbose("stencil: rank %d/%d owns slow-axis slab [%ld, %ld)", d.rank, d.ranks, begin, end);
  return d;
}

ShotRecord run_shot_distributed(MPI_Comm comm, const Model& model, const Shot& shot, const Options& options) {
  const Options opt = resolved(model, options);
  if (shot.wavelet.size() < static_cast<std::size_t>(opt.nt))
    throw Error("taihu: the wavelet is shorter than the run's " + std::to_string(opt.nt) + " steps");
  Decomposition d = decompose(comm, model, opt);
  ShotRecord out;
  try {
    Propagator prop(model, opt, d.sub);
    MpiHalo halo(d, model.grid.dim, opt.space_order / 2);
    const PointStencil src = point_stencil(model.grid, shot.source);
    std::vector<PointStencil> rec;
    for (const auto& r : shot.receivers) rec.push_back(point_stencil(model.grid, r));
    constexpr int kPlanes = 2 * kSincRadius;
    const std::size_t nrec = rec.size(), nt = static_cast<std::size_t>(opt.nt);
    std::vector<float> partial(nrec * nt * kPlanes, 0.f);
    const int every = std::max(1, opt.nt / 50);
    DivergenceGuard guard(model, opt, shot.wavelet);
    for (int it = 0; it < opt.nt; ++it) {
      for (std::size_t r = 0; r < nrec; ++r) prop.sample_planes(rec[r], &partial[(r * nt + it) * kPlanes]);
      prop.step(&src, shot.wavelet[it], &halo);
      if (guard.due(it + 1)) {  // every rank sees the same maximum, so all stop together
        float m = prop.max_abs();
        check(MPI_Allreduce(MPI_IN_PLACE, &m, 1, MPI_FLOAT, MPI_MAX, d.cart), "Allreduce");
        guard.check(m, it + 1);
      }
      if (opt.on_progress && d.rank == 0 && (it % every == 0 || it + 1 == opt.nt)) opt.on_progress(it + 1, opt.nt);
    }
    // Exact: each (receiver, step, plane) entry is non-zero on at most one rank.
    std::vector<float> summed(d.rank == 0 ? partial.size() : 0);
    check(MPI_Reduce(partial.data(), d.rank == 0 ? summed.data() : nullptr, static_cast<int>(partial.size()), MPI_FLOAT,
                     MPI_SUM, 0, d.cart),
          "Reduce");
    out.nt = opt.nt;
    out.dt = opt.dt;
    out.source = shot.source;
    out.receivers = shot.receivers;
    if (d.rank == 0) {
      out.data.assign(nrec * nt, 0.f);
      const int slow = model.grid.slow_axis();
      for (std::size_t r = 0; r < nrec; ++r)
        for (std::size_t it = 0; it < nt; ++it) {
          float sum = 0.f;
          for (int k = 0; k < rec[r].count[slow]; ++k) sum += summed[(r * nt + it) * kPlanes + k];
          out.data[r * nt + it] = sum;
        }
      guard.check_record(out);
    }
  } catch (...) {
    MPI_Comm_free(&d.cart);
    throw;
  }
  MPI_Comm_free(&d.cart);
  return out;
}

}  // namespace taihu::stencil
