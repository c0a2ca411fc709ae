package smtptest

import (
	"errors"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	gosmtp "github.com/emersion/go-smtp"
)

// fakeClock is a time the test moves on.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *fakeClock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// dialFrom connects to addr from the local address from and reads the
// greeting.
func dialFrom(t *testing.T, from, addr string) (*gosmtp.Client, error) {
	t.Helper()
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}, Timeout: 5 * time.Second}
	conn, err := d.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	c := gosmtp.NewClient(conn)
	if err := c.Hello("client.test"); err != nil {
		conn.Close()
		return nil, err
	}
	t.Cleanup(func() { c.Close() })
	return c, nil
}

func sendOn(c *gosmtp.Client, from string, to ...string) error {
	return c.SendMail(from, to, strings.NewReader("Subject: hi\r\n\r\nbody\r\n"))
}

func wantCode(t *testing.T, err error, code int, enhanced gosmtp.EnhancedCode) {
	t.Helper()
	var smtpErr *gosmtp.SMTPError
	if !errors.As(err, &smtpErr) || smtpErr.Code != code || smtpErr.EnhancedCode != enhanced {
		t.Fatalf("got %v, want %d %v", err, code, enhanced)
	}
}

func TestAddressesShareOnePortAndRecordSessions(t *testing.T) {
	s := Start(t, WithAddresses("127.0.0.2", "127.0.0.3"), WithDomain("mx1.site.test"))
	addrs := s.Addrs()
	if len(addrs) != 2 || !strings.HasPrefix(addrs[0], "127.0.0.2:") || !strings.HasPrefix(addrs[1], "127.0.0.3:") {
		t.Fatalf("addresses %v", addrs)
	}
	for _, a := range addrs {
		if _, p, _ := net.SplitHostPort(a); p != strings.TrimPrefix(addrs[0], "127.0.0.2:") {
			t.Fatalf("addresses %v on different ports", addrs)
		}
	}
	for i, a := range addrs {
		c, err := dialFrom(t, "127.0.0.1"+string(rune('0'+i)), a)
		if err != nil {
			t.Fatal(err)
		}
		if err := sendOn(c, "from@example.test", "a@example.test"); err != nil {
			t.Fatal(err)
		}
	}
	sess := s.Sessions()
	if len(sess) != 2 || !strings.HasPrefix(sess[0].Client, "127.0.0.10:") || !strings.HasPrefix(sess[1].Client, "127.0.0.11:") ||
		sess[0].Helo != "client.test" || sess[0].Messages != 1 {
		t.Fatalf("sessions %+v", sess)
	}
	if msgs := s.Messages(); len(msgs) != 2 || !strings.HasPrefix(msgs[1].Client, "127.0.0.11:") {
		t.Fatalf("messages %+v", msgs)
	}
	if st := s.Stats(); st.Connections != 2 || st.Messages != 2 {
		t.Errorf("stats %+v", st)
	}
}

func TestMaxConnectionsRefusesBeyondTheCapPerClientAddress(t *testing.T) {
	s := Start(t, WithMaxConnections(2))
	a, err := dialFrom(t, "127.0.0.10", s.Addr())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := dialFrom(t, "127.0.0.10", s.Addr()); err != nil {
		t.Fatal(err)
	}
	_, err = dialFrom(t, "127.0.0.10", s.Addr())
	wantCode(t, err, 421, gosmtp.EnhancedCode{4, 7, 0})
	// Another address has a cap of its own.
	if _, err := dialFrom(t, "127.0.0.11", s.Addr()); err != nil {
		t.Fatalf("another client address: %v", err)
	}
	st := s.Stats()
	if st.Refused != 1 || st.MaxAttempted != 3 || st.FirstRefusal.IsZero() || st.Connections != 3 {
		t.Fatalf("stats %+v, want 1 refused of 3 attempted", st)
	}
	// A closed connection makes room.
	a.Close()
	s.WaitStats(t, 5*time.Second, func(st Stats) bool { return st.Open == 2 })
	if _, err := dialFrom(t, "127.0.0.10", s.Addr()); err != nil {
		t.Fatalf("after one closed: %v", err)
	}
	s.ResetPeaks()
	if st := s.Stats(); st.MaxAttempted != 2 || st.MaxOpen != 3 {
		t.Fatalf("peaks after reset %+v, want those open now", st)
	}
}

