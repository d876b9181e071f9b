// Command forward makes ports of a network namespace reachable on the host's loopback.
//
// Usage: forward -netns /run/netns/NAME 127.0.0.1:PORT...
//
// Properties:
//   - Listens on each address in the namespace it was started in (the host's), before anything else.
//   - Each accepted connection gets its own connection to the same address inside -netns: the
//     socket is created on an OS thread that entered that namespace with setns(2) and never leaves it.
//   - Bytes are copied both ways; a half-close is passed on; a refused dial closes the client.
//   - Runs until SIGTERM/SIGINT; prints "forwarding" once every listener is up.
package main

import (
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"runtime"
	"syscall"
)

// setnsSyscall is setns(2)'s number (the syscall package does not export it on every architecture).
var setnsSyscall = map[string]uintptr{"amd64": 308, "arm64": 268}

type dialRequest struct {
	addr  string
	reply chan dialResult
}

type dialResult struct {
	conn net.Conn
	err  error
}

func main() {
	netns := flag.String("netns", "", "path of the network namespace to dial into")
	flag.Parse()
	if *netns == "" || flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: forward -netns PATH 127.0.0.1:PORT...")
		os.Exit(2)
	}
	var listeners []net.Listener
	for _, addr := range flag.Args() {
		l, err := net.Listen("tcp", addr)
		if err != nil {
			fmt.Fprintf(os.Stderr, "forward: listen %s: %v\n", addr, err)
			os.Exit(1)
		}
		listeners = append(listeners, l)
	}
	dials := make(chan dialRequest)
	ready := make(chan error)
	go dialer(*netns, dials, ready)
	if err := <-ready; err != nil {
		fmt.Fprintf(os.Stderr, "forward: entering %s: %v\n", *netns, err)
		os.Exit(1)
	}
	for _, l := range listeners {
		go serve(l, dials)
	}
	fmt.Println("forwarding", flag.Args())
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
	<-sig
}

// dialer owns one OS thread inside the namespace; every outgoing socket is created there.
func dialer(netns string, dials <-chan dialRequest, ready chan<- error) {
	runtime.LockOSThread() // never unlocked: the thread stays in the namespace and dies with the process
	f, err := os.Open(netns)
	if err != nil {
		ready <- err
		return
	}
	nr, ok := setnsSyscall[runtime.GOARCH]
	if !ok {
		ready <- fmt.Errorf("setns: unknown syscall number on %s", runtime.GOARCH)
		return
	}
	if _, _, errno := syscall.RawSyscall(nr, f.Fd(), syscall.CLONE_NEWNET, 0); errno != 0 {
		ready <- errno
		return
	}
	f.Close()
	ready <- nil
	for req := range dials {
		conn, err := net.Dial("tcp", req.addr)
		req.reply <- dialResult{conn, err}
	}
}

func serve(l net.Listener, dials chan<- dialRequest) {
	for {
		client, err := l.Accept()
		if err != nil {
			continue
		}
		go func() {
			reply := make(chan dialResult, 1)
			dials <- dialRequest{l.Addr().String(), reply}
			res := <-reply
			if res.err != nil {
				client.Close()
				return
			}
			pipe(client, res.conn)
		}()
	}
}

func pipe(a, b net.Conn) {
	done := make(chan struct{}, 2)
	cp := func(dst, src net.Conn) {
		io.Copy(dst, src)
		if tc, ok := dst.(*net.TCPConn); ok {
			tc.CloseWrite()
		}
		done <- struct{}{}
	}
	go cp(a, b)
	go cp(b, a)
	<-done
	<-done
	a.Close()
	b.Close()
}
