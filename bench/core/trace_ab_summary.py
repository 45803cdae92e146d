#!/usr/bin/env python3
"""Medians of bench/core/trace_ab.sh output (stdin).

One row per benchmark: the median of each mode (off = hooks built in, not
recording; none = hooks compiled out; on = recording) and two ratios of
off and on against none, each as a ratio of medians and as a paired median
(the median over rounds k of mode's k-th run / none's k-th run, which moves
less when the machine's load drifts). Ratios are oriented as costs: > 1
means slower than the build without hooks, whatever the metric.
"""
import collections
import statistics
import sys

runs = collections.defaultdict(list)
for line in sys.stdin:
    if not line.startswith("RESULT "):
        continue
    f = dict(kv.split("=", 1) for kv in line.split()[1:] if "=" in kv)
    runs[(f["bench"], f["metric"], f["mode"])].append(float(f["value"]))


def cost(x, base, metric):
    # ops_per_s: higher is better, so the cost is base / x.
    return base / x if metric.startswith("ops_per") else x / base


print("| bench | metric | none (no hooks) | off | on | off/none | on/none | paired off/none | paired on/none | runs |")
print("|---|---|---|---|---|---|---|---|---|---|")
for b, m in sorted({k[:2] for k in runs}):
    r = {mode: runs[(b, m, mode)] for mode in ("none", "off", "on")}
    if not all(r.values()):
        continue
    med = {mode: statistics.median(v) for mode, v in r.items()}
    n = min(len(v) for v in r.values())
    paired = {mode: statistics.median(cost(r[mode][k], r["none"][k], m) for k in range(n))
              for mode in ("off", "on")}
    print(f"| {b} | {m} | {med['none']:.4g} | {med['off']:.4g} | {med['on']:.4g} | "
          f"{cost(med['off'], med['none'], m):.3f} | {cost(med['on'], med['none'], m):.3f} | "
          f"{paired['off']:.3f} | {paired['on']:.3f} | {n} |")
