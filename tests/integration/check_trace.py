#!/usr/bin/env python3
"""Runs a troupe program with TROUPE_TRACE set and checks the trace it writes.

Usage: check_trace.py PROGRAM [ARGS...]

The program (tests/integration/trace_test.cpp, tests/io/trace_test.cpp)
prints "TRACE-EXPECT" lines naming what the trace must show; this script
checks, besides those, that the file is valid JSON in the Chrome trace
event format, that every flow arrow pairs an unpark (or spawn) with the
next run of the thread it woke, that every I/O slice begins and ends, and
that slices are well formed. "TRACE-EXPECT partial": the program is not
the whole-program workload (no hand-off, spawn or channel checks). Exit
status 0: pass, 1: fail, 77: skip (troupe built with -Dtrace=false).
"""
import collections
import json
import os
import subprocess
import sys
import tempfile

failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
    return cond


def main():
    if len(sys.argv) < 2:
        print(__doc__)
        return 2
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "trace.json")
        env = dict(os.environ, TROUPE_TRACE=path)
        run = subprocess.run(sys.argv[1:], env=env, stdout=subprocess.PIPE, text=True)
        sys.stdout.write(run.stdout)
        if run.returncode != 0:
            print(f"check_trace: the program failed (exit {run.returncode})")
            return 1
        expect = [l.split()[1:] for l in run.stdout.splitlines() if l.startswith("TRACE-EXPECT ")]
        if ["recording", "0"] in expect:
            print("check_trace: troupe built without trace hooks (-Dtrace=false): skipped")
            return 77
        if not os.path.exists(path):
            print(f"check_trace: no trace file written at {path}")
            return 1
        with open(path) as f:
            try:
                doc = json.load(f)
            except json.JSONDecodeError as e:
                print(f"check_trace: the trace is not valid JSON: {e}")
                return 1
    check_document(doc, expect)
    if failures:
        for f in failures:
            print("check_trace: FAIL:", f)
        return 1
    print(f"check_trace: ok ({len(doc['traceEvents'])} events)")
    return 0


