#!/usr/bin/env python3
"""Turns benchmark RESULT lines into CSV, a table of medians, and plots.

Used by bench/run; stdlib only. A RESULT line (DESIGN.md "Benchmark contract"):

    RESULT bench=<name> system=<system> metric=<metric> value=<number> <param>=<value>...

Subcommands:
    csv RAW CSV            RESULT lines of RAW -> CSV (bench,system,metric,value,params)
    table CSV...           medians per (bench, params, system) and troupe/peer ratios
    plot CSV PREFIX        one PNG per benchmark: PREFIX-<bench>.png (needs gnuplot)
"""
import csv
import math
import os
import statistics
import subprocess
import sys
import tempfile

FIELDS = ["bench", "system", "metric", "value", "params"]
LOWER_IS_BETTER = {"ns_per_op", "seconds", "max_rss_kb", "cpu_percent", "lost_values"}
HIGHER_IS_BETTER = {"ops_per_s"}


def parse_line(line):
    """One RESULT line -> dict with FIELDS, or None if malformed."""
    parts = line.split()
    if not parts or parts[0] != "RESULT":
        return None
    kv = {}
    params = []
    for p in parts[1:]:
        if "=" not in p:
            return None
        k, v = p.split("=", 1)
        if k in ("bench", "system", "metric", "value"):
            kv[k] = v
        else:
            params.append(p)
    if not all(k in kv for k in ("bench", "system", "metric", "value")):
        return None
    try:
        float(kv["value"])
    except ValueError:
        return None
    kv["params"] = " ".join(params)  # in the order the program printed them
    return kv


def cmd_csv(raw, out):
    rows, bad = [], 0
    with open(raw) as f:
        for line in f:
            line = line.strip()
            if not line:
                continue
            r = parse_line(line)
            if r is None:
                bad += 1
            else:
                rows.append(r)
    with open(out, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=FIELDS)
        w.writeheader()
        w.writerows(rows)
    if bad:
        print(f"bench: {bad} line(s) of {raw} were not RESULT lines (ignored)", file=sys.stderr)
    return len(rows)


def load(paths):
    rows = []
    for p in paths:
        with open(p, newline="") as f:
            for r in csv.DictReader(f):
                r["value"] = float(r["value"])
                rows.append(r)
    return rows


def group(rows):
    """(bench, params, metric) -> {system: [values]}, in first-seen order."""
    groups = {}
    for r in rows:
        key = (r["bench"], r["params"], r["metric"])
        groups.setdefault(key, {}).setdefault(r["system"], []).append(r["value"])
    return groups


def fmt(v):
    """Readable number: 4 significant digits, k/M/G above 1e5, e-notation tiny."""
    a = abs(v)
    if a == 0:
        return "0"
    if a < 0.01:
        return f"{v:.2e}"
    if a < 1000:
        return f"{v:.4g}"
    if a < 1e5:
        return f"{v:.0f}"
    for div, unit in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if a >= div:
            return f"{v / div:.4g}{unit}"
    return f"{v:.4g}"


def verdict(metric, t, p):
    """Ratio troupe/peer and a sentence saying which side is better."""
    if p == 0 or t == 0:
        return "n/a", ""
    ratio = t / p
    if metric in LOWER_IS_BETTER:
        better = ratio < 1
        factor = p / t if better else t / p
    elif metric in HIGHER_IS_BETTER:
        better = ratio > 1
        factor = ratio if better else p / t
    else:
        return f"{ratio:.3g}", "(direction unknown)"
    if math.isclose(factor, 1.0, rel_tol=0.005):
        return f"{ratio:.3g}", "same"
    return f"{ratio:.3g}", f"troupe {factor:.2f}x {'better' if better else 'worse'}"


