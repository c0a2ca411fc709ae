package smtptest

import "slices"

// Session is one client's SMTP session, as the server saw it: who
// connected from where, and under which name.
type Session struct {
	// Client is the client's address (host:port).
	Client string
	// Helo is the name it gave in EHLO or HELO (RFC 5321 §4.1.1.1).
	Helo string
	// Messages is how many messages the session delivered.
	Messages int
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
