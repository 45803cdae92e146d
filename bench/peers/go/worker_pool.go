// bench=worker_pool, system=go: twin of bench/channels/worker_pool.cpp. A
// feeder goroutine sends -jobs ints into `jobs`; 4 worker goroutines square
// each and send it to `results`; the consumer (-consumer=os: the main
// goroutine, -consumer=user: another goroutine; Go has no difference, both
// rows are kept for the table; -consumer=os_lend, the troupe row whose main
// thread lends its kernel thread, is the main goroutine here too) receives
// them all. Reports seconds.
//
// Build: go build -o worker_pool worker_pool.go common.go (GO111MODULE=off).
package main

import (
	"flag"
	"time"
)

func main() {
	jobs := flag.Int("jobs", 100000, "jobs")
	workers := flag.Int("workers", 4, "worker goroutines")
	procs := flag.Int("processors", 2, "GOMAXPROCS")
	consumer := flag.String("consumer", "os", "os or user")
	parseFlags(procs)

	t0 := time.Now()
	in := make(chan int, 100)
	out := make(chan int, 100)
	go func() {
		for j := 0; j < *jobs; j++ {
			in <- j
		}
		close(in)
	}()
	for w := 0; w < *workers; w++ {
		go func() {
			for j := range in {
				out <- j * j % 1000
			}
		}()
	}
	sum := 0
	consume := func() {
		for k := 0; k < *jobs; k++ {
			sum += <-out
		}
	}
	if *consumer == "user" {
		done := make(chan struct{})
		go func() { consume(); close(done) }()
		<-done
	} else {
		consume()
	}
	secs := time.Since(t0).Seconds()
	expect := 0
	for j := 0; j < *jobs; j++ {
		expect += j * j % 1000
	}
	if sum != expect {
		fail("worker_pool", "wrong sum")
	}
	result("worker_pool", "seconds", secs, "consumer="+*consumer)
}
