package smtptest

import (
	"slices"
	"time"
)

// Session is one client's SMTP session, as the server saw it: who
// connected from where, and under which name.
type Session struct {
	// Client is the client's address (host:port).
	Client string
	// Helo is the name it gave in EHLO or HELO (RFC 5321 §4.1.1.1).
	Helo string
	// Messages is how many messages the session delivered.
	Messages int
	// Transaction says the session's last mail transaction was begun
	// (MAIL accepted) and the client began no other after it: whether
	// the client knows its outcome, and has written it down, the server
	// cannot tell.
	Transaction bool
	// Ended is when the connection ended (QUIT, or cut), zero while it is
	// open.
	Ended time.Time
}

// CutTransactions counts the sessions that ended at since or later with a
// transaction begun (Session.Transaction). Called once a client that was
// killed at since has no connection left (Stats.Open), it bounds from above
// the transactions that client had in progress at its death: each
// connection's last one, and no earlier one of it, since the client had
// begun another after those. A session that ended with QUIT just after
// since, or that sat idle with its last outcome long written, is counted
// too: the bound is loose, never short.
func (s *Server) CutTransactions(since time.Time) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, x := range s.sessions {
		if x.Transaction && !x.Ended.Before(since) {
			n++
		}
	}
	return n
}

// Sessions are the sessions that greeted so far, in order; a connection
// refused by WithMaxConnections or held by WithDead has none.
func (s *Server) Sessions() []Session {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Session, len(s.sessions))
	for i, x := range s.sessions {
		out[i] = *x
	}
	return out
}

// Helos are the distinct names clients gave in EHLO, in the order first
// seen.
func (s *Server) Helos() []string {
	var names []string
	for _, x := range s.Sessions() {
		if !slices.Contains(names, x.Helo) {
			names = append(names, x.Helo)
		}
	}
	return names
}
