#!/usr/bin/env python3
"""Turns benchmark RESULT lines into CSV, a table of medians, and plots.

Used by bench/run; stdlib only. A RESULT line (bench/README.md, "RESULT lines"):

    RESULT bench=<name> system=<system> metric=<metric> value=<number> <param>=<value>...

Subcommands:
    csv RAW CSV            RESULT lines of RAW -> CSV (bench,system,metric,value,params)
    meta CSV KEY=VALUE...  writes the run's facts (quick, runs, load averages) beside CSV
    table [--quick] CSV... medians per (bench, params, system) and troupe/peer ratios,
                           the load average the run saw, and the checks (lost_values);
                           --quick (or quick=1 in a CSV's .meta): a smoke-test banner
                           and no verdicts
    plot CSV PREFIX        one PNG per benchmark: PREFIX-<bench>.png (needs gnuplot):
                           medians with min-max whiskers, log scale past a 10x spread
"""
import csv
import math
import os
import statistics
import subprocess
import sys
import tempfile

FIELDS = ["bench", "system", "metric", "value", "params"]
LOWER_IS_BETTER = {"ns_per_op", "seconds", "max_rss_kb", "cpu_percent", "wait_p50_ns",
                   "wait_p99_ns", "wait_max_ns", "cpu_seconds", "wall_seconds",
                   "bytes_per_timer", "cpu_ns_per_op", "bytes_per_conn", "switches_per_op",
                   "bytes_per_op"}
HIGHER_IS_BETTER = {"ops_per_s"}
# Metrics that are correctness checks, not measurements: metric -> the value
# every run must report. Printed as a check (OK / FAILED), never plotted.
CHECKS = {"lost_values": 0.0, "check_mismatch": 0.0}


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


def meta_path(csv_path):
    """The .meta file bench/run writes beside a CSV."""
    return (csv_path[:-4] if csv_path.endswith(".csv") else csv_path) + ".meta"


def cmd_meta(csv_path, pairs):
    with open(meta_path(csv_path), "w") as f:
        for p in pairs:
            f.write(p + "\n")


def read_meta(paths):
    """KEY=VALUE facts of each CSV's run, in order; {} where none was written."""
    metas = []
    for p in paths:
        m = {}
        try:
            with open(meta_path(p)) as f:
                for line in f:
                    k, sep, v = line.strip().partition("=")
                    if sep:
                        m[k] = v
        except OSError:
            pass
        metas.append(m)
    return metas


def print_load(paths, metas):
    """One line per CSV: the 1-minute load average at the start and end of its run."""
    cpus = os.cpu_count() or 1
    for p, m in zip(paths, metas):
        name = os.path.basename(p)
        if "load_start" in m:
            start, end = m["load_start"], m.get("load_end", "?")
            n = m.get("cpus", str(cpus))
            note = ""
            try:
                if max(float(start), float(end)) > 0.75 * float(n):
                    note = "  (busy machine: timings and ratios move with the load)"
            except ValueError:
                pass
            print(f"load average (1 min): {start} at start, {end} at end, {n} CPUs [{name}]{note}")
        else:
            now = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
            print(f"load average: not recorded with {name}; now {now:.2f} on {cpus} CPUs")


def print_checks(checks):
    """Correctness checks (CHECKS): one line each, OK or FAILED."""
    if not checks:
        return
    print("checks:")
    failed = 0
    for (bench, params, metric, system), vals in checks.items():
        want = CHECKS[metric]
        bad = [v for v in vals if v != want]
        failed += bool(bad)
        state = "OK" if not bad else f"FAILED (worst {fmt(max(bad, key=lambda v: abs(v - want)))})"
        label = " ".join(x for x in (bench, params, system) if x)
        print(f"  {label}: {metric} = {fmt(want)} in {len(vals) - len(bad)}/{len(vals)} runs: {state}")
    if failed:
        print(f"  {failed} check(s) FAILED")


