// Shared by the Go servers of bench/io (built with each of them and
// common.go; see bench/io/run.sh): the server side of the io_loadgen
// protocol (bench/io/loadgen.cpp). A server listens on 127.0.0.1 at a port
// the kernel picks, prints "port=<n>" on stdout, and exits with status 0
// when its stdin reaches EOF, so no server outlives its run.
package main

import (
	"fmt"
	"io"
	"net"
	"os"
)

// listenLoopback listens on 127.0.0.1:0, prints the port line and starts
// the goroutine that exits at EOF of stdin.
func listenLoopback(bench string) net.Listener {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fail(bench, err.Error())
	}
	fmt.Printf("port=%d\n", ln.Addr().(*net.TCPAddr).Port)
	go func() {
		io.Copy(io.Discard, os.Stdin)
		os.Exit(0)
	}()
	return ln
}
