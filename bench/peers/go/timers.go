// Twin of bench/channels/timers.cpp: time.NewTimer / time.NewTicker.
//  --mode=create --kind=timer|ticker: NewTimer(1h)+Stop (or NewTicker)
//    --iters times (ns per create+stop).
//  --mode=pending: --count timers of 1h kept pending in a []*time.Timer:
//    ns per creation, and heap bytes in use per timer (runtime.MemStats
//    HeapAlloc after a GC, before and after).
package main

import (
	"flag"
	"runtime"
	"strconv"
	"time"
)

func main() {
	mode := flag.String("mode", "create", "create|pending")
	kind := flag.String("kind", "timer", "timer|ticker")
	iters := flag.Int("iters", 2000000, "iterations")
	count := flag.Int("count", 1000000, "pending timers")
	flag.Parse()
	runtime.GOMAXPROCS(2)
	switch *mode {
	case "create":
		var op func()
		name := "timer_create"
		if *kind == "timer" {
			op = func() {
				t := time.NewTimer(time.Hour)
				if !t.Stop() {
					fail("timers", "timer fired early")
				}
			}
		} else {
			name = "ticker_create"
			op = func() {
				t := time.NewTicker(time.Hour)
				t.Stop()
			}
		}
		for i := 0; i < *iters/10+1; i++ {
			op()
		}
		t0 := time.Now()
		for i := 0; i < *iters; i++ {
			op()
		}
		result(name, "ns_per_op", float64(time.Since(t0).Nanoseconds())/float64(*iters))
	case "pending":
		ts := make([]*time.Timer, 0, *count)
		var m0, m1 runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&m0)
		t0 := time.Now()
		for i := 0; i < *count; i++ {
			ts = append(ts, time.NewTimer(time.Hour))
		}
		s := time.Since(t0).Seconds()
		runtime.GC()
		runtime.ReadMemStats(&m1)
		for _, t := range ts {
			if !t.Stop() {
				fail("timers", "timer fired early")
			}
		}
		c := "count=" + strconv.Itoa(*count)
		result("timer_pending_create", "ns_per_op", s*1e9/float64(*count), c)
		result("timer_pending_bytes", "bytes_per_op", float64(m1.HeapAlloc-m0.HeapAlloc)/float64(*count), c)
		runtime.KeepAlive(ts)
	default:
		fail("timers", "--mode must be create or pending")
	}
}