def cmd_table(paths, quick=False):
    metas = read_meta(paths)
    quick = quick or any(m.get("quick") == "1" for m in metas)
    if quick:
        print("*** QUICK RUN: reduced sizes and few runs on a shared machine. These numbers are a")
        print("*** smoke test that the programs work; they measure nothing. No verdicts are given.")
    print_load(paths, metas)
    rows = load(paths)
    if not rows:
        print("(no results)")
        return
    checks = {}
    measured = []
    for r in rows:
        if r["metric"] in CHECKS:
            checks.setdefault((r["bench"], r["params"], r["metric"], r["system"]), []).append(r["value"])
        else:
            measured.append(r)
    groups = group(measured)
    header = ["bench", "params", "system", "metric", "n", "median", "min", "max",
              "troupe/peer", "paired"] + ([] if quick else ["verdict"])
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
            line = [bench, params or "-", s, metric, str(len(vals)), fmt(med),
                    fmt(min(vals)), fmt(max(vals)), ratio, paired]
            lines.append(line + ([] if quick else [say]))
    if lines:
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
        print("troupe/peer = troupe median / peer median, same bench and params" +
              ("." if quick else "; verdict reads it."))
        print("paired = median over runs k of troupe run k / peer run k (neighbours in time,"
              " so less sensitive to load drifting during the session).")
        print("Lower is better for " + ", ".join(sorted(LOWER_IS_BETTER)) +
              "; higher is better for " + ", ".join(sorted(HIGHER_IS_BETTER)) + ".")
    print_checks(checks)


def cmd_plot(path, prefix):
    rows = [r for r in load([path]) if r["metric"] not in CHECKS]  # checks are not plotted
    quick = read_meta([path])[0].get("quick") == "1"
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
        stats = {(k[1], s): (statistics.median(v), min(v), max(v), len(v))
                 for k, sy in groups.items() for s, v in sy.items()}
        spread = [x for st in stats.values() for x in st[:3] if x > 0]
        log = bool(spread) and max(spread) / min(spread) > 10
        runs = sorted({st[3] for st in stats.values()})
        name = bench if len(metrics_per_bench[bench]) == 1 else f"{bench}-{metric}"
        png = f"{prefix}-{name}.png"
        with tempfile.TemporaryDirectory() as tmp:
            data = os.path.join(tmp, "data.dat")
            with open(data, "w") as f:
                f.write("params " + " ".join(f'"{s}" min max' for s in systems) + "\n")
                for p in params:
                    cells = []
                    for s in systems:
                        st = stats.get((p, s))
                        cells += [f"{x:.6g}" for x in st[:3]] if st else ["?", "?", "?"]
                    # Labels: one parameter per line, so long sets stay readable.
                    label = (p or bench).replace(" ", "\\n")
                    f.write(f'"{label}" ' + " ".join(cells) + "\n")
            direction = ("lower is better" if metric in LOWER_IS_BETTER else
                         "higher is better" if metric in HIGHER_IS_BETTER else "")
            n_runs = "/".join(str(r) for r in runs)
            title = (f"{bench}: median {metric}{', ' + direction if direction else ''}"
                     f"\\nwhiskers: min-max of {n_runs} run(s)"
                     f"{', QUICK smoke test: not a measurement' if quick else ''}")
            script = f"""
set terminal pngcairo size {max(900, 140 * len(params) * max(1, len(systems)) // 2)},620 noenhanced font ',11'
set output '{png}'
set title "{title}"
set datafile missing '?'
set style data histograms
set style histogram errorbars gap 1 lw 1.5
set style fill solid 0.75 border -1
set boxwidth 0.9
set key outside top center horizontal
set ylabel '{metric}{" (log scale)" if log else ""}'
{"set logscale y" if log else "set yrange [0:*]"}
set xtics font ',10'
set bmargin {min(14, 3 + max(1, max((p.count(" ") + 1 for p in params), default=1)))}
set grid ytics
set format y '{"%.1s%c" if spread and max(spread) >= 1e4 else "%g"}'
plot for [i=0:{len(systems) - 1}] '{data}' using (column(2+3*i)):(column(3+3*i)):(column(4+3*i)):xtic(1) title columnheader(2+3*i)
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
    elif len(argv) >= 2 and argv[0] == "meta":
        cmd_meta(argv[1], argv[2:])
    elif len(argv) >= 2 and argv[0] == "table":
        args = argv[1:]
        quick = "--quick" in args
        paths = [a for a in args if a != "--quick"]
        if not paths:
            print(__doc__, file=sys.stderr)
            return 2
        cmd_table(paths, quick)
    elif len(argv) == 3 and argv[0] == "plot":
        cmd_plot(argv[1], argv[2])
    else:
        print(__doc__, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
