// bench=chan_contend, system=go: twin of bench/channels/chan_contend.cpp.
// P producer and C consumer goroutines (GOMAXPROCS = -procs) hammer one
// buffered channel of ints for -ms milliseconds; reports receives per
// second. A stop flag ends the producers, then close() ends the consumers
// once they drained the buffer (the thesis' Go-style shutdown).
//
// Build: go build -o chan_contend chan_contend.go common.go (GO111MODULE=off).
package main

import (
	"flag"
	"fmt"
	"sync"
	"sync/atomic"
)

func main() {
	producers := flag.Int("producers", 1, "producer goroutines")
	consumers := flag.Int("consumers", 1, "consumer goroutines")
	ms := flag.Int("ms", 2000, "duration in milliseconds")
	capacity := flag.Int("capacity", 128, "channel capacity")
	procs := flag.Int("processors", 2, "GOMAXPROCS")
	parseFlags(procs)

	ch := make(chan int, *capacity)
	start := make(chan struct{})
	var stop int32
	var removed, inserted int64
	var cw, pw sync.WaitGroup
	for i := 0; i < *consumers; i++ {
		cw.Add(1)
		go func() {
			defer cw.Done()
			<-start
			n := int64(0)
			for v := range ch {
				n += int64(v) // every element is 1
			}
			atomic.AddInt64(&removed, n)
		}()
	}
	for i := 0; i < *producers; i++ {
		pw.Add(1)
		go func() {
			defer pw.Done()
			<-start
			n := int64(0)
			for atomic.LoadInt32(&stop) == 0 {
				ch <- 1
				n++
			}
			atomic.AddInt64(&inserted, n)
		}()
	}
	elapsed := timedRun(start, &stop, *ms)
	pw.Wait()
	close(ch)
	cw.Wait()
	if removed != inserted {
		fail("chan_contend", "values lost")
	}
	result("chan_contend", "ops_per_s", float64(removed)/elapsed,
		fmt.Sprintf("producers=%d", *producers), fmt.Sprintf("consumers=%d", *consumers))
}
