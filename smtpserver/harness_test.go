package smtpserver_test

import (
	"io"
	"net"
	"testing"

	gosmtp "github.com/emersion/go-smtp"

	"github.com/mailroom/mailroom/smtpserver"
	"github.com/mailroom/mailroom/smtpserver/smtpservertest"
)

// testServer is the skeleton alone on loopback, behind the least of a
// listener: a session that takes any transaction and reads each message
// through the skeleton's DATA reader, as inbound's and submission's do.
type testServer struct {
	srv      *smtpserver.Server
	addr     string
	outcomes smtpservertest.Outcomes
	log      smtpservertest.Log
}

func start(t *testing.T, lim smtpserver.Limits) *testServer {
	t.Helper()
	ts := &testServer{srv: &smtpserver.Server{}}
	setup := func() smtpserver.Setup {
		return smtpserver.Setup{
			Config:       smtpserver.Config{Hostname: "mx.test", Log: ts.log.Logger(), Observe: ts.outcomes.Observe, Limits: lim},
			Role:         "test",
			Defaults:     smtpserver.Limits{MaxBytes: 1 << 20, MaxRecipients: 10},
			Backend:      backend{ts.srv},
			InclusiveMax: true,
		}
	}
	serving := smtpservertest.Serve(t, ts.srv.Close, func(ln net.Listener) error { return ts.srv.Serve(ln, false, setup) })
	ts.addr = serving.Addrs[0]
	return ts
}

type backend struct{ srv *smtpserver.Server }

func (b backend) NewSession(c *gosmtp.Conn) (gosmtp.Session, error) {
	return &session{Session: smtpserver.Session[struct{}]{Server: b.srv, Conn: c, Remote: c.Conn().RemoteAddr().String()}}, nil
}

type session struct{ smtpserver.Session[struct{}] }

func (x *session) Mail(from string, _ *gosmtp.MailOptions) error { return x.Open(from, struct{}{}) }

func (x *session) Rcpt(to string, _ *gosmtp.RcptOptions) error {
	x.Mu.Lock()
	defer x.Mu.Unlock()
	x.Tx.Rcpts = append(x.Tx.Rcpts, to)
	return nil
}

func (x *session) Data(r io.Reader) error {
	d, err := x.BeginData(r)
	if err != nil {
		return err
	}
	_, _ = io.Copy(io.Discard, d.Message)
	switch {
	case d.Message.TooLarge():
		return smtpserver.ErrTooLarge(d.Message.Max)
	case d.Message.Failure() != nil:
		return x.CutOff(d)
	}
	return nil
}

// begin greets, and opens a transaction up to DATA's 354.
func begin(t *testing.T, addr string) *smtpservertest.Conn {
	t.Helper()
	c := smtpservertest.Dial(t, addr)
	c.Expect("220 ")
	c.Send("EHLO client.test\r\nMAIL FROM:<a@client.test>\r\nRCPT TO:<b@mx.test>\r\nDATA\r\n")
	c.Expect("250 ")
	c.Expect("250 ")
	c.Expect("250 ")
	c.Expect("354 ")
	return c
}
