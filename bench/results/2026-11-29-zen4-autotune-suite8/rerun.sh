#!/bin/bash
cd /tmp/at-suite8
export LD_LIBRARY_PATH=/tmp/at-suite8/lib
one() { tag=$1; desc=$2; rec=$3; thr=$4
  { echo "== $tag $desc $(date -u +%H:%M:%S) $(uptime | sed 's/.*load/load/')"
    flock /tmp/taihu-bench.lock ./bench_autotune_8 --suite-compare $desc --schedule $rec --threads $thr 2>&1 | grep -v ' medians (us)'
    echo "== end $(date -u +%H:%M:%S) $(uptime | sed 's/.*load/load/')"; } > $tag.txt; sleep 2; }
one re_cifar2 mb32ic32ih16oc32oh16kh5ph2 re_cifar2.jsonl 1
one re_res3t2 mb1ic128ih28oc128oh28kh3ph1 re_res3t2.jsonl 2
one re_vgg32 mb32ic256ih56oc256oh56kh3ph1 re_vgg32.jsonl 1
one re_vgg12 mb32ic64ih224oc64oh224kh3ph1 re_vgg12.jsonl 1
echo done > rerun.done
