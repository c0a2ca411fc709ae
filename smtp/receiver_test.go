package smtp

import (
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/netip"
	"strconv"
	"sync"
	"testing"
	"time"

	gosmtp "github.com/emersion/go-smtp"
)

// receiver is an MX host on a loopback address of its own, for what
// smtptest's server cannot (yet) do: listen on any 127.0.0.0/8 address
// (every MX host of a test on one port, as Direct dials one port),
// answer 421 to connections beyond a cap, hold transactions, and record
// each session's client address and EHLO name. Built on go-smtp's server
// directly.
type receiver struct {
	ip   string
	addr string
	srv  *gosmtp.Server
	done chan struct{}

	mu sync.Mutex
	// limit caps the connections served at once; beyond it the greeting
	// is a 421 (0: no cap; -1: every connection is refused so).
	limit int
	// open counts connections open (refused ones too, until closed),
	// maxOpen the most at once, refused the 421 greetings.
	open, maxOpen, refused, connections int
	sessions                            []*sessionLog
	hold                                chan struct{}
	held                                int
	delivered                           int
}

// sessionLog is what one session said.
type sessionLog struct {
	Remote netip.Addr
	EHLO   string
	// Mails are when each MAIL arrived.
	Mails []time.Time
}

// startReceivers runs a receiver on each ip, all on one port, stopped
// when the test ends.
func startReceivers(t *testing.T, ips ...string) (port int, rs []*receiver) {
	t.Helper()
	for attempt := 0; ; attempt++ {
		var lns []net.Listener
		var err error
		for _, ip := range ips {
			var ln net.Listener
			ln, err = net.Listen("tcp", net.JoinHostPort(ip, strconv.Itoa(port)))
			if err != nil {
				break
			}
			lns = append(lns, ln)
			port = ln.Addr().(*net.TCPAddr).Port
		}
		if err == nil {
			for i, ln := range lns {
				rs = append(rs, serveReceiver(t, ips[i], ln))
			}
			return port, rs
		}
		for _, ln := range lns {
			ln.Close()
		}
		port = 0
		if attempt == 10 {
			t.Fatalf("listening on %v: %v", ips, err)
		}
	}
}

func serveReceiver(t *testing.T, ip string, ln net.Listener) *receiver {
	r := &receiver{ip: ip, addr: ln.Addr().String(), done: make(chan struct{})}
	srv := gosmtp.NewServer(gosmtp.BackendFunc(func(c *gosmtp.Conn) (gosmtp.Session, error) {
		return &receiverSession{r: r, c: c}, nil
	}))
	srv.Domain = "mx." + ip
	srv.ReadTimeout = time.Minute
	srv.WriteTimeout = time.Minute
	srv.ErrorLog = log.New(io.Discard, "", 0)
	r.srv = srv
	go func() { _ = srv.Serve(&capListener{Listener: ln, r: r}) }()
	t.Cleanup(func() {
		close(r.done)
		_ = srv.Close()
	})
	return r
}

// Hold makes every DATA wait until the function returned is called (or the
// test ends).
func (r *receiver) Hold() (release func()) {
	ch := make(chan struct{})
	r.mu.Lock()
	r.hold = ch
	r.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			r.mu.Lock()
			if r.hold == ch {
				r.hold = nil
			}
			r.mu.Unlock()
			close(ch)
		})
	}
}

// Limit caps the connections served at once (see receiver.limit).
func (r *receiver) Limit(n int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.limit = n
}

// receiverStats is a snapshot of a receiver's counters.
type receiverStats struct {
	Open, MaxOpen, Refused, Connections, Held, Delivered int
	Sessions                                             []sessionLog
}

func (r *receiver) Stats() receiverStats {
	r.mu.Lock()
	defer r.mu.Unlock()
	st := receiverStats{Open: r.open, MaxOpen: r.maxOpen, Refused: r.refused, Connections: r.connections,
		Held: r.held, Delivered: r.delivered}
	for _, s := range r.sessions {
		c := *s
		c.Mails = append([]time.Time(nil), s.Mails...)
		st.Sessions = append(st.Sessions, c)
	}
	return st
}

// ResetMax starts counting the most connections at once afresh.
func (r *receiver) ResetMax() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.maxOpen = r.open
	r.refused = 0
}

// capListener counts connections and answers those beyond the cap with a
// 421 greeting (RFC 5321 §3.8), as receivers limiting a client's
// connections do, without handing them to go-smtp.
type capListener struct {
	net.Listener
	r *receiver
}

func (l *capListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		r := l.r
		r.mu.Lock()
		r.connections++
		r.open++
		r.maxOpen = max(r.maxOpen, r.open)
		refuse := r.limit < 0 || r.limit > 0 && r.open > r.limit
		if refuse {
			r.refused++
		}
		r.mu.Unlock()
		cc := &capConn{Conn: c, r: r}
		if !refuse {
			return cc, nil
		}
		_, _ = fmt.Fprintf(c, "421 4.7.0 Too many concurrent SMTP connections; please try again later\r\n")
		cc.Close()
	}
}

type capConn struct {
	net.Conn
	r    *receiver
	once sync.Once
}

func (c *capConn) Close() error {
	c.once.Do(func() {
		c.r.mu.Lock()
		c.r.open--
		c.r.mu.Unlock()
	})
	return c.Conn.Close()
}

type receiverSession struct {
	r   *receiver
	c   *gosmtp.Conn
	log *sessionLog
}

func (s *receiverSession) Mail(string, *gosmtp.MailOptions) error {
	r := s.r
	r.mu.Lock()
	defer r.mu.Unlock()
	if s.log == nil {
		remote, _ := netip.ParseAddrPort(s.c.Conn().RemoteAddr().String())
		s.log = &sessionLog{Remote: remote.Addr().Unmap(), EHLO: s.c.Hostname()}
		r.sessions = append(r.sessions, s.log)
	}
	s.log.Mails = append(s.log.Mails, time.Now())
	return nil
}

func (s *receiverSession) Rcpt(string, *gosmtp.RcptOptions) error { return nil }

func (s *receiverSession) Data(data io.Reader) error {
	if _, err := io.Copy(io.Discard, data); err != nil {
		return err
	}
	r := s.r
	r.mu.Lock()
	hold := r.hold
	if hold != nil {
		r.held++
	}
	r.mu.Unlock()
	if hold != nil {
		select {
		case <-hold:
		case <-r.done:
			return errors.New("test over")
		}
		r.mu.Lock()
		r.held--
		r.mu.Unlock()
	}
	r.mu.Lock()
	r.delivered++
	r.mu.Unlock()
	return nil
}

func (s *receiverSession) Reset()        {}
func (s *receiverSession) Logout() error { return nil }