def check_document(doc, expect):
    if not check(isinstance(doc, dict) and isinstance(doc.get("traceEvents"), list),
                 "top level is not {\"traceEvents\": [...]}"):
        return
    events = doc["traceEvents"]
    other = doc.get("otherData", {})
    check(other.get("dropped_events") == 0,
          f"events were dropped ({other.get('dropped_events')}): the checks below need them all")
    for e in events:
        for key in ("name", "ph", "pid"):
            check(key in e, f"event without '{key}': {e}")
        if e.get("ph") != "M":
            check(isinstance(e.get("ts"), (int, float)) and e["ts"] >= 0, f"bad ts: {e}")
        if e.get("ph") == "X":
            check(isinstance(e.get("dur"), (int, float)) and e["dur"] >= 0, f"bad dur: {e}")

    names = {e["tid"]: e["args"]["name"] for e in events
             if e.get("ph") == "M" and e.get("name") == "thread_name"}
    slices = collections.defaultdict(list)  # tid -> X events
    for e in events:
        if e.get("ph") == "X":
            slices[e["tid"]].append(e)
    runs = [e for e in events if e.get("ph") == "X" and e.get("cat") == "run"]
    check(runs, "no run slices at all")

    # Run slices on one kernel thread never overlap (a processor runs one
    # user thread at a time).
    for tid, xs in slices.items():
        rs = sorted((e for e in xs if e.get("cat") == "run"), key=lambda e: e["ts"])
        for a, b in zip(rs, rs[1:]):
            check(a["ts"] + a["dur"] <= b["ts"] + 1e-3,
                  f"overlapping run slices on {names.get(tid, tid)}: {a} / {b}")

    # Flow arrows: every 's' has exactly one 'f' (same id, name, cat), after it.
    starts = {e["id"]: e for e in events if e.get("ph") == "s"}
    finishes = {e["id"]: e for e in events if e.get("ph") == "f"}
    check(len(starts) == sum(1 for e in events if e.get("ph") == "s"), "duplicate flow start ids")
    check(len(finishes) == sum(1 for e in events if e.get("ph") == "f"), "duplicate flow end ids")
    check(set(starts) == set(finishes), "flow starts and ends do not pair up: " +
          str(sorted(set(starts) ^ set(finishes))[:10]))
    check(starts, "no flow arrows at all")

    # Slices by (track, start) and (track, end), in nanoseconds (the file
    # has three decimals of microseconds; an end may be off by one).
    def ns(t):
        return int(round(t * 1000))

    by_start = collections.defaultdict(list)
    by_end = collections.defaultdict(list)
    for tid, xs in slices.items():
        for x in xs:
            by_start[(tid, ns(x["ts"]))].append(x)
            by_end[(tid, ns(x["ts"]) + ns(x["dur"]))].append(x)

    def ending_at(tid, t):
        return [x for d in (-1, 0, 1) for x in by_end.get((tid, ns(t) + d), [])]

    kinds = collections.Counter()
    for fid, s in starts.items():
        f = finishes.get(fid)
        if f is None:
            continue
        check(s["name"] == f["name"] and s["cat"] == f["cat"], f"flow {fid}: name/cat differ")
        check(f["ts"] >= s["ts"], f"flow {fid} ends before it starts")
        check(f.get("bp") == "e", f"flow end {fid} not bound to its enclosing slice")
        # The tail: an unpark or spawn slice of the waker's track, starting there.
        tail = [x for x in by_start.get((s["tid"], ns(s["ts"])), [])
                if x.get("cat") in ("unpark", "spawn")]
        if not check(tail, f"flow {fid}: no unpark/spawn slice at its start {s}"):
            continue
        tail = tail[0]
        # The head: the woken thread's run slice starting there, or the end
        # of an OS thread's park / idle sleep.
        run = [x for x in by_start.get((f["tid"], ns(f["ts"])), []) if x.get("cat") == "run"]
        if run:
            # The wake names the thread that then runs.
            check(tail.get("args", {}).get("thread") == run[0]["args"]["thread"],
                  f"flow {fid}: woke thread {tail.get('args', {}).get('thread')} but "
                  f"thread {run[0]['args']['thread']} ran")
            kinds["run:" + tail["args"]["how"]] += 1
        else:
            sleep = [x for x in ending_at(f["tid"], f["ts"]) if x.get("cat") in ("park", "idle")]
            if check(sleep, f"flow {fid}: its end is neither a run start nor a sleep's end {f}"):
                kinds[sleep[0]["cat"] + ":" + sleep[0]["args"]["reason"]] += 1
    # Park reasons noted at the park sites.
    reasons = collections.Counter(e["args"].get("reason") for e in runs
                                  if e["args"].get("end") == "park")
    if ["partial"] not in expect:
        check(kinds["run:hand-off"] > 0, f"no hand-off wake arrows ({dict(kinds)})")
        check(kinds["run:new thread"] > 0, f"no spawn arrows ({dict(kinds)})")
        check(reasons["channel remove"] + reasons["channel insert"] > 0,
              f"no run slice ended by a channel park ({dict(reasons)})")

    # I/O slices: async begin/end pairs (cat "io"), one id each, the end not
    # before the begin, naming operation and descriptor.
    io_begin = {e["id"]: e for e in events if e.get("cat") == "io" and e.get("ph") == "b"}
    io_end = {e["id"]: e for e in events if e.get("cat") == "io" and e.get("ph") == "e"}
    check(set(io_begin) == set(io_end), "I/O slices whose begin and end do not pair up: " +
          str(sorted(set(io_begin) ^ set(io_end))[:10]))
    for i, b in io_begin.items():
        e = io_end.get(i)
        if e is None:
            continue
        check(e["ts"] >= b["ts"] and e["name"] == b["name"], f"I/O slice {i} malformed: {b} / {e}")
        check(b["name"] == f"io {b['args']['op']} fd {b['args']['fd']}",
              f"I/O slice {i} does not name its operation and descriptor: {b}")

    for exp in expect:
        if exp[0] == "processor":
            index, cluster = exp[1], exp[2]
            label = f"processor {index} ({cluster})"
            tids = [t for t, n in names.items() if n == label]
            check(tids, f"no track named '{label}' (tracks: {sorted(names.values())})")
            check(any(e["tid"] in tids for e in runs), f"no run slice on '{label}'")
        elif exp[0] == "os-park":
            parks = [e for e in events if e.get("ph") == "X" and e.get("cat") == "park"
                     and e["args"].get("reason") == exp[1]]
            check(parks, f"no OS-thread park slice with reason '{exp[1]}'")
            check(kinds["park:" + exp[1]] > 0,
                  f"no wake arrow ends an OS thread's '{exp[1]}' park ({dict(kinds)})")
        elif exp[0] == "io-wait":
            # "io-wait OP FD PARK-REASON": an I/O slice of that operation on
            # that descriptor, and a user thread's run slice ended by a park
            # with that reason (the I/O wait's kind).
            op, fd, why = exp[1], int(exp[2]), " ".join(exp[3:])
            mine = [b for b in io_begin.values()
                    if b["args"]["op"] == op and b["args"]["fd"] == fd]
            check(mine, f"no I/O slice 'io {op} fd {fd}' "
                        f"(I/O slices: {sorted({b['name'] for b in io_begin.values()})})")
            check(reasons[why] > 0, f"no run slice ended by a park '{why}' ({dict(reasons)})")
        elif exp[0] == "io-os-wait":
            # "io-os-wait OP FD": an OS thread's I/O slice, on its own track,
            # spanning one of its parks.
            op, fd = exp[1], int(exp[2])
            mine = [b for b in io_begin.values()
                    if b["args"]["op"] == op and b["args"]["fd"] == fd]
            ok = False
            for b in mine:
                e = io_end.get(b["id"])
                parks = [x for x in slices.get(b["tid"], []) if x.get("cat") == "park"]
                ok = ok or (e is not None and any(
                    b["ts"] <= x["ts"] + 1e-3 and x["ts"] + x["dur"] <= e["ts"] + 1e-3
                    for x in parks))
            check(ok, f"no OS thread's I/O slice 'io {op} fd {fd}' around one of its parks")
        elif exp[0] == "actor-messages":
            batches = [e for e in events if e.get("cat") == "actor"
                       and e["name"] in ("actor batch", "actor batches")]
            check(batches, "no actor batch events")
            total = sum(e["args"]["messages"] for e in batches)
            check(all(e["args"]["messages"] >= e["args"]["batches"] > 0 for e in batches),
                  "an empty actor batch")
            check(total == int(exp[1]),
                  f"actor batches count {total} messages, the program received {exp[1]}")
            workers = {names.get(e["tid"], "") for e in batches}
            check(all(w.startswith("actor worker") for w in workers),
                  f"batches on tracks other than actor workers: {workers}")


if __name__ == "__main__":
    sys.exit(main())
