package smtptest

import (
	"io"
	"math/rand/v2"
	"net"
	"strings"
	"time"

	gosmtp "github.com/emersion/go-smtp"
)

// client is what the server keeps of one client address: its limits hold
// per address, as the big providers' do (a sender's addresses are judged
// one by one).
type client struct {
	open int
	// began are when its recent transactions began, oldest first
	// (WithMaxRate's window).
	began []time.Time
}

// triplet is what a greylister remembers (RFC 6647 §2.1).
type triplet struct {
	ip, from, to string
}

// Replies of the simulated limits, worded as the providers word them.
var (
	// tooManyConnections is said on connecting beyond WithMaxConnections.
	tooManyConnections = "421 4.7.0 Too many concurrent connections from your IP address, closing connection\r\n"
	// unusualRate is Google's rate reply (mailroom.ThrottleTexts).
	unusualRate = &gosmtp.SMTPError{
		Code:         450,
		EnhancedCode: gosmtp.EnhancedCode{4, 7, 28},
		Message:      "Our system has detected an unusual rate of unsolicited mail originating from your IP address. Please try again later.",
	}
	greylistedReply = &gosmtp.SMTPError{
		Code:         451,
		EnhancedCode: gosmtp.EnhancedCode{4, 7, 1},
		Message:      "Greylisted, try again later",
	}
)

// clientIP is the address part of a remote address.
func clientIP(a net.Addr) string {
	host, _, err := net.SplitHostPort(a.String())
	if err != nil {
		return a.String()
	}
	return host
}

// admit counts a connection from ip and says whether it may be served:
// beyond WithMaxConnections it is refused. The caller holds s.mu.
func (s *Server) admit(ip string) bool {
	cl := s.clients[ip]
	if cl == nil {
		cl = &client{}
		s.clients[ip] = cl
	}
	s.stats.MaxAttempted = max(s.stats.MaxAttempted, cl.open+1)
	if s.cfg.maxConns > 0 && cl.open >= s.cfg.maxConns {
		s.stats.Refused++
		if s.stats.FirstRefusal.IsZero() {
			s.stats.FirstRefusal = s.cfg.now()
		}
		return false
	}
	cl.open++
	s.stats.Connections++
	s.stats.Open++
	s.stats.MaxOpen = max(s.stats.MaxOpen, s.stats.Open)
	return true
}

// release forgets an open connection of ip.
func (s *Server) release(ip string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stats.Open--
	if cl := s.clients[ip]; cl != nil {
		cl.open--
	}
}

// refuse greets c with the connection cap's 421 and closes it.
func refuse(c net.Conn) {
	_ = c.SetWriteDeadline(time.Now().Add(10 * time.Second))
	_, _ = io.WriteString(c, tooManyConnections)
	_ = c.Close()
}

// hang holds c without a word until the client goes or the server closes
// (WithDead).
func (s *Server) hang(c net.Conn) {
	go func() {
		<-s.done
		_ = c.Close()
	}()
	_, _ = io.Copy(io.Discard, c)
	_ = c.Close()
}

// beginTransaction says whether ip may begin one more transaction now
// (WithMaxRate), and counts it when it may.
func (s *Server) beginTransaction(ip string) *gosmtp.SMTPError {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cfg.rateN > 0 {
		now := s.cfg.now()
		cl := s.clients[ip]
		if cl == nil {
			cl = &client{}
			s.clients[ip] = cl
		}
		i := 0
		for i < len(cl.began) && !cl.began[i].After(now.Add(-s.cfg.ratePer)) {
			i++
		}
		cl.began = cl.began[i:]
		if len(cl.began) >= s.cfg.rateN {
			s.stats.Throttled++
			return unusualRate
		}
		cl.began = append(cl.began, now)
	}
	s.stats.Transactions++
	return nil
}

// greylisted answers the triplet's RCPT while it is greylisted.
func (s *Server) greylisted(ip, from, to string) *gosmtp.SMTPError {
	if !s.cfg.greylist {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	k := triplet{ip, strings.ToLower(from), strings.ToLower(to)}
	now := s.cfg.now()
	first, seen := s.greylist[k]
	if !seen {
		s.greylist[k] = now
	}
	if !seen || now.Sub(first) < s.cfg.greylistDelay {
		s.stats.Greylisted++
		return greylistedReply
	}
	return nil
}

// latency is WithLatency's wait for one transaction.
func (s *Server) latency() time.Duration {
	lo, hi := s.cfg.latencyMin, s.cfg.latencyMax
	if hi <= lo {
		return lo
	}
	return lo + rand.N(hi-lo+1)
}
