#!/bin/sh
# netlib's level-3 BLAS test programs (Debian's libblas-test) with libtaihu_blas.so
# preloaded: xblat3s/xblat3d (Fortran: error exits through the program's own XERBLA,
# and the computational checks) and, where the reference BLAS is installed (its
# libblas.so.3 defines the CBLAS globals the programs need), xscblat3/xdcblat3 (error
# exits through cblas_xerbla, both layouts). Every routine the input files name
# (GEMM, SYMM, TRMM, TRSM, SYRK, SYR2K) is taihu's, so every line is switched on. The
# Fortran programs run twice: with the shipped sizes (N up to 9) and with sizes up to
# the programs' NMAX of 65, which cross taihu's diagonal-block sizes (64 for
# trmm/trsm, 96 is out of reach) so its recursive splits are exercised too.
# Usage: netlib_blat3.sh LIBTAIHU_BLAS. Exit 0: all lines passed; 77: libblas-test
# is not installed (ctest SKIP_RETURN_CODE); 1: a failure (the summary is printed).
set -u
if [ ! -f "$1" ]; then
  echo "FAILED: $1: no such library"
  exit 1
fi
lib=$(realpath "$1")  # the programs run in a temporary directory
multiarch=$(gcc -print-multiarch 2>/dev/null || echo x86_64-linux-gnu)
dir=/usr/lib/$multiarch/blas
if [ ! -x "$dir/xblat3s" ] || [ ! -x "$dir/xblat3d" ]; then
  echo "SKIPPED: libblas-test is not installed ($dir/xblat3s); apt-get install libblas-test"
  exit 77
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1
status=0
routines="GEMM SYMM TRMM TRSM SYRK SYR2K"
served() {  # served LOG ROUTINE...: TAIHU_VERBOSE's line for each, else the preload failed
  log=$1
  shift
  for r in "$@"; do
    if ! grep -q "blas: $r served by libtaihu_blas" "$log"; then
      echo "FAILED: $r was not served by $lib (see below)"
      head -5 "$log"
      status=1
    fi
  done
}
check() {  # check OUTPUT PATTERN...
  out=$1
  shift
  for pattern in "$@"; do
    if ! grep -q "$pattern" "$out"; then
      echo "FAILED: '$pattern' not in $out"
      status=1
    fi
  done
  grep "PASSED" "$out"
  if grep -q "\*\*\*\*\*" "$out"; then
    grep "\*\*\*\*\*" "$out" | head -20
    status=1
  fi
}
for p in s d; do
  P=$(echo $p | tr sd SD)
  patterns=""
  for r in $routines; do
    name=$(printf '%-6s' "$P$r")
    patterns="$patterns|$name PASSED THE TESTS OF ERROR-EXITS|$name PASSED THE COMPUTATIONAL TESTS"
  done
  for sizes in small large; do
    if [ $sizes = small ]; then
      cp "$dir/${p}blat3.in" ${p}blat3.in
    else  # the sizes line and its count; no error exits the second time
      sed -E -e 's/^6( +NUMBER OF VALUES OF N)/5\1/' -e 's/^0 1 2 3 5 9( +VALUES OF N)/1 9 33 64 65\1/' \
        -e 's/^T( +LOGICAL FLAG, T TO TEST ERROR EXITS)/F\1/' "$dir/${p}blat3.in" > ${p}blat3.in
    fi
    # The large sizes at 1 thread: thousands of tiny GEMMs, each an OpenMP region else.
    threads=2; [ $sizes = large ] && threads=1
    TAIHU_NUM_THREADS=$threads TAIHU_VERBOSE=1 LD_PRELOAD=$lib "$dir/xblat3$p" < ${p}blat3.in > xblat3$p.log 2>&1
    echo "xblat3$p, $sizes sizes (exit $?):"
    # shellcheck disable=SC2046
    served xblat3$p.log $(for r in $routines; do echo "$P$r"; done)
    IFS='|'
    if [ $sizes = small ]; then
      # shellcheck disable=SC2086
      check ${p}blat3.out $patterns
    else
      # shellcheck disable=SC2086
      check ${p}blat3.out $(echo "$patterns" | tr '|' '\n' | grep COMPUTATIONAL | tr '\n' '|')
    fi
    unset IFS
  done
done
if [ -e "$dir/libblas.so.3" ] && [ -x "$dir/xscblat3" ]; then
  for p in s d; do
    patterns=""
    for r in $routines; do
      name=$(printf '%-6s' "$(echo $p$r | tr A-Z a-z)")
      patterns="$patterns|cblas_$name PASSED THE TESTS OF ERROR-EXITS"
      patterns="$patterns|cblas_$name PASSED THE COLUMN-MAJOR COMPUTATIONAL TESTS"
      patterns="$patterns|cblas_$name PASSED THE ROW-MAJOR    COMPUTATIONAL TESTS"
    done
    TAIHU_VERBOSE=1 LD_LIBRARY_PATH=$dir LD_PRELOAD=$lib "$dir/x${p}cblat3" < "$dir/${p}in3" \
      > x${p}cblat3.out 2>&1
    echo "x${p}cblat3 (exit $?):"
    # shellcheck disable=SC2046
    served x${p}cblat3.out $(for r in $routines; do echo "cblas_$p$r" | tr A-Z a-z; done)
    IFS='|'
    # shellcheck disable=SC2086
    check x${p}cblat3.out $patterns
    unset IFS
  done
else
  echo "note: reference BLAS ($dir/libblas.so.3, package libblas3) not installed: CBLAS tests not run"
fi
[ $status -eq 0 ] && echo "netlib level-3 tests passed with $lib preloaded"
exit $status
