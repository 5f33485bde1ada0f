#!/bin/sh
# run_pmpi_iallreduce.sh: runs plain_mpi_iallreduce (an MPI program that knows nothing of taihu)
# without and with libtaihu_allreduce_pmpi.so preloaded, each run under a timeout, and checks
#  - every run passes its own checks (sums within rounding of a reference, identical on all
#    ranks; the integer / MPI_MAX calls exact), including the crossed posting orders on two
#    communicators (a hang fails the test at the timeout);
#  - with the preload at MPI_THREAD_MULTIPLE and TAIHU_PMPI_THREADS=serial (so MPI_Allreduce
#    takes the taihu path too) every MPI_Iallreduce result is bitwise equal to MPI_Allreduce's;
#  - TAIHU_VERBOSE shows the float and double sums run by taihu on the worker thread (on both
#    crossed communicators and on MPI_COMM_WORLD) and MPI_INT / MPI_MAX handed to
#    PMPI_Iallreduce;
#  - at MPI_THREAD_SERIALIZED, and with TAIHU_PMPI_IALLREDUCE=0, every MPI_Iallreduce goes to
#    PMPI_Iallreduce, with the same results as without the preload.
# Usage: run_pmpi_iallreduce.sh <mpiexec> <np> <program> <preload.so> [extra mpiexec flags...]
set -u
mpiexec=$1 np=$2 program=$3 preload=$4
shift 4
work=$(mktemp -d "${TMPDIR:-/tmp}/taihu-pmpi-iallreduce.XXXXXX")
trap 'rm -rf "$work"' EXIT
launch="timeout -k 5 90 $mpiexec -n $np --oversubscribe --bind-to none --mca btl self,vader $*"
fail() { echo "FAIL: $*"; for f in "$work"/*; do echo "== $f"; head -c 6000 "$f"; done; exit 1; }
# run <label> <mpiexec args...>: one job; a timeout (124/137) is reported as a hang.
run() {
  label=$1
  shift
  # shellcheck disable=SC2086
  $launch "$@" >"$work/$label.out" 2>"$work/$label.err"
  rc=$?
  [ $rc -eq 124 ] || [ $rc -eq 137 ] && fail "$label: hung (killed after 90 s)"
  [ $rc -eq 0 ] || fail "$label: exit status $rc"
  grep -q '^all cases passed' "$work/$label.out" || fail "$label: cases failed"
}

run plain "$program"
run preload -x LD_PRELOAD="$preload" -x TAIHU_VERBOSE=1 -x TAIHU_PMPI_THREADS=serial "$program" --expect-bitwise
grep -q '^provided MPI_THREAD_MULTIPLE' "$work/preload.out" || {
  echo "SKIP: this MPI does not provide MPI_THREAD_MULTIPLE (the takeover needs it)"
  exit 0
}
[ "$(grep -c '^case ' "$work/preload.out")" -ge 18 ] || fail "too few cases ran"
grep -q 'differs_from_blocking=[1-9]' "$work/preload.out" && fail "an Iallreduce result differs from MPI_Allreduce's"

v="$work/preload.err"
for comm in comm_a MPI_COMM_WORLD; do
  grep -q "pmpi: rank 0: MPI_Iallreduce, MPI_FLOAT MPI_SUM on $comm .*-> taihu .* (worker thread)" "$v" ||
    fail "no TAIHU_VERBOSE line shows a float MPI_Iallreduce on $comm run by taihu's worker"
done
grep -q "pmpi: rank 0: MPI_Iallreduce, MPI_DOUBLE MPI_SUM on comm_b .*-> taihu .* (worker thread)" "$v" ||
  fail "no TAIHU_VERBOSE line shows a double MPI_Iallreduce run by taihu's worker"
grep -q 'MPI_Iallreduce, MPI_INT MPI_SUM on .*-> PMPI_Iallreduce (datatype' "$v" || fail "MPI_INT not passed through"
grep -q 'MPI_Iallreduce, MPI_FLOAT MPI_MAX on .*-> PMPI_Iallreduce (op is not MPI_SUM)' "$v" ||
  fail "MPI_MAX not passed through"
grep -q 'MPI_Allreduce, MPI_FLOAT MPI_SUM on .*-> taihu ' "$v" || fail "the blocking comparison did not take the taihu path"

# Below MPI_THREAD_MULTIPLE, and when switched off: PMPI_Iallreduce, results as without the preload.
run plain_serialized "$program" --serialized
run serialized -x LD_PRELOAD="$preload" -x TAIHU_VERBOSE=1 "$program" --serialized
grep -q 'MPI_Iallreduce, .*-> taihu' "$work/serialized.err" && fail "MPI_THREAD_SERIALIZED calls were taken over"
grep -q 'MPI_Iallreduce, MPI_FLOAT MPI_SUM .*-> PMPI_Iallreduce (provided thread level below MPI_THREAD_MULTIPLE)' \
  "$work/serialized.err" || fail "the MPI_THREAD_SERIALIZED fallback is not shown"
run off -x LD_PRELOAD="$preload" -x TAIHU_VERBOSE=1 -x TAIHU_PMPI_IALLREDUCE=0 "$program"
grep -q 'MPI_Iallreduce, .*-> taihu' "$work/off.err" && fail "TAIHU_PMPI_IALLREDUCE=0 still took calls over"
grep -q 'PMPI_Iallreduce (TAIHU_PMPI_IALLREDUCE=0)' "$work/off.err" || fail "TAIHU_PMPI_IALLREDUCE=0 not shown"
for pair in "plain serialized" "plain off" "plain_serialized serialized"; do
  set -- $pair
  sed 's/ differs_from_blocking=.*//' "$work/$1.out" | grep '^case ' >"$work/$1.cases"
  sed 's/ differs_from_blocking=.*//' "$work/$2.out" | grep '^case ' >"$work/$2.cases"
  cmp -s "$work/$1.cases" "$work/$2.cases" || fail "$2 gives other results than $1 (both PMPI_Iallreduce)"
done
echo "pmpi iallreduce: $(grep -c '^case ' "$work/preload.out") cases at $np ranks; taken over at MPI_THREAD_MULTIPLE" \
  "(bitwise equal to the blocking path), PMPI_Iallreduce at MPI_THREAD_SERIALIZED and when switched off"
