#!/usr/bin/env python3
"""One rank of mpi_data_parallel_check.py: the user's script of a data-parallel run,
`mpirun -np P python3 mpi_train_rank.py SOLVER OUT [--steps K] [--fail-rank R]`.

get_solver(SOLVER); K solver.step(1) calls recording this rank's loss each iteration;
solver.snapshot() (collective, rank 0 writes); solver.solve() to max_iter (its final
snapshot). Writes OUT.<rank>.json: rank, count, losses, the snapshot path it was given,
and a SHA-256 of every learnable parameter's bytes at the end. --fail-rank R raises on
rank R after the first step (the check expects the job to end, not hang).
"""
import argparse
import hashlib
import json

import caffe

ap = argparse.ArgumentParser()
ap.add_argument("solver")
ap.add_argument("out")
ap.add_argument("--steps", type=int, default=10)
ap.add_argument("--fail-rank", type=int, default=-1)
args = ap.parse_args()

caffe.set_mode_cpu()
solver = caffe.get_solver(args.solver)
losses = []
for i in range(args.steps):
    solver.step(1)
    losses.append(float(solver.net.blobs["loss"].data))
    if i == 0 and caffe.solver_rank() == args.fail_rank:
        raise RuntimeError("rank %d fails on purpose" % args.fail_rank)
state = solver.snapshot()
solver.solve()

digest = hashlib.sha256()
for name, blobs in solver.net.params.items():
    for b in blobs:
        digest.update(b.data.tobytes())
with open("%s.%d.json" % (args.out, caffe.solver_rank()), "w") as f:
    json.dump({"rank": caffe.solver_rank(), "count": caffe.solver_count(), "losses": losses,
               "snapshot": state, "iter": solver.iter, "params_sha256": digest.hexdigest()}, f)
