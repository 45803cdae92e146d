#!/usr/bin/env python3
"""Instruction-count guard of the actor send and deliver paths.

    send_cost.py PROGRAM [--limits FILE] [--print]

Runs PROGRAM (actors_send_cost, a release build) under callgrind for each
case in the limits file, twice (n = N1 and n = N2 messages), counting only
the instructions executed inside the worker's batches (worker::gulp and
worker::process: the gulp, every delivery, the behaviours, their sends, the end-of-batch flush).
The count per message is the difference divided by N2 - N1, so start-up,
shut-down and idle spinning (outside batches) cancel. It fails (exit 1)
when a case costs more than its limit, or implausibly little (the
collection point was renamed or inlined: the guard would measure nothing).
Instruction counts do not depend on the machine's load; they do depend on
the compiler, so the limits name the compiler they were set with.
--print prints the counts and the limits without failing. Needs valgrind
(scripts/deps.sh installs it).
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

N1, N2 = 20_000, 120_000
# The batch: its gulp and its processing (exact names: a pattern would also
# match process's cold clone, and entering that would toggle counting off).
COLLECT = ['troupe::detail::worker::gulp(troupe::detail::mailbox&)',
           'troupe::detail::worker::process(troupe::detail::mailbox&)']


def count(program, case, n, tmp):
    out = os.path.join(tmp, f'cg.{case}.{n}')
    cmd = (['valgrind', '--tool=callgrind', '--collect-atstart=no'] +
           [f'--toggle-collect={c}' for c in COLLECT] +
           [f'--callgrind-out-file={out}', program, f'--case={case}', f'--n={n}'])
    r = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if r.returncode != 0:
        sys.exit(f'send_cost: {" ".join(cmd)} failed ({r.returncode}):\n{r.stderr[-2000:]}')
    with open(out) as f:
        for line in f:
            m = re.match(r'(?:summary|totals):\s+(\d+)', line)
            if m:
                return int(m.group(1))
    sys.exit(f'send_cost: no totals in {out}')


def read_limits(path):
    limits = {}
    with open(path) as f:
        for line in f:
            line = line.split('#', 1)[0].split()
            if not line:
                continue
            if len(line) != 3:
                sys.exit(f'send_cost: {path}: expected "case recovered limit", got {line}')
            limits[line[0]] = (float(line[1]), float(line[2]))
    return limits


def main():
    args = sys.argv[1:]
    show = '--print' in args
    args = [a for a in args if a != '--print']
    limits_path = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'send_cost.limits')
    if '--limits' in args:
        i = args.index('--limits')
        limits_path = args[i + 1]
        del args[i:i + 2]
    if len(args) != 1:
        sys.exit(__doc__)
    program = args[0]
    if not shutil.which('valgrind'):
        sys.exit('send_cost: valgrind not found (bash scripts/deps.sh installs it)')
    failed = False
    with tempfile.TemporaryDirectory() as tmp:
        for case, (recorded, limit) in read_limits(limits_path).items():
            per = (count(program, case, N2, tmp) - count(program, case, N1, tmp)) / (N2 - N1)
            verdict = 'ok'
            if per > limit:
                verdict, failed = 'OVER THE LIMIT', True
            elif per < recorded / 2:
                verdict, failed = 'implausibly low (are worker::gulp and worker::process still functions?)', True
            print(f'send_cost: {case:8} {per:7.1f} instructions per message '
                  f'(recorded {recorded:g}, limit {limit:g}): {verdict}')
    if failed and not show:
        print('send_cost: the send/deliver path costs more instructions than its limit; find '
              'the change (bench/RESULTS.md, "Send-path instruction counts") or, for a cost '
              'that buys something, raise the limit in send_cost.limits with the reason')
        return 1
    return 0


if __name__ == '__main__':
    sys.exit(main())
