#!/usr/bin/env python3
"""Renders a troupe execution trace (TROUPE_TRACE=path.json) as a timeline.

Usage: trace_timeline.py TRACE.json OUT.{html,svg,png} [--from US] [--span US] [--title TEXT]

One row per kernel thread (processors, actor workers, the timer service,
OS threads); run slices coloured by user thread and labelled with its name,
idle sleeps and OS-thread parks in grey, actor batches in orange with their
message counts, steals as triangles, and each wake as an arrow from the
unpark (or spawn) to the run it caused. --from and --span pick a window in
microseconds from the trace's start (default: the busiest window of
--span, default 200 us).

Needs nothing beyond Python 3 for .html (a page with the timeline as SVG:
hover a slice for its thread, length, end and park reason) and .svg; .png
is drawn by gnuplot (pngcairo), which troupe's benchmarks already install.
Perfetto (ui.perfetto.dev) or chrome://tracing show the same file
interactively; this script is for pictures in docs and reports, and for a
look at a trace on a machine without a browser-side tool.
"""
import argparse
import collections
import html
import json
import os
import shutil
import subprocess
import sys
import tempfile

# matplotlib's tab20, so pictures keep the colours they had.
PALETTE = ["#1f77b4", "#aec7e8", "#ff7f0e", "#ffbb78", "#2ca02c", "#98df8a", "#d62728",
           "#ff9896", "#9467bd", "#c5b0d5", "#8c564b", "#c49c94", "#e377c2", "#f7b6d2",
           "#7f7f7f", "#c7c7c7", "#bcbd22", "#dbdb8d", "#17becf", "#9edae5"]
WAKE = "#d62728"


def order(name):
    for i, prefix in enumerate(("processor", "actor worker", "main", "OS thread", "timer")):
        if name.startswith(prefix):
            return i
    return 9


class Timeline:
    """The picture as primitives in trace coordinates (x: us, y: row)."""

    def __init__(self, start, end, rows, title):
        self.start, self.end, self.rows, self.title = start, end, rows, title
        self.rects = []    # (x0, x1, yc, height, fill, edge, label, tip, label_dy, label_colour)
        self.marks = []    # (x, y, shape, colour)
        self.arrows = []   # (x0, y0, x1, y1, curved)


def build(a):
    with open(a.trace) as f:
        doc = json.load(f)
    events = doc["traceEvents"]
    other = doc.get("otherData", {})
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
    title = a.title or f"troupe execution trace: {os.path.basename(a.trace)}"
    if other.get("dropped_events"):
        title += f" ({other['dropped_events']} events dropped)"
    if other.get("ended_by", "exit") != "exit":
        title += f" (ended by {other['ended_by']})"
    tl = Timeline(start, end, [names.get(t, str(t)) for t in reversed(tids)], title)

    for e in xs:
        if e["tid"] not in row or not visible(e):
            continue
        y = row[e["tid"]]
        x0, x1 = max(e["ts"], start), min(e["ts"] + e["dur"], end)
        w = x1 - x0
        cat = e.get("cat")
        args = e.get("args", {})
        tip = f"{e['name']}: {e['dur']:.3f} us"
        if cat == "run":
            tip += f", end {args.get('end', '?')}"
            if "reason" in args:
                tip += f" ({args['reason']})"
            c = PALETTE[(2 * args.get("thread", 0)) % 20]
            wide = w > a.span / 200
            tl.rects.append((x0, x1, y, 0.6, c, "black" if wide else c,
                             e["name"] if w > a.span / 40 else "", tip, 0, "black"))
        elif cat in ("idle", "park"):
            reason = args.get("reason", cat)
            tl.rects.append((x0, x1, y, 0.25, "#cccccc", "#999999",
                             reason if w > a.span / 25 else "", f"{tip}, {reason}", 0.3, "#595959"))
        elif cat == "actor":
            msgs = args.get("messages", 0)
            tl.rects.append((x0, x1, y, 0.6, "#f28e2b", "black",
                             f"{msgs} msgs" if w > a.span / 40 else "", f"{tip}, {msgs} messages",
                             0, "black"))
        elif cat in ("unpark", "spawn"):
            tl.marks.append((x0, y - 0.36, "^", WAKE if cat == "unpark" else "#2ca02c"))
    for e in events:
        if e.get("ph") == "i" and e["tid"] in row and start <= e["ts"] <= end:
            tl.marks.append((e["ts"], row[e["tid"]] + 0.42,
                             "v" if e.get("cat") == "steal" else "|", "black"))

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
        head = -0.3 if (f["tid"], round(f["ts"], 3)) in run_starts else -0.13
        tl.arrows.append((s["ts"], row[s["tid"]] - 0.36, f["ts"], row[f["tid"]] + head,
                          s["tid"] == f["tid"]))
    return tl


