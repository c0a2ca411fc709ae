package inbound_test

import (
	"context"
	"errors"
	"io"
	"strings"
	"sync"
	"testing"

	gosmtp "github.com/emersion/go-smtp"

	"github.com/mailroom/mailroom"
	"github.com/mailroom/mailroom/inbound"
	"github.com/mailroom/mailroom/smtpserver"
	"github.com/mailroom/mailroom/smtpserver/smtpservertest"
)

// bounceDomain is the bounce subdomain the fake Handler takes mail for.
const bounceDomain = "bounces.example.com"

// fakeHandler takes mail for bounceDomain and records what it is given.
type fakeHandler struct {
	mu        sync.Mutex
	acceptErr error
	applyErr  error
	// block, when set, holds Apply until it is closed; entered receives
	// a value each time Apply starts.
	block   chan struct{}
	entered chan struct{}
	asked   []string
	applied []appliedReport
}

type appliedReport struct {
	rcpt   string
	report *mailroom.Report
}

func (h *fakeHandler) Accepts(_ context.Context, rcpt string) (bool, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.asked = append(h.asked, rcpt)
	if h.acceptErr != nil {
		return false, h.acceptErr
	}
	return strings.HasSuffix(strings.ToLower(rcpt), "@"+bounceDomain), nil
}

func (h *fakeHandler) Apply(ctx context.Context, rcpt string, r *mailroom.Report) error {
	h.mu.Lock()
	block, entered, err := h.block, h.entered, h.applyErr
	h.mu.Unlock()
	if entered != nil {
		entered <- struct{}{}
	}
	if block != nil {
		select {
		case <-block:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	if err != nil {
		return err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.applied = append(h.applied, appliedReport{rcpt: rcpt, report: r})
	return nil
}

func (h *fakeHandler) set(f func(h *fakeHandler)) {
	h.mu.Lock()
	defer h.mu.Unlock()
	f(h)
}

func (h *fakeHandler) appliedReports() []appliedReport {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]appliedReport(nil), h.applied...)
}

// testServer is an inbound.Server on 127.0.0.1 with a fake Handler and
// parser, recording the messages parsed, the outcomes and the log.
type testServer struct {
	srv      *inbound.Server
	addr     string
	h        *fakeHandler
	log      *smtpservertest.Log
	outcomes smtpservertest.Outcomes
	serveErr chan error

	mu     sync.Mutex
	parsed [][]byte
}

// fakeParse reads the whole message and says what it is from an X-Test
// header: "unparseable" (an error), "panic", or anything else (a DSN whose
// Text is the header's value).
func (ts *testServer) fakeParse(r io.Reader) (*mailroom.Report, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	ts.mu.Lock()
	ts.parsed = append(ts.parsed, data)
	ts.mu.Unlock()
	var test string
	for _, line := range strings.Split(string(data), "\r\n") {
		if line == "" {
			break
		}
		if v, ok := strings.CutPrefix(line, "X-Test: "); ok {
			test = v
		}
	}
	switch test {
	case "unparseable":
		return nil, errors.New("not a message")
	case "panic":
		panic("parser bug")
	}
	return &mailroom.Report{Kind: mailroom.ReportDSN, Text: test}, nil
}

func (ts *testServer) outcome(name string) int { return ts.outcomes.Count(name) }

func (ts *testServer) parsedMessages() [][]byte {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	return append([][]byte(nil), ts.parsed...)
}

// startServer serves on a free port of 127.0.0.1 until the test ends.
func startServer(t *testing.T, configure ...func(*inbound.Server)) *testServer {
	t.Helper()
	ts := &testServer{h: &fakeHandler{}, log: &smtpservertest.Log{}}
	ts.srv = &inbound.Server{
		Handler: ts.h,
		Parse:   ts.fakeParse,
		Config:  smtpserver.Config{Hostname: "mx.test", Log: ts.log.Logger(), Observe: ts.outcomes.Observe},
	}
	for _, f := range configure {
		f(ts.srv)
	}
	serving := smtpservertest.Serve(t, ts.srv.Close, ts.srv.Serve)
	ts.addr, ts.serveErr = serving.Addrs[0], serving.Served
	return ts
}

// dial connects a go-smtp client and says EHLO.
func dial(t *testing.T, addr string) *gosmtp.Client {
	t.Helper()
	c, err := gosmtp.Dial(addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	if err := c.Hello("sender.test"); err != nil {
		t.Fatal(err)
	}
	return c
}

// send runs one transaction from the null sender, as a bounce comes, and
// returns the first error.
func send(c *gosmtp.Client, to []string, msg []byte) error {
	if err := c.Mail("", nil); err != nil {
		return err
	}
	for _, rcpt := range to {
		if err := c.Rcpt(rcpt, nil); err != nil {
			return err
		}
	}
	w, err := c.Data()
	if err != nil {
		return err
	}
	if _, err := w.Write(msg); err != nil {
		return err
	}
	return w.Close()
}

func message(xTest, body string) []byte {
	return []byte("From: MAILER-DAEMON@remote.test\r\n" +
		"To: bounce-1@" + bounceDomain + "\r\n" +
		"Subject: Undelivered Mail Returned to Sender\r\n" +
		"X-Test: " + xTest + "\r\n" +
		"\r\n" + body)
}

// messageOfSize is a message of exactly n bytes, as the server counts
// them.
func messageOfSize(n int) []byte {
	return smtpservertest.MessageOfSize("Subject: size\r\nX-Test: sized\r\n\r\n", n)
}
