// Shared by every Go twin: each is built as one program from its own file
// and this one (go build -o X X.go common.go, GO111MODULE=off; see
// bench/lib.sh, bench_go_twins). Flags, the timed run of the throughput
// twins, RESULT lines (bench/README.md) and failure reports.
package main

import (
	"flag"
	"fmt"
	"os"
	"runtime"
	"strings"
	"sync/atomic"
	"time"
)

// parseFlags parses the flags the program declared and sets GOMAXPROCS to
// the value of its --processors flag.
func parseFlags(procs *int) {
	flag.Parse()
	runtime.GOMAXPROCS(*procs)
}

// timedRun opens the start gate the goroutines wait on, lets them run for
// ms milliseconds, then raises stop; returns the seconds from the opening
// to the stop.
func timedRun(start chan struct{}, stop *int32, ms int) float64 {
	t0 := time.Now()
	close(start)
	time.Sleep(time.Duration(ms) * time.Millisecond)
	atomic.StoreInt32(stop, 1)
	return time.Since(t0).Seconds()
}

// result prints one RESULT line for system=go: the value with 6 decimals
// for metric=seconds and 4 otherwise, then the "name=value" params.
func result(bench, metric string, value float64, params ...string) {
	digits := 4
	if metric == "seconds" {
		digits = 6
	}
	line := fmt.Sprintf("RESULT bench=%s system=go metric=%s value=%.*f", bench, metric, digits, value)
	if len(params) > 0 {
		line += " " + strings.Join(params, " ")
	}
	fmt.Println(line)
}

// fail reports a failed run of `bench` on stderr and exits with status 1.
func fail(bench, what string) {
	fmt.Fprintf(os.Stderr, "benchmark failed: %s: %s\n", bench, what)
	os.Exit(1)
}
