package connlimit_test

import (
	"errors"
	"net"
	"os"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mailroom/mailroom/connlimit"
	"github.com/mailroom/mailroom/poll"
)

// server accepts on a capped loopback listener and keeps what it accepted.
type server struct {
	addr     string
	lim      *connlimit.Limiter
	accepted chan net.Conn

	mu      sync.Mutex
	refused []connlimit.Reason
}

func start(t *testing.T, perAddress, total int) *server {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &server{addr: ln.Addr().String(), lim: connlimit.New(perAddress, total), accepted: make(chan net.Conn, 100)}
	capped := &connlimit.Listener{Listener: ln, Limiter: s.lim, OnRefuse: func(_ net.Addr, why connlimit.Reason) {
		s.mu.Lock()
		s.refused = append(s.refused, why)
		s.mu.Unlock()
	}}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := capped.Accept()
			if err != nil {
				return
			}
			s.accepted <- c
		}
	}()
	t.Cleanup(func() {
		_ = capped.Close()
		<-done
		close(s.accepted)
		for c := range s.accepted {
			_ = c.Close()
		}
	})
	return s
}

func (s *server) refusals() []connlimit.Reason {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]connlimit.Reason(nil), s.refused...)
}

// dialFrom connects to addr from the loopback address from (Linux routes
// all of 127/8 to lo).
func dialFrom(t *testing.T, addr, from string) net.Conn {
	t.Helper()
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}, Timeout: 5 * time.Second}
	c, err := d.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// accept is the next connection the listener let through.
func (s *server) accept(t *testing.T) net.Conn {
	t.Helper()
	select {
	case c := <-s.accepted:
		return c
	case <-time.After(10 * time.Second):
		t.Fatal("no connection accepted within 10 s")
		return nil
	}
}

// refusedFrom dials addr from the address from and says whether the
// server ended the connection (reset or closed) rather than holding it.
// The reset may come so soon that the dial itself reports it.
func refusedFrom(t *testing.T, addr, from string) bool {
	t.Helper()
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}, Timeout: 5 * time.Second}
	c, err := d.Dial("tcp", addr)
	if err != nil {
		return errors.Is(err, syscall.ECONNRESET)
	}
	defer c.Close()
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	_, err = c.Read(make([]byte, 1))
	return err != nil && !errors.Is(err, os.ErrDeadlineExceeded)
}

// A client past its address's cap has its connection closed as it is
// accepted, while another address is let in; closing a held connection,
// even twice, gives back exactly one slot.
func TestPastTheAddressCapIsRefused(t *testing.T) {
	s := start(t, 2, 10)
	dialFrom(t, s.addr, "127.0.0.1")
	dialFrom(t, s.addr, "127.0.0.1")
	first, _ := s.accept(t), s.accept(t)

	if !refusedFrom(t, s.addr, "127.0.0.1") {
		t.Fatal("the connection past the address's cap was held")
	}
	if got := s.refusals(); len(got) != 1 || got[0] != connlimit.PerAddress {
		t.Fatalf("refusals %v, want [per_address]", got)
	}
	dialFrom(t, s.addr, "127.0.0.2")
	s.accept(t)
	if n := s.lim.Open(); n != 3 {
		t.Fatalf("Open() = %d, want 3", n)
	}

	_ = first.Close()
	_ = first.Close()
	if n := s.lim.Open(); n != 2 {
		t.Fatalf("after closing one connection twice, Open() = %d, want 2", n)
	}
	dialFrom(t, s.addr, "127.0.0.1")
	s.accept(t)
	if n := len(s.refusals()); n != 1 {
		t.Fatalf("%d refusals, want still 1", n)
	}
}

// Past the overall cap, a new address is refused too.
func TestPastTheTotalCapIsRefused(t *testing.T) {
	s := start(t, 10, 2)
	dialFrom(t, s.addr, "127.0.0.1")
	dialFrom(t, s.addr, "127.0.0.2")
	s.accept(t)
	s.accept(t)
	if !refusedFrom(t, s.addr, "127.0.0.3") {
		t.Fatal("the connection past the total cap was held")
	}
	poll.Until(t, 5*time.Second, "the refusal is not reported", func() bool { return len(s.refusals()) == 1 })
	if got := s.refusals(); got[0] != connlimit.Total {
		t.Fatalf("refusals %v, want [total]", got)
	}
}

func TestClientKey(t *testing.T) {
	for _, tc := range []struct{ addr, want string }{
		{"192.0.2.7:443", "192.0.2.7"},
		{"[::ffff:192.0.2.7]:443", "192.0.2.7"},
		{"[2001:db8:1:2:aaaa::1]:443", "2001:db8:1:2::/64"},
		{"[2001:db8:1:2:ffff::9]:443", "2001:db8:1:2::/64"},
		{"[2001:db8:1:3::1]:443", "2001:db8:1:3::/64"},
	} {
		a, err := net.ResolveTCPAddr("tcp", tc.addr)
		if err != nil {
			t.Fatal(err)
		}
		if got := connlimit.ClientKey(a); got != tc.want {
			t.Errorf("ClientKey(%s) = %q, want %q", tc.addr, got, tc.want)
		}
	}
}
