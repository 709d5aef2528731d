package acquirer

import (
	"context"
	"errors"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// Running is a sandbox listening on a real socket: in-process for tests and
// `paygate serve`, or on its own (`paygate sandbox-acquirer`).
type Running struct {
	URL    string  // base URL to give the adapter (sandbox.NewAdapter), e.g. http://127.0.0.1:40123
	APIKey string  // the key the adapter must present
	Server *Server // for Ledger and Count in the same process

	srv       *http.Server
	done      chan error
	fresh     freshConns
	closeOnce sync.Once
	closeErr  error
}

// Listen starts a sandbox on addr (host:port; port 0 picks one). When
// Config.BaseURL is empty, page links follow each request's Host, which
// stays right behind any address the sandbox is reached at.
func Listen(addr string, cfg Config) (*Running, error) {
	s, err := Open(cfg)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	host := ln.Addr().String()
	if a, ok := ln.Addr().(*net.TCPAddr); ok && a.IP.IsUnspecified() {
		host = net.JoinHostPort("127.0.0.1", strconv.Itoa(a.Port))
	}
	r := &Running{
		URL:    "http://" + host,
		APIKey: s.APIKey(),
		Server: s,
		srv:    &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second},
		done:   make(chan error, 1),
	}
	r.srv.ConnState = r.fresh.track
	go func() { r.done <- r.srv.Serve(ln) }()
	return r, nil
}

// Start runs a sandbox on a free port of 127.0.0.1: the in-process form
// tests and `paygate serve` use.
func Start(cfg Config) (*Running, error) { return Listen("127.0.0.1:0", cfg) }

// Close releases withheld answers and stops the server, waiting at most
// five seconds for requests in flight. Closing again returns the same.
func (r *Running) Close() error {
	r.closeOnce.Do(func() {
		r.Server.Close()
		r.fresh.closeAll()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		err := r.srv.Shutdown(ctx)
		if err != nil {
			r.srv.Close()
		}
		if serr := <-r.done; !errors.Is(serr, http.ErrServerClosed) && err == nil {
			err = serr
		}
		r.closeErr = err
	})
	return r.closeErr
}

// ListenAndServe runs a sandbox on addr until ctx is done: the body of
// `paygate sandbox-acquirer --addr …`. Use Listen to learn the address and
// key before serving.
func ListenAndServe(ctx context.Context, addr string, cfg Config) error {
	r, err := Listen(addr, cfg)
	if err != nil {
		return err
	}
	select {
	case <-ctx.Done():
		return r.Close()
	case err := <-r.done:
		r.done <- err // for Close, which waits for it
		r.Close()
		return err
	}
}

// freshConns tracks connections that have not sent a request yet. Shutdown
// waits five seconds before it closes those (net/http's rule for new
// connections), and an HTTP client that dialed ahead of need leaves some
// behind; nothing is lost by closing them at once.
type freshConns struct {
	mu      sync.Mutex
	conns   map[net.Conn]struct{}
	closing bool
}

func (f *freshConns) track(c net.Conn, st http.ConnState) {
	f.mu.Lock()
	defer f.mu.Unlock()
	switch {
	case st == http.StateNew && f.closing:
		c.Close()
	case st == http.StateNew:
		if f.conns == nil {
			f.conns = map[net.Conn]struct{}{}
		}
		f.conns[c] = struct{}{}
	default:
		delete(f.conns, c)
	}
}

func (f *freshConns) closeAll() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.closing = true
	for c := range f.conns {
		c.Close()
	}
	clear(f.conns)
}
