#!/usr/bin/env python3
# Medians of ab_worker_threads.sh output (stdin): one row per bench, metric
# and processor count; columns K, U1, U2 and the ratios U1/K, U2/K (for
# times, < 1 means the user-thread mode was faster).
import collections
import statistics
import sys

runs = collections.defaultdict(list)
for line in sys.stdin:
    if not line.startswith("RESULT "):
        continue
    f = dict(kv.split("=", 1) for kv in line.split()[1:] if "=" in kv)
    runs[(f["bench"], f["metric"], int(f["procs"]), f["mode"])].append(float(f["value"]))
rows = sorted({k[:3] for k in runs})
print(f"| bench | metric | P | K | U1 | U2 | U1/K | U2/K | n |")
print("|---|---|---|---|---|---|---|---|---|")
for b, m, p in rows:
    med = {mode: statistics.median(runs[(b, m, p, mode)]) for mode in ("K", "U1", "U2") if runs[(b, m, p, mode)]}
    n = min(len(runs[(b, m, p, mode)]) for mode in ("K", "U1", "U2"))
    k = med.get("K")
    def fmt(x):
        return "-" if x is None else f"{x:.4g}"
    def ratio(x):
        return "-" if x is None or not k else f"{x / k:.2f}"
    print(f"| {b} | {m} | {p} | {fmt(k)} | {fmt(med.get('U1'))} | {fmt(med.get('U2'))} | "
          f"{ratio(med.get('U1'))} | {ratio(med.get('U2'))} | {n} |")
