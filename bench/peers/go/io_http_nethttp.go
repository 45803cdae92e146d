// bench=io_http, system=go_nethttp: the HTTP/1.1 "hello" server a Go user
// would write, on package net/http (its full parser, keep-alive, one
// goroutine per connection). The same answer as the minimal servers:
// 200, Content-Type text/plain, body "hello". Driven by io_loadgen
// --mode=http (wrk); exits at EOF of its stdin.
package main

import "net/http"

func main() {
	ln := listenLoopback("io_http")
	body := []byte("hello")
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		w.Write(body)
	})
	if err := http.Serve(ln, h); err != nil {
		fail("io_http", err.Error())
	}
}
