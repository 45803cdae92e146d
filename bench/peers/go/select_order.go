// bench=select_order, system=go: twin of bench/waituntil/select_order.cpp,
// the thesis' pathological case for Go's select. P1 and C1 select over
// buffered channels A and B; P2 and C2 use only B with plain operations.
// Go's select locks every channel of the statement, so P1/C1 serialise with
// P2/C2 on B. Reports consumptions per second (C1 + C2) before the stop
// flag; GOMAXPROCS = --processors.
//
// Build: go build -o select_order select_order.go common.go (GO111MODULE=off).
package main

import (
	"flag"
	"sync"
	"sync/atomic"
)

func main() {
	ms := flag.Int("ms", 2000, "duration in milliseconds")
	capacity := flag.Int("capacity", 128, "channel capacity")
	procs := flag.Int("processors", 2, "GOMAXPROCS")
	parseFlags(procs)

	a := make(chan int, *capacity)
	b := make(chan int, *capacity)
	start := make(chan struct{})
	var stop int32
	var inserted, removed, counted int64
	var pw, cw sync.WaitGroup
	produce := func(sel bool) {
		defer pw.Done()
		<-start
		n := int64(0)
		for atomic.LoadInt32(&stop) == 0 {
			if sel {
				select {
				case a <- 1:
				case b <- 1:
				}
			} else {
				b <- 1
			}
			n++
		}
		atomic.AddInt64(&inserted, n)
	}
	consume := func(sel bool) {
		defer cw.Done()
		<-start
		n, before := int64(0), int64(0)
		for {
			var v int
			ok := true
			if sel {
				select {
				case v, ok = <-a:
				case v, ok = <-b:
				}
			} else {
				v, ok = <-b
			}
			if !ok {
				break
			}
			n += int64(v)
			if atomic.LoadInt32(&stop) == 0 {
				before++
			}
		}
		for v := range a {
			n += int64(v)
		}
		for v := range b {
			n += int64(v)
		}
		atomic.AddInt64(&removed, n)
		atomic.AddInt64(&counted, before)
	}
	cw.Add(2)
	go consume(true)  // C1
	go consume(false) // C2
	pw.Add(2)
	go produce(true)  // P1
	go produce(false) // P2
	elapsed := timedRun(start, &stop, *ms)
	pw.Wait()
	close(a)
	close(b)
	cw.Wait()
	if removed != inserted {
		fail("select_order", "values lost")
	}
	result("select_order", "ops_per_s", float64(counted)/elapsed)
}
