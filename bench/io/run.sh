#!/usr/bin/env bash
# I/O benchmarks, called by bench/run (see bench/README.md for the contract).
# Env: BUILD (absolute build dir), QUICK (0|1), RUNS (runs per program).
# Prints only RESULT lines on stdout; notes go to stderr. Every row is one
# run of io_loadgen (loadgen.cpp), which starts the server it measures,
# drives it over loopback, reads the server's CPU time and resident size
# from /proc, and stops it (each server exits at EOF of its stdin, so none
# outlives its run). Each round runs troupe's server and then its twins, so
# troupe and peer measurements alternate RUNS times.
#
# Benchmarks (names as in bench/RESULTS.md):
#   io_echo      TCP echo, 64 B and 4 KiB messages, 1 / 64 / 1,000 connections,
#                each a closed loop (send, wait for the whole echo, send):
#                echoes per second, round-trip p50/p99 (io_echo_p50/_p99) and
#                the server's CPU (io_echo_cpu) and context switches per
#                echo (io_echo_switches, every thread summed); troupe (a user thread per
#                connection), go (a goroutine per connection), asio (C++20
#                coroutines, one io_context per core), std (a kernel thread
#                per connection); troupe_epoll is troupe's server on the
#                epoll engine (TROUPE_IO=epoll; full runs only)
#   io_http      HTTP/1.1 "hello" under wrk at 64 and 1,000 connections:
#                requests per second, p50/p99; troupe and go_raw share one
#                minimal parser, go_nethttp is package net/http
#   io_idle_*    10,000 idle connections (one echo each, then nothing):
#                server CPU % and resident bytes per connection; troupe, go,
#                and troupe_pooled (buffer taken from a pool once readable)
# Servers run with as many processors / GOMAXPROCS / io_contexts as the CPUs
# they may use; the load generator is one thread (epoll; wrk -t1), the same
# for every server.
set -uo pipefail
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"
bench_setup io

if [ "$QUICK" = 1 ]; then
    echo_ms=200; warmup_ms=50; http_ms=1000; idle_conns=1000; idle_ms=300
    # 4 KiB messages only at 64 connections: every program still runs.
    echo_sets=("64 1" "64 64" "64 1000" "4096 64")
else
    echo_ms=3000; warmup_ms=500; http_ms=5000; idle_conns=10000; idle_ms=3000
    echo_sets=("64 1" "64 64" "64 1000" "4096 1" "4096 64" "4096 1000")
fi
# bench/timed's cpu_seconds / wall_seconds rows would time the load
# generator and the server together over a fixed window: they say nothing
# here (the server's own CPU is io_echo_cpu).
TIMED=
# A troupe server that stops answering writes its dump on SIGUSR1 (the
# load generator sends it on a stall; see loadgen.cpp, die_stalled).
export TROUPE_DUMP_SIGNAL=USR1

# Go twins: built here into $BUILD/go (bench/lib.sh), each with the shared
# server side of the load generator's protocol.
bench_go_extra=(io_server.go)
bench_go_twins io_echo io_http_raw io_http_nethttp

command -v wrk >/dev/null 2>&1 || echo "io: wrk not installed, the io_http rows are skipped" >&2

# serve SYSTEM SERVER LOADGEN-ARGS... [-- SERVER-ARGS...]: one io_loadgen
# run against SERVER. A missing troupe server is a failure (broken build);
# a missing twin is skipped with one note (its peer was not installed).
declare -A noted=()
serve() {
    local system=$1 srv=$2
    shift 2
    if [ ! -x "$srv" ]; then
        if [ "$system" = troupe ]; then
            echo "io: ${srv##*/} not built: troupe's own program is missing (broken build?)" >&2
            bench_status=1
        elif [ -z "${noted[$srv]:-}" ]; then
            echo "io: twin ${srv##*/} not built (its peer is not installed), skipped" >&2
            noted[$srv]=1
        fi
        return 0
    fi
    local -a lg=() sv=()
    while [ $# -gt 0 ] && [ "$1" != -- ]; do lg+=("$1"); shift; done
    [ $# -gt 0 ] && shift
    sv=("$@")
    bench_run "$bin/io_loadgen" --system="$system" "${lg[@]}" -- "$srv" ${sv[@]+"${sv[@]}"}
}

for ((r = 1; r <= RUNS; r++)); do
    echo "io: round $r of $RUNS" >&2
    for set in "${echo_sets[@]}"; do
        read -r size conns <<<"$set"
        args=(--mode=echo --conns=$conns --size=$size --ms=$echo_ms --warmup-ms=$warmup_ms)
        serve troupe "$bin/io_echo" "${args[@]}"
        # The same server on the epoll engine (TROUPE_IO=epoll): troupe's
        # fallback, a row of its own (not a peer; its ratio reads uring/epoll).
        [ "$QUICK" = 1 ] || TROUPE_IO=epoll serve troupe_epoll "$bin/io_echo" "${args[@]}"
        serve go "$gobin/io_echo" "${args[@]}"
        serve asio "$bin/io_asio_echo" "${args[@]}"
        serve std "$bin/io_std_echo" "${args[@]}"
    done
    if command -v wrk >/dev/null 2>&1; then
        for conns in 64 1000; do
            args=(--mode=http --conns=$conns --ms=$http_ms)
            serve troupe "$bin/io_http" "${args[@]}"
            serve go_raw "$gobin/io_http_raw" "${args[@]}"
            serve go_nethttp "$gobin/io_http_nethttp" "${args[@]}"
        done
    fi
    args=(--mode=idle --conns=$idle_conns --ms=$idle_ms)
    serve troupe "$bin/io_echo" "${args[@]}"
    serve go "$gobin/io_echo" "${args[@]}"
    # The same server waiting with io::wait_readable and taking its buffer
    # from a pool once data is there (echo.cpp --buffer=pool): an idle
    # connection holds no buffer. No twin: Go's net cannot wait for data
    # without reading into a buffer.
    serve troupe_pooled "$bin/io_echo" "${args[@]}" -- --buffer=pool
done
exit $bench_status
