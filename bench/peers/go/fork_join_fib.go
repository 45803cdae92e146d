// bench=fork_join_fib, system=go: twin of bench/core/fork_join_fib.cpp.
// fib(n) with a goroutine and a sync.WaitGroup at every call (no cutoff),
// GOMAXPROCS = -processors. Reports the seconds of one fib(n), the mean of
// -reps after a warm-up.
//
// Build: go build -o fork_join_fib fork_join_fib.go common.go (GO111MODULE=off).
package main

import (
	"flag"
	"fmt"
	"sync"
	"time"
)

func fib(n int) int64 {
	if n < 2 {
		return int64(n)
	}
	var a int64
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		a = fib(n - 1)
	}()
	b := fib(n - 2)
	wg.Wait()
	return a + b
}

func fibSerial(n int) int64 {
	if n < 2 {
		return int64(n)
	}
	return fibSerial(n-1) + fibSerial(n-2)
}

func main() {
	n := flag.Int("n", 30, "fib argument")
	reps := flag.Int("reps", 3, "timed repetitions")
	procs := flag.Int("processors", 2, "GOMAXPROCS")
	parseFlags(procs)
	r := fib(*n) // warm-up
	t0 := time.Now()
	for k := 0; k < *reps; k++ {
		r = fib(*n)
	}
	s := time.Since(t0).Seconds() / float64(*reps)
	if r != fibSerial(*n) {
		fail("fork_join_fib", "wrong result")
	}
	result("fork_join_fib", "seconds", s, fmt.Sprintf("n=%d", *n), fmt.Sprintf("processors=%d", *procs))
}
