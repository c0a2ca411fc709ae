package smtpservertest

import (
	"bytes"
	"errors"
	"log/slog"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/mailroom/mailroom/smtpserver"
)

// Listen is a listener on a free port of 127.0.0.1.
func Listen(t testing.TB) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return ln
}

// Serving is a server's Serve calls, each on a port of its own.
type Serving struct {
	// Addrs are the ports' addresses, in the order of the Serve calls.
	Addrs []string
	// Served receives what each Serve returned. A test that reads it
	// puts the value back for the cleanup's check.
	Served chan error
}

// Serve runs each of serves on a port of its own of 127.0.0.1 and, when
// the test ends, closes the server with closeServer and checks that every
// Serve returned ErrServerClosed within 10 seconds.
func Serve(t testing.TB, closeServer func() error, serves ...func(net.Listener) error) *Serving {
	t.Helper()
	s := &Serving{Served: make(chan error, len(serves))}
	lns := make([]net.Listener, len(serves))
	for i := range serves {
		lns[i] = Listen(t)
		s.Addrs = append(s.Addrs, lns[i].Addr().String())
	}
	for i, serve := range serves {
		go func() { s.Served <- serve(lns[i]) }()
	}
	t.Cleanup(func() {
		_ = closeServer()
		for range serves {
			select {
			case err := <-s.Served:
				if !errors.Is(err, smtpserver.ErrServerClosed) {
					t.Errorf("Serve returned %v, want ErrServerClosed", err)
				}
			case <-time.After(10 * time.Second):
				t.Error("Serve did not return after Close")
			}
		}
	})
	return s
}

// Outcomes counts the outcomes a server reports: set Observe as its
// Observe.
type Outcomes struct {
	mu sync.Mutex
	m  map[string]int
}

func (o *Outcomes) Observe(outcome string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.m == nil {
		o.m = map[string]int{}
	}
	o.m[outcome]++
}

// Count is how many times outcome was reported.
func (o *Outcomes) Count(outcome string) int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.m[outcome]
}

// Log is a server's log, kept for the test to read: Logger writes to it,
// Debug lines included.
type Log struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *Log) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *Log) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// Logger writes text lines, Debug and up, to l.
func (l *Log) Logger() *slog.Logger {
	return slog.New(slog.NewTextHandler(l, &slog.HandlerOptions{Level: slog.LevelDebug}))
}