func TestMaxRateThrottlesBeyondTheWindow(t *testing.T) {
	clock := &fakeClock{now: time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)}
	s := Start(t, WithMaxRate(2, time.Minute), WithClock(clock.Now))
	c, err := dialFrom(t, "127.0.0.10", s.Addr())
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := sendOn(c, "from@example.test", "a@example.test"); err != nil {
			t.Fatal(err)
		}
	}
	wantCode(t, sendOn(c, "from@example.test", "a@example.test"), 450, gosmtp.EnhancedCode{4, 7, 28})
	if err := c.Reset(); err != nil {
		t.Fatal(err)
	}
	clock.Add(61 * time.Second)
	if err := sendOn(c, "from@example.test", "a@example.test"); err != nil {
		t.Fatalf("after the window: %v", err)
	}
	if st := s.Stats(); st.Throttled != 1 || st.Messages != 3 || st.Transactions != 3 {
		t.Fatalf("stats %+v, want 1 throttled, 3 messages", st)
	}
}

func TestGreylistingUntilTheDelayHasPassed(t *testing.T) {
	clock := &fakeClock{now: time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)}
	s := Start(t, WithGreylisting(5*time.Minute), WithClock(clock.Now))
	c, err := dialFrom(t, "127.0.0.10", s.Addr())
	if err != nil {
		t.Fatal(err)
	}
	try := func(from string) error {
		err := sendOn(c, from, "a@example.test")
		_ = c.Reset()
		return err
	}
	wantCode(t, try("from@example.test"), 451, gosmtp.EnhancedCode{4, 7, 1})
	clock.Add(4 * time.Minute)
	wantCode(t, try("from@example.test"), 451, gosmtp.EnhancedCode{4, 7, 1})
	clock.Add(time.Minute)
	if err := try("from@example.test"); err != nil {
		t.Fatalf("after the delay: %v", err)
	}
	// Another sender is another triplet.
	wantCode(t, try("other@example.test"), 451, gosmtp.EnhancedCode{4, 7, 1})
	if st := s.Stats(); st.Greylisted != 3 || st.Messages != 1 {
		t.Fatalf("stats %+v, want 3 greylisted, 1 message", st)
	}
}

func TestDeadServerAcceptsButNeverGreets(t *testing.T) {
	s := Start(t, WithDead())
	conn, err := net.Dial("tcp", s.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	s.WaitStats(t, 5*time.Second, func(st Stats) bool { return st.Open == 1 })
	_ = conn.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
	var b [1]byte
	if n, err := conn.Read(b[:]); n != 0 || !errors.Is(err, net.ErrClosed) && !isTimeout(err) {
		t.Fatalf("read %d bytes, %v; want nothing", n, err)
	}
	conn.Close()
	s.WaitStats(t, 5*time.Second, func(st Stats) bool { return st.Open == 0 && st.Connections == 1 })
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// Latency adds to every transaction; the transaction cannot be quicker.
func TestLatencyDelaysTheDataReply(t *testing.T) {
	s := Start(t, WithLatency(50*time.Millisecond, 60*time.Millisecond))
	began := time.Now()
	if err := send(t, s, "a@example.test"); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(began); took < 50*time.Millisecond {
		t.Fatalf("transaction took %v, less than the latency", took)
	}
}

func TestNewAndCloseWithoutATest(t *testing.T) {
	s, err := New(WithAddresses("127.0.0.4"))
	if err != nil {
		t.Fatal(err)
	}
	if err := send(t, s, "a@example.test"); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := net.Dial("tcp", s.Addr()); err == nil {
		t.Fatal("the server still listens after Close")
	}
}
