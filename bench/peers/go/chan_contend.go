// bench=chan_contend, system=go: twin of bench/channels/chan_contend.cpp.
// P producer and C consumer goroutines (GOMAXPROCS = -procs) hammer one
// buffered channel of ints for -ms milliseconds; reports receives per
// second. A stop flag ends the producers, then close() ends the consumers
// once they drained the buffer (the thesis' Go-style shutdown).
//
// Build: go build -o chan_contend chan_contend.go (GO111MODULE=off).
package main

import (
	"flag"
	"fmt"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

func main() {
	producers := flag.Int("producers", 1, "producer goroutines")
	consumers := flag.Int("consumers", 1, "consumer goroutines")
	ms := flag.Int("ms", 2000, "duration in milliseconds")
	capacity := flag.Int("capacity", 128, "channel capacity")
	procs := flag.Int("processors", 2, "GOMAXPROCS")
	flag.Parse()
	runtime.GOMAXPROCS(*procs)

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
	t0 := time.Now()
	close(start)
	time.Sleep(time.Duration(*ms) * time.Millisecond)
	atomic.StoreInt32(&stop, 1)
	elapsed := time.Since(t0).Seconds()
	pw.Wait()
	close(ch)
	cw.Wait()
	if removed != inserted {
		fmt.Fprintln(os.Stderr, "benchmark failed: chan_contend: values lost")
		os.Exit(1)
	}
	fmt.Printf("RESULT bench=chan_contend system=go metric=ops_per_s value=%.4f producers=%d consumers=%d\n",
		float64(removed)/elapsed, *producers, *consumers)
}
