#!/usr/bin/env python3
"""Renders a troupe execution trace (TROUPE_TRACE=path.json) as a PNG timeline.

Usage: trace_timeline.py TRACE.json OUT.png [--from US] [--span US] [--title TEXT]

One row per kernel thread (processors, actor workers, the timer service,
OS threads); run slices coloured by user thread and labelled with its name,
idle sleeps and OS-thread parks in grey, actor batches in orange with their
message counts, steals as triangles, and each wake as an arrow from the
unpark (or spawn) to the run it caused. --from and --span pick a window in
microseconds from the trace's start (default: the busiest window of
--span, default 200 us). Needs matplotlib (Debian: python3-matplotlib).
Perfetto (ui.perfetto.dev) or chrome://tracing show the same file
interactively; this script is for pictures in docs and reports.
"""
import argparse
import collections
import json
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("trace")
    ap.add_argument("out")
    ap.add_argument("--from", dest="start", type=float, default=None)
    ap.add_argument("--span", type=float, default=200.0)
    ap.add_argument("--title", default=None)
    a = ap.parse_args()
    with open(a.trace) as f:
        events = json.load(f)["traceEvents"]

    names = {e["tid"]: e["args"]["name"] for e in events
             if e.get("ph") == "M" and e.get("name") == "thread_name"}
    xs = [e for e in events if e.get("ph") == "X"]
    if not xs:
        sys.exit("no slices in the trace")
    start = a.start
    if start is None:
        # The window with run slices on the most tracks, then the most runs.
        runs = sorted((e["ts"], e["tid"]) for e in xs if e.get("cat") == "run")
        best, j = ((0, 0), 0.0), 0
        window = collections.Counter()
        for i, (t, tid) in enumerate(runs):
            window[tid] += 1
            while runs[j][0] < t - a.span:
                window[runs[j][1]] -= 1
                if not window[runs[j][1]]:
                    del window[runs[j][1]]
                j += 1
            score = (len(window), i - j + 1)
            if score > best[0]:
                best = (score, runs[j][0])
        start = max(0.0, best[1] - a.span * 0.02)
    end = start + a.span

    def visible(e):
        return e["ts"] <= end and e["ts"] + e.get("dur", 0) >= start

    tids = sorted({e["tid"] for e in xs if visible(e)} | {e["tid"] for e in events
                  if e.get("ph") in ("i", "s", "f") and start <= e["ts"] <= end},
                  key=lambda t: (order(names.get(t, "")), names.get(t, str(t))))
    row = {t: i for i, t in enumerate(reversed(tids))}
    palette = plt.get_cmap("tab20").colors
    fig, ax = plt.subplots(figsize=(13, 1.4 + 0.8 * len(tids)), dpi=110)

    for e in xs:
        if e["tid"] not in row or not visible(e):
            continue
        y = row[e["tid"]]
        x0, w = max(e["ts"], start), min(e["ts"] + e["dur"], end) - max(e["ts"], start)
        cat = e.get("cat")
        if cat == "run":
            c = palette[(2 * e["args"]["thread"]) % 20]
            wide = w > a.span / 200
            ax.barh(y, w, left=x0, height=0.6, color=c, edgecolor="black" if wide else c,
                    linewidth=0.4 if wide else 0)
            if w > a.span / 40:
                ax.text(x0 + w / 2, y, e["name"], ha="center", va="center", fontsize=7,
                        clip_on=True)
        elif cat in ("idle", "park"):
            ax.barh(y, w, left=x0, height=0.25, color="0.8", edgecolor="0.6", linewidth=0.3)
            if w > a.span / 25:
                ax.text(x0 + w / 2, y + 0.22, e["args"].get("reason", cat), ha="center",
                        va="bottom", fontsize=6, color="0.35", clip_on=True)
        elif cat == "actor":
            ax.barh(y, w, left=x0, height=0.6, color="#f28e2b", edgecolor="black", linewidth=0.4)
            if w > a.span / 40:
                ax.text(x0 + w / 2, y, f"{e['args']['messages']} msgs", ha="center",
                        va="center", fontsize=7, clip_on=True)
        elif cat in ("unpark", "spawn"):
            ax.plot([x0], [y - 0.36], marker="^", markersize=3, linestyle="none",
                    color="#d62728" if cat == "unpark" else "#2ca02c")
    for e in events:
        if e.get("ph") == "i" and e["tid"] in row and start <= e["ts"] <= end:
            marker = "v" if e.get("cat") == "steal" else "|"
            ax.plot(e["ts"], row[e["tid"]] + 0.42, marker=marker, color="black", markersize=5)

    run_starts = {(e["tid"], round(e["ts"], 3)) for e in xs if e.get("cat") == "run"}
    flows = collections.defaultdict(dict)
    for e in events:
        if e.get("ph") in ("s", "f"):
            flows[e["id"]][e["ph"]] = e
    for pair in flows.values():
        s, f = pair.get("s"), pair.get("f")
        if not s or not f or s["tid"] not in row or f["tid"] not in row:
            continue
        if not (start <= s["ts"] <= end and start <= f["ts"] <= end):
            continue
        same = s["tid"] == f["tid"]
        head = -0.3 if (f["tid"], round(f["ts"], 3)) in run_starts else -0.13
        ax.annotate("", xy=(f["ts"], row[f["tid"]] + head), xytext=(s["ts"], row[s["tid"]] - 0.36),
                    arrowprops=dict(arrowstyle="->", color="#d62728", linewidth=0.6, alpha=0.8,
                                    shrinkA=0, shrinkB=0,
                                    connectionstyle="arc3,rad=0.5" if same else "arc3,rad=0.1"))

    ax.set_yticks(range(len(tids)))
    ax.set_yticklabels([names.get(t, str(t)) for t in reversed(tids)], fontsize=8)
    ax.set_xlim(start, end)
    ax.set_ylim(-0.7, len(tids) - 0.3)
    ax.set_xlabel("time since the trace began (us)")
    ax.set_title(a.title or f"troupe execution trace: {a.trace}", fontsize=10)
    ax.grid(axis="x", color="0.9")
    fig.subplots_adjust(left=0.17, right=0.98, bottom=0.5 / (1.4 + 0.8 * len(tids)) + 0.08,
                        top=1 - 0.4 / (1.4 + 0.8 * len(tids)))
    fig.savefig(a.out)
    print(f"wrote {a.out} ({start:.1f}-{end:.1f} us, {len(tids)} tracks)")


def order(name):
    for i, prefix in enumerate(("processor", "actor worker", "main", "OS thread", "timer")):
        if name.startswith(prefix):
            return i
    return 9


if __name__ == "__main__":
    main()
