// bench=io_echo, system=go: the goroutine-per-connection echo server on
// package net (Go's netpoller parks a goroutine whose socket has no data).
// Each connection reads up to 4 KiB and writes it all back until the client
// closes. Driven by io_loadgen (bench/io/loadgen.cpp); exits at EOF of its
// stdin (io_server.go). GOMAXPROCS: Go's default, the CPUs it may use; Go
// sets TCP_NODELAY on every TCP connection.
package main

import "net"

func serve(c net.Conn) {
	defer c.Close()
	buf := make([]byte, 4096)
	for {
		n, err := c.Read(buf)
		if err != nil {
			return
		}
		if _, err := c.Write(buf[:n]); err != nil {
			return
		}
	}
}

func main() {
	ln := listenLoopback("io_echo")
	for {
		c, err := ln.Accept()
		if err != nil {
			fail("io_echo", err.Error())
		}
		go serve(c)
	}
}
