// bench=io_http, system=go_raw: the HTTP/1.1 "hello" server on raw package
// net with the same minimal parser as troupe's (bench/io/http.cpp): a
// request is a header block ending in "\r\n\r\n" (no bodies: wrk sends
// GET), pipelined requests are answered in order, every answer is the same
// keep-alive "hello". One goroutine per connection, 4 KiB read buffer.
// Driven by io_loadgen --mode=http (wrk); exits at EOF of its stdin.
package main

import (
	"bytes"
	"net"
)

var hello = []byte("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 5\r\n\r\nhello")
var crlf2 = []byte("\r\n\r\n")

func serve(c net.Conn) {
	defer c.Close()
	buf := make([]byte, 4096)
	out := make([]byte, 0, 4096)
	have := 0
	for {
		n, err := c.Read(buf[have:])
		if err != nil {
			return
		}
		have += n
		used := 0
		out = out[:0]
		for {
			end := bytes.Index(buf[used:have], crlf2)
			if end < 0 {
				break
			}
			used += end + 4
			out = append(out, hello...)
		}
		if len(out) > 0 {
			if _, err := c.Write(out); err != nil {
				return
			}
		}
		copy(buf, buf[used:have])
		have -= used
		if have == len(buf) {
			return // a request larger than the buffer: not this benchmark's
		}
	}
}

func main() {
	ln := listenLoopback("io_http")
	for {
		c, err := ln.Accept()
		if err != nil {
			fail("io_http", err.Error())
		}
		go serve(c)
	}
}
