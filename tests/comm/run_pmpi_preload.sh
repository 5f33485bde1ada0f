#!/bin/sh
# run_pmpi_preload.sh: runs plain_mpi_allreduce (an MPI program that knows nothing of taihu)
# without and with libtaihu_allreduce_pmpi.so preloaded, and checks that
#  - both runs pass their own checks (exact sums against a reference, all ranks identical);
#  - their "exact" lines (case, count, hash of the result) are identical;
#  - TAIHU_VERBOSE shows the preload taking float/double sums ("-> taihu <algorithm>") and
#    passing MPI_MAX, MPI_INT, the derived datatype and MPI_Iallreduce to MPI;
#  - TAIHU_PMPI_DISABLE=1 takes nothing over; a bad TAIHU_PMPI_MIN_BYTES fails the job
#    with a message naming it; MPI_THREAD_MULTIPLE passes through; counts that differ
#    across ranks come back as MPI_ERR_OTHER under MPI_ERRORS_RETURN.
# Usage: run_pmpi_preload.sh <mpiexec> <np> <program> <preload.so> [extra mpiexec flags...]
# Extra environment for the ranks (e.g. TAIHU_ALLREDUCE=ring) is passed with -x by the caller.
set -u
mpiexec=$1 np=$2 program=$3 preload=$4
shift 4
work=$(mktemp -d "${TMPDIR:-/tmp}/taihu-pmpi-test.XXXXXX")
trap 'rm -rf "$work"' EXIT
launch="$mpiexec -n $np --oversubscribe --bind-to none --mca btl self,vader $*"
fail() { echo "FAIL: $*"; for f in "$work"/*; do echo "== $f"; head -c 6000 "$f"; done; exit 1; }

# shellcheck disable=SC2086
$launch "$program" >"$work/plain.out" 2>"$work/plain.err" || fail "the program failed without the preload"
# shellcheck disable=SC2086
$launch -x LD_PRELOAD="$preload" -x TAIHU_VERBOSE=1 "$program" >"$work/preload.out" 2>"$work/preload.err" ||
  fail "the program failed with the preload"
grep '^exact ' "$work/plain.out" >"$work/plain.exact"
grep '^exact ' "$work/preload.out" >"$work/preload.exact"
[ "$(wc -l <"$work/plain.exact")" -ge 40 ] || fail "too few cases ran"
cmp -s "$work/plain.exact" "$work/preload.exact" || fail "results differ with the preload: $(diff "$work/plain.exact" "$work/preload.exact" | head -5)"

v="$work/preload.err"
grep -q 'pmpi: rank 0: MPI_Allreduce, MPI_FLOAT MPI_SUM on MPI_COMM_WORLD .*count 1009 .*-> taihu ' "$v" ||
  fail "no TAIHU_VERBOSE line shows the preload taking a float sum"
grep -q 'pmpi: rank 0: MPI_Allreduce, MPI_DOUBLE MPI_SUM on MPI_COMM_WORLD .*count 1048579 .*-> taihu ' "$v" ||
  fail "no TAIHU_VERBOSE line shows the preload taking a double sum"
grep -q 'MPI_FLOAT MPI_MAX on .*count 1000 .*-> PMPI_Allreduce (op is not MPI_SUM)' "$v" || fail "MPI_MAX not passed through"
grep -q 'MPI_INT MPI_SUM on .*count 1000 .*-> PMPI_Allreduce (datatype' "$v" || fail "MPI_INT not passed through"
grep -q 'derived datatype another op on .*count 250 .*-> PMPI_Allreduce' "$v" || fail "the derived datatype not passed through"
grep -q 'MPI_Iallreduce, .*-> PMPI_Iallreduce' "$v" || fail "MPI_Iallreduce not shown"
if [ "$np" -ge 3 ]; then
  grep -q 'MPI_Allreduce, MPI_FLOAT MPI_SUM on communicator ([2-9] ranks).*-> taihu ' "$v" ||
    fail "the split communicator's sums did not take the taihu path"
fi

# shellcheck disable=SC2086
$launch -x LD_PRELOAD="$preload" -x TAIHU_VERBOSE=1 -x TAIHU_PMPI_DISABLE=1 "$program" >"$work/off.out" 2>"$work/off.err" ||
  fail "the program failed with TAIHU_PMPI_DISABLE=1"
grep -q -- '-> taihu ' "$work/off.err" && fail "TAIHU_PMPI_DISABLE=1 still took calls over"
grep -q 'PMPI_Allreduce (TAIHU_PMPI_DISABLE=1)' "$work/off.err" || fail "TAIHU_PMPI_DISABLE=1 not shown"
grep '^exact ' "$work/off.out" | cmp -s - "$work/plain.exact" || fail "results differ with TAIHU_PMPI_DISABLE=1"

# shellcheck disable=SC2086
$launch -x LD_PRELOAD="$preload" -x TAIHU_VERBOSE=1 "$program" --thread-multiple >"$work/multi.out" 2>"$work/multi.err" ||
  fail "the program failed under MPI_THREAD_MULTIPLE"
if grep -q '^provided MPI_THREAD_MULTIPLE' "$work/multi.out"; then
  grep -q -- 'MPI_Allreduce, .*-> taihu ' "$work/multi.err" && fail "blocking MPI_THREAD_MULTIPLE calls were taken over"
  grep -q 'PMPI_Allreduce (MPI_THREAD_MULTIPLE' "$work/multi.err" || fail "MPI_THREAD_MULTIPLE pass-through not shown"
fi
grep '^exact ' "$work/multi.out" | cmp -s - "$work/plain.exact" || fail "results differ under MPI_THREAD_MULTIPLE"

# shellcheck disable=SC2086
if $launch -x LD_PRELOAD="$preload" -x TAIHU_PMPI_MIN_BYTES=lots "$program" >"$work/bad.out" 2>"$work/bad.err"; then
  fail "a bad TAIHU_PMPI_MIN_BYTES did not fail the job"
fi
grep -q "TAIHU_PMPI_MIN_BYTES='lots'" "$work/bad.err" || fail "the error does not name TAIHU_PMPI_MIN_BYTES"
# An erroneous call (counts differ) under MPI_ERRORS_RETURN: every rank gets MPI_ERR_OTHER and
# a message naming the counts (detected by the shared-memory path, the default on one host).
if [ -z "${TAIHU_ALLREDUCE:-}${TAIHU_TOPOLOGY:-}" ]; then
  # shellcheck disable=SC2086
  $launch -x LD_PRELOAD="$preload" "$program" --mismatched-counts >"$work/mismatch.out" 2>"$work/mismatch.err" ||
    fail "the mismatched-count run failed"
  [ "$(grep -c ': MPI_ERR_OTHER$' "$work/mismatch.out")" -eq "$np" ] || fail "not every rank got MPI_ERR_OTHER"
  grep -q 'taihu-pmpi (rank 0): .*counts differ across ranks' "$work/mismatch.err" || fail "no message names the counts"
fi
echo "pmpi preload: $(grep -c '^exact ' "$work/preload.out") cases identical with and without the preload at $np ranks"
