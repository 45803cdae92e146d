// bench=select_contend and bench=select_spin, system=go: twin of
// bench/waituntil/select_channels.cpp. P producer and C consumer goroutines
// (GOMAXPROCS = --processors) each select over the same K buffered channels
// of ints, the select written out with K cases (K = 2, 4, 8). A consumption
// is one operation. select_spin (--spin=1) adds a `default` case and retries
// (Go preempts goroutines, so no yield is needed). Reports consumptions per
// second made before the stop flag. A stop flag ends the producers, then the
// channels are closed and the consumers drain them.
//
// Build: go build -o select_channels select_channels.go common.go (GO111MODULE=off).
package main

import (
	"flag"
	"fmt"
	"sync"
	"sync/atomic"
)

var stop int32

// insert does one select inserting 1 into whichever channel has room;
// false if the default case ran (spin mode).
func insert(c []chan int, spin bool) bool {
	if spin {
		switch len(c) {
		case 2:
			select {
			case c[0] <- 1:
			case c[1] <- 1:
			default:
				return false
			}
		case 4:
			select {
			case c[0] <- 1:
			case c[1] <- 1:
			case c[2] <- 1:
			case c[3] <- 1:
			default:
				return false
			}
		case 8:
			select {
			case c[0] <- 1:
			case c[1] <- 1:
			case c[2] <- 1:
			case c[3] <- 1:
			case c[4] <- 1:
			case c[5] <- 1:
			case c[6] <- 1:
			case c[7] <- 1:
			default:
				return false
			}
		}
		return true
	}
	switch len(c) {
	case 2:
		select {
		case c[0] <- 1:
		case c[1] <- 1:
		}
	case 4:
		select {
		case c[0] <- 1:
		case c[1] <- 1:
		case c[2] <- 1:
		case c[3] <- 1:
		}
	case 8:
		select {
		case c[0] <- 1:
		case c[1] <- 1:
		case c[2] <- 1:
		case c[3] <- 1:
		case c[4] <- 1:
		case c[5] <- 1:
		case c[6] <- 1:
		case c[7] <- 1:
		}
	}
	return true
}

// remove does one select receiving from whichever channel has an element:
// (value, got one, channel closed).
func remove(c []chan int, spin bool) (int, bool, bool) {
	var v int
	ok := true
	if spin {
		switch len(c) {
		case 2:
			select {
			case v, ok = <-c[0]:
			case v, ok = <-c[1]:
			default:
				return 0, false, false
			}
		case 4:
			select {
			case v, ok = <-c[0]:
			case v, ok = <-c[1]:
			case v, ok = <-c[2]:
			case v, ok = <-c[3]:
			default:
				return 0, false, false
			}
		case 8:
			select {
			case v, ok = <-c[0]:
			case v, ok = <-c[1]:
			case v, ok = <-c[2]:
			case v, ok = <-c[3]:
			case v, ok = <-c[4]:
			case v, ok = <-c[5]:
			case v, ok = <-c[6]:
			case v, ok = <-c[7]:
			default:
				return 0, false, false
			}
		}
		return v, ok, !ok
	}
	switch len(c) {
	case 2:
		select {
		case v, ok = <-c[0]:
		case v, ok = <-c[1]:
		}
	case 4:
		select {
		case v, ok = <-c[0]:
		case v, ok = <-c[1]:
		case v, ok = <-c[2]:
		case v, ok = <-c[3]:
		}
	case 8:
		select {
		case v, ok = <-c[0]:
		case v, ok = <-c[1]:
		case v, ok = <-c[2]:
		case v, ok = <-c[3]:
		case v, ok = <-c[4]:
		case v, ok = <-c[5]:
		case v, ok = <-c[6]:
		case v, ok = <-c[7]:
		}
	}
	return v, ok, !ok
}

func main() {
	producers := flag.Int("producers", 1, "producer goroutines")
	consumers := flag.Int("consumers", 1, "consumer goroutines")
	k := flag.Int("k", 2, "channels per select (2, 4 or 8)")
	ms := flag.Int("ms", 2000, "duration in milliseconds")
	capacity := flag.Int("capacity", 128, "channel capacity")
	procs := flag.Int("processors", 2, "GOMAXPROCS")
	spinFlag := flag.Int("spin", 0, "1: select with default, retrying")
	parseFlags(procs)
	if *k != 2 && *k != 4 && *k != 8 {
		fail("select_channels", "--k must be 2, 4 or 8")
	}
	spin := *spinFlag != 0

	c := make([]chan int, *k)
	for i := range c {
		c[i] = make(chan int, *capacity)
	}
	start := make(chan struct{})
	var inserted, removed, counted int64
	var pw, cw sync.WaitGroup
	for i := 0; i < *consumers; i++ {
		cw.Add(1)
		go func() {
			defer cw.Done()
			<-start
			n, before := int64(0), int64(0)
			for {
				v, got, closed := remove(c, spin)
				if closed {
					break
				}
				if got {
					n += int64(v)
					if atomic.LoadInt32(&stop) == 0 {
						before++
					}
				}
			}
			// One closed channel ended the loop: drain the others.
			for _, ch := range c {
				for v := range ch {
					n += int64(v)
				}
			}
			atomic.AddInt64(&removed, n)
			atomic.AddInt64(&counted, before)
		}()
	}
	for i := 0; i < *producers; i++ {
		pw.Add(1)
		go func() {
			defer pw.Done()
			<-start
			n := int64(0)
			for atomic.LoadInt32(&stop) == 0 {
				if insert(c, spin) {
					n++
				}
			}
			atomic.AddInt64(&inserted, n)
		}()
	}
	elapsed := timedRun(start, &stop, *ms)
	pw.Wait()
	for _, ch := range c {
		close(ch)
	}
	cw.Wait()
	if removed != inserted {
		fail("select_channels", "values lost")
	}
	name := "select_contend"
	if spin {
		name = "select_spin"
	}
	result(name, "ops_per_s", float64(counted)/elapsed, fmt.Sprintf("k=%d", *k),
		fmt.Sprintf("producers=%d", *producers), fmt.Sprintf("consumers=%d", *consumers))
}
