// bench=chan_rendezvous_rtt, system=go: twin of
// bench/channels/chan_rendezvous_rtt.cpp. Two goroutines ping-pong an int
// through two unbuffered channels; one op = one round trip.
//
// Build: go build -o chan_rendezvous_rtt chan_rendezvous_rtt.go (GO111MODULE=off).
package main

import (
	"flag"
	"fmt"
	"os"
	"runtime"
	"time"
)

func main() {
	rounds := flag.Int("rounds", 1000000, "round trips measured")
	procs := flag.Int("processors", 1, "GOMAXPROCS")
	flag.Parse()
	runtime.GOMAXPROCS(*procs)
	warmup := *rounds/10 + 1

	toPong := make(chan int)
	toPing := make(chan int)
	done := make(chan struct{})
	go func() {
		for i := 0; i < warmup+*rounds; i++ {
			toPing <- (<-toPong) + 1
		}
		close(done)
	}()
	v := 0
	for i := 0; i < warmup; i++ {
		toPong <- v
		v = <-toPing
	}
	t0 := time.Now()
	for i := 0; i < *rounds; i++ {
		toPong <- v
		v = <-toPing
	}
	ns := float64(time.Since(t0).Nanoseconds()) / float64(*rounds)
	<-done
	if v != warmup+*rounds {
		fmt.Fprintln(os.Stderr, "benchmark failed: chan_rendezvous_rtt: lost a round")
		os.Exit(1)
	}
	fmt.Printf("RESULT bench=chan_rendezvous_rtt system=go metric=ns_per_op value=%.4f processors=%d\n", ns, *procs)
}
