// bench=chan_rendezvous_rtt, system=go: twin of
// bench/channels/chan_rendezvous_rtt.cpp. Two goroutines ping-pong an int
// through two unbuffered channels; one op = one round trip.
//
// Build: go build -o chan_rendezvous_rtt chan_rendezvous_rtt.go common.go (GO111MODULE=off).
package main

import (
	"flag"
	"fmt"
	"time"
)

func main() {
	rounds := flag.Int("rounds", 1000000, "round trips measured")
	procs := flag.Int("processors", 1, "GOMAXPROCS")
	parseFlags(procs)
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
		fail("chan_rendezvous_rtt", "lost a round")
	}
	result("chan_rendezvous_rtt", "ns_per_op", ns, fmt.Sprintf("processors=%d", *procs))
}
