#!/bin/sh
cd /work/main
for i in 1 2; do
(uptime; env AB_VAR=TAIHU_SERIAL_BELOW AB_VALUES=4000000,0 OMP_NUM_THREADS=2 OMP_PROC_BIND=true taskset -c 0,1 chrt -f 50 build/bin/conv_cputime --threads=2 --rounds=7 --only=taihu mb1ic1ih28oc20oh24kh5 mb1ic20ih12oc50oh8kh5; uptime) > /tmp/flush/serial_ab_$i.txt 2>&1
done
