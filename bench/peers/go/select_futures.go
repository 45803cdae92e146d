// bench=select_futures, system=go: twin of bench/waituntil/select_futures.cpp.
// Go has no futures: each of A, B, C is a buffered channel of one element
// (fulfil = send; reset = drain what the statement did not take). The server
// goroutine fulfils A, B, C each round; the client waits with one of four
// predicates (--predicate), written as Go would: `or` is one select; `and`,
// `andor` and `orand` are select loops that nil out a channel once received
// until the predicate holds. Handshake channels keep the server from racing
// ahead. Reports statements (rounds) per second.
//
// Build: go build -o select_futures select_futures.go common.go (GO111MODULE=off).
package main

import (
	"flag"
	"time"
)

func main() {
	ms := flag.Int("ms", 2000, "duration in milliseconds")
	procs := flag.Int("processors", 2, "GOMAXPROCS")
	predicate := flag.String("predicate", "or", "or, and, andor or orand")
	parseFlags(procs)
	shape := map[string]int{"or": 0, "and": 1, "andor": 2, "orand": 3}
	s, known := shape[*predicate]
	if !known {
		fail("select_futures", "--predicate must be or, and, andor or orand")
	}

	A := make(chan int, 1)
	B := make(chan int, 1)
	C := make(chan int, 1)
	goCh := make(chan bool)
	done := make(chan struct{})
	go func() {
		for <-goCh {
			A <- 1
			B <- 2
			C <- 3
			done <- struct{}{}
		}
	}()
	rounds, sum := int64(0), 0
	t0 := time.Now()
	until := t0.Add(time.Duration(*ms) * time.Millisecond)
	for time.Now().Before(until) {
		for i := 0; i < 64; i++ {
			goCh <- true
			switch s {
			case 0: // A | B | C
				select {
				case v := <-A:
					sum += v
				case v := <-B:
					sum += v
				case v := <-C:
					sum += v
				}
			case 1: // A & B & C
				a, b, c := A, B, C
				for a != nil || b != nil || c != nil {
					select {
					case v := <-a:
						sum += v
						a = nil
					case v := <-b:
						sum += v
						b = nil
					case v := <-c:
						sum += v
						c = nil
					}
				}
			case 2: // A & B | C
				a, b, c := A, B, C
				for !((a == nil && b == nil) || c == nil) {
					select {
					case v := <-a:
						sum += v
						a = nil
					case v := <-b:
						sum += v
						b = nil
					case v := <-c:
						sum += v
						c = nil
					}
				}
			case 3: // (A | B) & C
				a, b, c := A, B, C
				for !((a == nil || b == nil) && c == nil) {
					select {
					case v := <-a:
						sum += v
						a, b = nil, nil
					case v := <-b:
						sum += v
						a, b = nil, nil
					case v := <-c:
						sum += v
						c = nil
					}
				}
			}
			<-done
			// Reset: take what the statement left.
			select {
			case <-A:
			default:
			}
			select {
			case <-B:
			default:
			}
			select {
			case <-C:
			default:
			}
			rounds++
		}
	}
	elapsed := time.Since(t0).Seconds()
	goCh <- false
	if int64(sum) < rounds {
		fail("select_futures", "a statement ran no body")
	}
	result("select_futures", "ops_per_s", float64(rounds)/elapsed, "predicate="+*predicate)
}