# ------------------------------------------------------------------- SVG

def svg(tl):
    left, right, top, bottom, per_row = 190, 20, 40, 50, 56
    width = 1300
    height = top + bottom + per_row * len(tl.rows)
    plot_w = width - left - right
    span = tl.end - tl.start

    def X(x):
        return left + (x - tl.start) / span * plot_w

    def Y(y):  # row 0 at the bottom, as in the PNG
        return top + (len(tl.rows) - 0.5 - y) * per_row

    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
           f'viewBox="0 0 {width} {height}" font-family="sans-serif">',
           '<defs><marker id="head" markerWidth="6" markerHeight="6" refX="5" refY="3" '
           f'orient="auto"><path d="M0,0 L6,3 L0,6 z" fill="{WAKE}"/></marker></defs>',
           f'<rect width="{width}" height="{height}" fill="white"/>',
           f'<text x="{width / 2}" y="22" text-anchor="middle" font-size="14">'
           f'{html.escape(tl.title)}</text>']
    # Grid and time axis.
    step = nice_step(span / 10)
    t = (tl.start // step + 1) * step
    while t < tl.end:
        out.append(f'<line x1="{X(t):.1f}" y1="{top}" x2="{X(t):.1f}" '
                   f'y2="{height - bottom}" stroke="#e6e6e6"/>')
        out.append(f'<text x="{X(t):.1f}" y="{height - bottom + 16}" text-anchor="middle" '
                   f'font-size="11">{t:g}</text>')
        t += step
    out.append(f'<text x="{left + plot_w / 2}" y="{height - 12}" text-anchor="middle" '
               'font-size="12">time since the trace began (us)</text>')
    for i, name in enumerate(reversed(tl.rows)):
        y = Y(len(tl.rows) - 1 - i)
        out.append(f'<text x="{left - 8}" y="{y + 4:.1f}" text-anchor="end" font-size="12">'
                   f'{html.escape(name)}</text>')
    for x0, x1, y, h, fill, edge, label, tip, dy, lc in tl.rects:
        hp = h * per_row
        out.append(f'<rect x="{X(x0):.2f}" y="{Y(y) - hp / 2:.2f}" '
                   f'width="{max(X(x1) - X(x0), 0.5):.2f}" height="{hp:.2f}" fill="{fill}" '
                   f'stroke="{edge}" stroke-width="0.5"><title>{html.escape(tip)}</title></rect>')
        if label:
            out.append(f'<text x="{(X(x0) + X(x1)) / 2:.2f}" y="{Y(y) - dy * per_row + 4:.2f}" '
                       f'text-anchor="middle" font-size="10" fill="{lc}" pointer-events="none">'
                       f'{html.escape(label)}</text>')
    for x, y, shape, colour in tl.marks:
        px, py = X(x), Y(y)
        if shape == "^":
            out.append(f'<path d="M{px:.2f},{py - 4:.2f} l3.5,6 l-7,0 z" fill="{colour}"/>')
        elif shape == "v":
            out.append(f'<path d="M{px:.2f},{py + 4:.2f} l3.5,-6 l-7,0 z" fill="{colour}"/>')
        else:
            out.append(f'<line x1="{px:.2f}" y1="{py - 5:.2f}" x2="{px:.2f}" y2="{py + 5:.2f}" '
                       f'stroke="{colour}"/>')
    for x0, y0, x1, y1, curved in tl.arrows:
        ax, ay, bx, by = X(x0), Y(y0), X(x1), Y(y1)
        bend = 0.5 if curved else 0.1
        cx, cy = (ax + bx) / 2 - (by - ay) * bend, (ay + by) / 2 + (bx - ax) * bend
        out.append(f'<path d="M{ax:.2f},{ay:.2f} Q{cx:.2f},{cy:.2f} {bx:.2f},{by:.2f}" '
                   f'fill="none" stroke="{WAKE}" stroke-width="0.8" stroke-opacity="0.8" '
                   'marker-end="url(#head)"/>')
    out.append("</svg>")
    return "\n".join(out)


def nice_step(raw):
    if raw <= 0:
        return 1.0
    mag = 10 ** int(f"{raw:e}".split("e")[1])
    for m in (1, 2, 5, 10):
        if raw <= m * mag:
            return m * mag
    return 10 * mag


def page(tl):
    return ("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\">"
            f"<title>{html.escape(tl.title)}</title></head>\n<body style=\"margin:8px\">\n"
            "<p style=\"font:13px sans-serif\">Coloured bars: run slices (one colour per user "
            "thread); grey: sleeps and parks; orange: actor batches; red arrows: wakes (unpark "
            "to the run it caused); triangles: unparks (red), spawns (green), steals (black). "
            "Hover a bar for its details. Open the JSON in ui.perfetto.dev for the whole "
            "run.</p>\n" + svg(tl) + "\n</body></html>\n")


# --------------------------------------------------------------- gnuplot

def gnuplot_png(tl, out):
    gp = shutil.which("gnuplot")
    if not gp:
        sys.exit("a .png needs gnuplot (Debian: gnuplot-nox); .html and .svg need nothing")

    def q(s):
        return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'

    n = len(tl.rows)
    lines = [f"set terminal pngcairo size 1430,{int(150 + 88 * n)} font 'sans,9'",
             f"set output {q(out)}",
             f"set title {q(tl.title)}",
             "set xlabel 'time since the trace began (us)'",
             f"set xrange [{tl.start}:{tl.end}]",
             f"set yrange [-0.7:{n - 0.3}]",
             "set ytics (" + ", ".join(f"{q(name)} {n - 1 - i}" for i, name in
                                        enumerate(reversed(tl.rows))) + ")",
             "set grid xtics lc rgb '#e6e6e6'",
             "set lmargin 28",
             "unset key",
             "set termoption noenhanced"]
    k = 0
    for x0, x1, y, h, fill, edge, label, tip, dy, lc in tl.rects:
        k += 1
        lines.append(f"set object {k} rect from {x0},{y - h / 2} to {max(x1, x0 + 1e-6)},"
                     f"{y + h / 2} fc rgb '{fill}' fs solid 1.0 border lc rgb '{edge}' lw 0.5")
        if label:
            lines.append(f"set label {q(label)} at {(x0 + x1) / 2},{y + dy} center font ',7' "
                         f"tc rgb '{lc}' front")
    for x0, y0, x1, y1, curved in tl.arrows:
        lines.append(f"set arrow from {x0},{y0} to {x1},{y1} lc rgb '{WAKE}' lw 0.6 head "
                     "size screen 0.004,25 front")
    data = tempfile.NamedTemporaryFile("w", suffix=".dat", delete=False)
    with data:
        for x, y, shape, colour in tl.marks:
            pt = {"^": 9, "v": 11}.get(shape, 0)
            data.write(f"{x} {y} {pt} 0x{colour.lstrip('#') if colour != 'black' else '000000'}\n")
    if tl.marks:
        lines.append(f"plot {q(data.name)} using 1:2:3:4 with points pt variable ps 0.6 "
                     "lc rgb variable")
    else:
        lines.append("plot NaN")
    script = "\n".join(lines) + "\n"
    try:
        subprocess.run([gp], input=script, text=True, check=True)
    finally:
        os.unlink(data.name)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("trace")
    ap.add_argument("out")
    ap.add_argument("--from", dest="start", type=float, default=None)
    ap.add_argument("--span", type=float, default=200.0)
    ap.add_argument("--title", default=None)
    a = ap.parse_args()
    tl = build(a)
    ext = os.path.splitext(a.out)[1].lower()
    if ext == ".png":
        gnuplot_png(tl, a.out)
    elif ext == ".svg":
        with open(a.out, "w") as f:
            f.write(svg(tl) + "\n")
    elif ext in (".html", ".htm"):
        with open(a.out, "w") as f:
            f.write(page(tl))
    else:
        sys.exit(f"unknown output type '{ext}': use .html, .svg or .png")
    print(f"wrote {a.out} ({tl.start:.1f}-{tl.end:.1f} us, {len(tl.rows)} tracks)")


if __name__ == "__main__":
    main()
