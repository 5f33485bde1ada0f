#!/usr/bin/env python3
"""Turns a bench_<module> JSON file (--benchmark_out=F --benchmark_out_format=json)
into the Markdown table the README shows: one row per benchmark with taihu's rate,
% of the measured peak, and the ratio to each anchor.

    build/bin/bench_gemm --benchmark_out=gemm.json --benchmark_out_format=json
    scripts/bench_table.py gemm.json
"""
import json
import sys


def main(path):
    with open(path) as f:
        runs = json.load(f)["benchmarks"]
    ratio_keys = sorted({k for r in runs for k in r if k.startswith("vs_") and k != "vs_anchor"})
    unit = next((u for u in ("gflops", "gpts", "gbps") if any(u in r for r in runs)), "gflops")
    header = ["benchmark", unit, f"anchor {unit}", "% peak", "vs best anchor"] + ratio_keys
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for r in runs:
        if "error_occurred" in r:
            continue
        name = r["name"].split("/iterations:")[0]
        cells = [name, f"{r.get(unit, 0):.1f}", f"{r.get('anchor_' + unit, 0):.1f}",
                 f"{r.get('pct_peak', 0):.0f}", f"{r.get('vs_anchor', 0):.2f}"]
        cells += [f"{r.get(k, 0):.2f}" for k in ratio_keys]
        print("| " + " | ".join(cells) + " |")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: bench_table.py BENCH.json")
    main(sys.argv[1])
