#!/bin/sh
# usage: run2.sh LIBDIR rounds problems...   (2 threads, pinned) ; prints problem dir algo taihu onednn2 onednn3 ratio
L=$1; shift; R=$1; shift
export TAIHU_ANCHORS_DIR=/work/main/build/anchors
LD_LIBRARY_PATH=$L OMP_NUM_THREADS=2 OMP_PROC_BIND=true taskset -c 0,1 chrt -f 50 /work/main/build/bin/conv_cputime --threads=2 --rounds=$R "$@" 2>&1 | grep '^| `' | awk -F'|' '{printf "%s %s %s taihu=%s d2=%s d3=%s ratio=%s\n",$2,$3,$4,$6,$8,$10,$12}'
