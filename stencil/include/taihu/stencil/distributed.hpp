// MPI domain decomposition for models that outgrow one machine (built when taihu has
// MPI). The slow axis (y in 3D, x in 2D) is cut into contiguous slabs over a 1-D
// Cartesian communicator (MPI_Cart_create); every step each rank posts non-blocking
// sends/receives of its halo planes (whole padded planes: contiguous, no packing),
// updates its interior while they fly, then the planes next to its cuts.
// Results are identical to one rank, bit for bit: every point's arithmetic is the same,
// and receivers are summed plane by plane in a fixed order (see
// Propagator::sample_planes) after an exact reduction (one non-zero term per entry).
//
// Constraint: the slow axis' absorbing slabs (plus the stencil radius) must lie inside
// the first and the last rank; decompose() throws naming the smallest allowed slab.
#pragma once
#include "taihu/arch/build_config.hpp"

#if TAIHU_HAVE_MPI
#include <mpi.h>

#include "taihu/stencil/propagator.hpp"

namespace taihu::stencil {

struct Decomposition {
  int ranks = 1, rank = 0;
  int lower = MPI_PROC_NULL, upper = MPI_PROC_NULL;  // neighbours along the slow axis
  Subdomain sub;                                      // this rank's slab
  MPI_Comm cart = MPI_COMM_NULL;                      // owned by the caller (MPI_Comm_free)
};

// Splits the model's slow axis over `comm`'s ranks as evenly as possible.
Decomposition decompose(MPI_Comm comm, const Model& model, const Options& options);

// Runs one shot decomposed over `comm`; every rank must call it with the same arguments.
// The full record is returned on rank 0 (other ranks get an empty data vector).
ShotRecord run_shot_distributed(MPI_Comm comm, const Model& model, const Shot& shot, const Options& options);

}  // namespace taihu::stencil
#endif
