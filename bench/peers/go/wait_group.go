// Twin of bench/core/wait_group.cpp: sync.WaitGroup.
//  --mode=uncontended: one goroutine, Add(1); Done(); Wait() (GOMAXPROCS 1).
//  --mode=contended: --threads goroutines on --processors each Add(1); Done()
//    --iters times on one group; Wait at the end.
//  --mode=wake: --threads goroutines Wait() on a group at 1 that main
//    releases each round (two alternating gates, a third group collects).
package main

import (
	"flag"
	"runtime"
	"strconv"
	"sync"
	"time"
)

func parseProcs(n int) { runtime.GOMAXPROCS(n) }
func itoa(n int) string { return strconv.Itoa(n) }

func main() {
	mode := flag.String("mode", "uncontended", "uncontended|contended|wake")
	iters := flag.Int("iters", 10000000, "iterations")
	threads := flag.Int("threads", 4, "goroutines")
	procs := flag.Int("processors", 2, "GOMAXPROCS")
	ctx := flag.String("ctx", "user", "ignored (a goroutine)")
	flag.Parse()
	_ = ctx
	switch *mode {
	case "uncontended":
		parseProcs(1)
		var wg sync.WaitGroup
		op := func() {
			wg.Add(1)
			wg.Done()
			wg.Wait()
		}
		for i := 0; i < *iters/10+1; i++ {
			op()
		}
		t0 := time.Now()
		for i := 0; i < *iters; i++ {
			op()
		}
		ns := float64(time.Since(t0).Nanoseconds()) / float64(*iters)
		result("wait_group_uncontended", "ns_per_op", ns, "ctx=user")
	case "contended":
		parseProcs(*procs)
		var wg, started sync.WaitGroup
		gate := make(chan struct{})
		started.Add(*threads)
		var all sync.WaitGroup
		all.Add(*threads)
		for t := 0; t < *threads; t++ {
			go func() {
				defer all.Done()
				started.Done()
				<-gate
				for i := 0; i < *iters; i++ {
					wg.Add(1)
					wg.Done()
				}
			}()
		}
		started.Wait()
		t0 := time.Now()
		close(gate)
		all.Wait()
		wg.Wait()
		s := time.Since(t0).Seconds()
		result("wait_group_contended", "ns_per_op", s*1e9/float64(*iters**threads),
			"threads="+itoa(*threads), "processors="+itoa(*procs))
	case "wake":
		parseProcs(*procs)
		var gate [2]sync.WaitGroup
		var finished, all sync.WaitGroup
		rounds := *iters
		gate[0].Add(1)
		all.Add(*threads)
		for t := 0; t < *threads; t++ {
			go func() {
				defer all.Done()
				for r := 0; r < rounds; r++ {
					gate[r%2].Wait()
					finished.Done()
				}
			}()
		}
		t0 := time.Now()
		for r := 0; r < rounds; r++ {
			gate[(r+1)%2].Add(1)
			finished.Add(*threads)
			gate[r%2].Done()
			finished.Wait()
		}
		s := time.Since(t0).Seconds()
		all.Wait()
		result("wait_group_wake", "ns_per_op", s*1e9/float64(rounds),
			"threads="+itoa(*threads), "processors="+itoa(*procs))
	default:
		fail("wait_group", "--mode must be uncontended, contended or wake")
	}
}
