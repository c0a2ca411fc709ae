package smtptest

import (
	"strings"
	"testing"
	"time"

	gosmtp "github.com/emersion/go-smtp"
)

// CutTransactions counts each connection ended after the moment given
// whose last transaction was begun: not one that quit before it, not one
// that never began a transaction, and only the last of a connection that
// had begun another after its first.
func TestCutTransactionsCountsEachCutConnectionsLastTransaction(t *testing.T) {
	s := Start(t)
	dial := func() *gosmtp.Client {
		c, err := gosmtp.Dial(s.Addr())
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Hello("client.test"); err != nil {
			t.Fatal(err)
		}
		return c
	}
	body := func() *strings.Reader { return strings.NewReader("Subject: hi\r\n\r\nbody\r\n") }

	quits := dial()
	if err := quits.SendMail("a@example.test", []string{"b@example.test"}, body()); err != nil {
		t.Fatal(err)
	}
	if err := quits.Quit(); err != nil {
		t.Fatal(err)
	}
	s.WaitStats(t, 5*time.Second, func(st Stats) bool { return st.Open == 0 })

	since := time.Now()
	two := dial()
	for range 2 {
		if err := two.SendMail("a@example.test", []string{"b@example.test"}, body()); err != nil {
			t.Fatal(err)
		}
	}
	idle := dial()
	two.Close() // cut, without QUIT
	idle.Close()
	s.WaitStats(t, 5*time.Second, func(st Stats) bool { return st.Open == 0 })

	if n := s.CutTransactions(since); n != 1 {
		t.Errorf("CutTransactions = %d, want 1 (the last transaction of the one connection cut after a MAIL)", n)
	}
	if n := s.CutTransactions(time.Time{}); n != 2 {
		t.Errorf("CutTransactions from the start = %d, want 2 (a session that quit is counted when it ended after the moment)", n)
	}
}