def cmd_table(paths):
    rows = load(paths)
    if not rows:
        print("(no results)")
        return
    groups = group(rows)
    header = ["bench", "params", "system", "metric", "n", "median", "min", "max",
              "troupe/peer", "paired", "verdict"]
    lines = []
    for (bench, params, metric), systems in groups.items():
        t_med = statistics.median(systems["troupe"]) if "troupe" in systems else None
        order = sorted(systems, key=lambda s: (s != "troupe", s))
        for s in order:
            vals = systems[s]
            med = statistics.median(vals)
            ratio, paired, say = "", "", ""
            if s != "troupe" and t_med is not None:
                ratio, say = verdict(metric, t_med, med)
                # Run k of troupe against run k of the peer: run.sh alternates
                # them, so each pair saw about the same machine load.
                pairs = [t / p for t, p in zip(systems["troupe"], vals) if p != 0]
                if pairs:
                    paired = f"{statistics.median(pairs):.3g}"
            lines.append([bench, params or "-", s, metric, str(len(vals)), fmt(med),
                          fmt(min(vals)), fmt(max(vals)), ratio, paired, say])
    widths = [max(len(h), *(len(l[i]) for l in lines)) for i, h in enumerate(header)]
    print("  ".join(h.ljust(w) for h, w in zip(header, widths)).rstrip())
    print("  ".join("-" * w for w in widths))
    prev = None
    for l in lines:
        if prev is not None and l[0] != prev:
            print()
        prev = l[0]
        print("  ".join(c.ljust(w) for c, w in zip(l, widths)).rstrip())
    print()
    print("troupe/peer = troupe median / peer median, same bench and params; verdict reads it.")
    print("paired = median over runs k of troupe run k / peer run k (neighbours in time,"
          " so less sensitive to load drifting during the session).")
    print("Lower is better for " + ", ".join(sorted(LOWER_IS_BETTER)) +
          "; higher is better for " + ", ".join(sorted(HIGHER_IS_BETTER)) + ".")


def cmd_plot(path, prefix):
    rows = load([path])
    by_bench = {}
    for r in rows:
        by_bench.setdefault((r["bench"], r["metric"]), []).append(r)
    metrics_per_bench = {}
    for bench, metric in by_bench:
        metrics_per_bench.setdefault(bench, []).append(metric)
    made = []
    for (bench, metric), rs in by_bench.items():
        groups = group(rs)
        params = [k[1] for k in groups]
        systems = []
        for k in groups:
            for s in groups[k]:
                if s not in systems:
                    systems.append(s)
        systems.sort(key=lambda s: (s != "troupe", s))
        meds = {(k[1], s): statistics.median(v) for k, sy in groups.items() for s, v in sy.items()}
        vals = [v for v in meds.values() if v > 0]
        name = bench if len(metrics_per_bench[bench]) == 1 else f"{bench}-{metric}"
        png = f"{prefix}-{name}.png"
        with tempfile.TemporaryDirectory() as tmp:
            data = os.path.join(tmp, "data.dat")
            with open(data, "w") as f:
                f.write("params " + " ".join(f'"{s}"' for s in systems) + "\n")
                for p in params:
                    cells = [f"{meds[(p, s)]:.6g}" if (p, s) in meds else "?" for s in systems]
                    f.write(f'"{p or bench}" ' + " ".join(cells) + "\n")
            direction = ("lower is better" if metric in LOWER_IS_BETTER else
                         "higher is better" if metric in HIGHER_IS_BETTER else "")
            log = vals and min(vals) > 0 and max(vals) / min(vals) > 50
            script = f"""
set terminal pngcairo size 900,540 noenhanced
set output '{png}'
set title '{bench}: median {metric}{" (" + direction + ")" if direction else ""}'
set datafile missing '?'
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set boxwidth 0.9
set key outside right top
set ylabel '{metric}{" (log scale)" if log else ""}'
set yrange [{'*' if log else '0'}:*]
{"set logscale y" if log else ""}
set xtics rotate by -30 font ',9'
set bmargin 7
set grid ytics
plot for [i=2:{len(systems) + 1}] '{data}' using i:xtic(1) title columnheader(i)
"""
            res = subprocess.run(["gnuplot"], input=script, text=True, capture_output=True)
            if res.returncode != 0:
                print(f"bench: gnuplot failed for {bench}: {res.stderr.strip()}", file=sys.stderr)
                continue
        made.append(png)
    for m in made:
        print(m)


def main(argv):
    if len(argv) >= 3 and argv[0] == "csv":
        n = cmd_csv(argv[1], argv[2])
        print(n)
    elif len(argv) >= 2 and argv[0] == "table":
        cmd_table(argv[1:])
    elif len(argv) == 3 and argv[0] == "plot":
        cmd_plot(argv[1], argv[2])
    else:
        print(__doc__, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
