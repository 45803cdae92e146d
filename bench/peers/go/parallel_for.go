// bench=parallel_for, system=go: twin of bench/core/parallel_for.cpp.
// The sum of the same compute-bound kernel over [0, n): a goroutine per
// chunk (8 chunks per processor: Go has no work-stealing loop, so the
// chunks balance the load), a local sum each, a sync.WaitGroup;
// GOMAXPROCS = -processors. Reports the seconds of one loop, the mean of
// -reps after a warm-up.
//
// Build: go build -o parallel_for parallel_for.go common.go (GO111MODULE=off).
package main

import (
	"flag"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// kernel is bench::fj::kernel (bench/core/fork_join_work.hpp).
func kernel(i uint64) uint64 {
	x := i
	for r := 0; r < 64; r++ {
		x = x*6364136223846793005 + 1442695040888963407
		x ^= x >> 29
	}
	return x
}

func kernelSum(b, e uint64) uint64 {
	var s uint64
	for i := b; i < e; i++ {
		s += kernel(i)
	}
	return s
}

func once(n uint64, chunks uint64) uint64 {
	var total uint64
	var wg sync.WaitGroup
	for c := uint64(0); c < chunks; c++ {
		b, e := n*c/chunks, n*(c+1)/chunks
		wg.Add(1)
		go func() {
			defer wg.Done()
			atomic.AddUint64(&total, kernelSum(b, e))
		}()
	}
	wg.Wait()
	return total
}

func main() {
	n := flag.Int("n", 1000000, "loop length")
	reps := flag.Int("reps", 3, "timed repetitions")
	procs := flag.Int("processors", 2, "GOMAXPROCS")
	parseFlags(procs)
	chunks := uint64(8 * *procs)
	sum := once(uint64(*n), chunks) // warm-up
	t0 := time.Now()
	for k := 0; k < *reps; k++ {
		sum = once(uint64(*n), chunks)
	}
	s := time.Since(t0).Seconds() / float64(*reps)
	if sum != kernelSum(0, uint64(*n)) {
		fail("parallel_for", "wrong sum")
	}
	result("parallel_for", "seconds", s, fmt.Sprintf("n=%d", *n), fmt.Sprintf("processors=%d", *procs))
}
