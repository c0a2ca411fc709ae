package smtptest

import (
	"strconv"
	"strings"
	"time"

	gosmtp "github.com/emersion/go-smtp"
)

// scripted is a reply a test chose.
type scripted struct {
	code     int
	enhanced string
	text     string
}

// rcptScript is what RCPT answers for one address: the once replies in
// turn, then always (or 250).
type rcptScript struct {
	once   []scripted
	always *scripted
}

// Reply makes RCPT of rcpt answer code with the enhanced status code (none
// when empty) and text, until Reply is called again for it. A 2xx code
// accepts the recipient.
func (s *Server) Reply(rcpt string, code int, enhanced, text string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	sc := s.script(rcpt)
	sc.always = &scripted{code, enhanced, text}
	sc.once = nil
}

// ReplyOnce makes the next RCPT of rcpt answer so; later ones answer as
// before (250 unless Reply said otherwise). Calls queue up.
func (s *Server) ReplyOnce(rcpt string, code int, enhanced, text string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	sc := s.script(rcpt)
	sc.once = append(sc.once, scripted{code, enhanced, text})
}

func (s *Server) script(rcpt string) *rcptScript {
	k := strings.ToLower(rcpt)
	sc := s.rcpt[k]
	if sc == nil {
		sc = &rcptScript{}
		s.rcpt[k] = sc
	}
	return sc
}

// rcptReply is the scripted reply for rcpt, or nil for the default 250.
func (s *Server) rcptReply(rcpt string) *scripted {
	s.mu.Lock()
	defer s.mu.Unlock()
	sc := s.rcpt[strings.ToLower(rcpt)]
	switch {
	case sc == nil:
		return nil
	case len(sc.once) > 0:
		r := sc.once[0]
		sc.once = sc.once[1:]
		return &r
	default:
		return sc.always
	}
}

// DataReply makes the end of every later DATA answer code (until called
// again). A 2xx code records the message and answers with this text; any
// other code refuses it, and nothing is recorded.
func (s *Server) DataReply(code int, enhanced, text string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.data = &scripted{code, enhanced, text}
}

// DropDuringData makes the next n transactions lose their connection in the
// middle of the message data, the way a crashing or overloaded receiver
// does. Nothing of those messages is recorded.
func (s *Server) DropDuringData(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.drops += n
}

// Hold makes every transaction with rcpt among its recipients wait, once its
// data is read and before the final reply, until release is called (or the
// test ends): a slow receiver, for as long as the test needs one.
// Stats.Held counts the transactions waiting.
func (s *Server) Hold(rcpt string) (release func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ch := make(chan struct{})
	s.holds[strings.ToLower(rcpt)] = ch
	return func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.holds[strings.ToLower(rcpt)] == ch {
			delete(s.holds, strings.ToLower(rcpt))
			close(ch)
		}
	}
}

// SlowData makes every later transaction wait d once its data is read,
// before the final reply: a receiver that scans mail before accepting it,
// so that a sender has exchanges in flight at any moment. The message is
// recorded after the wait even if the client has gone by then, as a real
// receiver that queued it would deliver it.
func (s *Server) SlowData(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.slow = d
}

// SlowDataFor is SlowData for the transactions with a recipient at domain
// only: one slow receiver among quick ones.
func (s *Server) SlowDataFor(domain string, d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.slowFor == nil {
		s.slowFor = map[string]time.Duration{}
	}
	s.slowFor[strings.ToLower(domain)] = d
}

// dataDelay is how long the transaction to rcpts waits before its reply.
// The caller holds s.mu.
func (s *Server) dataDelay(rcpts []string) time.Duration {
	d := s.slow
	for _, r := range rcpts {
		if i := strings.LastIndexByte(r, '@'); i >= 0 {
			d = max(d, s.slowFor[strings.ToLower(r[i+1:])])
		}
	}
	return d
}

// smtpError is the reply as go-smtp's server writes it. go-smtp sends
// whatever code an *SMTPError carries, 2xx included, which is how a data
// success gets a text of the test's choosing.
func (r scripted) smtpError() *gosmtp.SMTPError {
	return &gosmtp.SMTPError{Code: r.code, EnhancedCode: parseEnhanced(r.enhanced), Message: r.text}
}

// parseEnhanced reads "5.1.1"; empty means no enhanced code in the reply.
func parseEnhanced(s string) gosmtp.EnhancedCode {
	parts := strings.Split(s, ".")
	if len(parts) != 3 {
		return gosmtp.NoEnhancedCode
	}
	var ec gosmtp.EnhancedCode
	for i, p := range parts {
		n, err := strconv.Atoi(p)
		if err != nil {
			return gosmtp.NoEnhancedCode
		}
		ec[i] = n
	}
	return ec
}
