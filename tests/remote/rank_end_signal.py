#!/usr/bin/env python3
"""mpirun ends on SIGTERM and SIGINT while a rank hangs, leaving no process
of the job behind. Usage: rank_end_signal.py MPIRUN PROGRAM NP TERM|INT

Rank 0 of rank_end_program's "hang" mode waits forever, the others wait
for it in their world's last barrier. This script is a child subreaper
(prctl), as a real init is: ranks orphaned by mpirun are reparented here
and reaped, so a process left over is one still running, not a zombie
kept by a container's init that does not reap."""
import ctypes
import os
import signal
import subprocess
import sys
import time

mpirun, prog, np, sig = sys.argv[1], os.path.abspath(sys.argv[2]), sys.argv[3], sys.argv[4]
PR_SET_CHILD_SUBREAPER = 36
ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)


def job_processes():
    """PIDs of processes running PROGRAM (zombies included)."""
    found = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/stat") as f:
                stat = f.read()
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                cmd = f.read().split(b"\0")[0].decode(errors="replace")
        except OSError:
            continue
        name = stat[stat.index("(") + 1:stat.rindex(")")]
        if cmd == prog or (not cmd and prog.endswith(name)) or name == os.path.basename(prog)[:15]:
            found.append((int(pid), stat[stat.rindex(")") + 2]))
    return found


def reap():
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


job = subprocess.Popen([mpirun, "--allow-run-as-root", "--oversubscribe", "--bind-to", "none",
                        "-np", np, prog, "hang"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
# Wait until rank 0 hangs and every other rank has said it enters its
# world's last barrier (the line it prints right before it).
deadline = time.monotonic() + 60
hung, ended = False, 0
while not hung or ended < int(np) - 1:
    line = job.stdout.readline()
    if not line or time.monotonic() > deadline:
        print(f"the job did not reach its hang (rank 0 hung: {hung}, ranks ended: {ended}):", line)
        job.kill()
        sys.exit(1)
    hung = hung or b"rank 0: hangs" in line
    ended += b": ends" in line
job.send_signal(signal.SIGTERM if sig == "TERM" else signal.SIGINT)
try:
    rc = job.wait(timeout=30)
except subprocess.TimeoutExpired:
    print(f"mpirun still runs 30 s after SIG{sig}")
    for pid, _ in job_processes():
        os.kill(pid, signal.SIGKILL)
    job.kill()
    sys.exit(1)
left = job_processes()
deadline = time.monotonic() + 20
while left and time.monotonic() < deadline:
    reap()
    time.sleep(0.1)
    left = job_processes()
if left:
    print(f"after SIG{sig} and mpirun's exit ({rc}), processes of the job remain:", left)
    for pid, _ in left:
        os.kill(pid, signal.SIGKILL)
    sys.exit(1)
print(f"SIG{sig}: mpirun exited ({rc}) and no process of the job remains")
