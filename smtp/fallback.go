package smtp

import (
	"context"

	"github.com/mailroom/mailroom"
)

// open makes a session with addr for mail to host (see connect).
//
// Where the engine falls back to clear text (Direct), a server whose TLS
// fails is dialled again at the same address and the session goes on
// without STARTTLS, as Postfix ("may" level) and mox do: opportunistic
// TLS puts communication first and must never stop mail that would flow
// in clear (RFC 7435 §3), and RFC 3207 §4 and §4.1 leave it to the client
// whether the privacy it got is enough to go on. Deferring instead would
// retry such a host for the whole retry window and then fail the mail.
// The failure is remembered for a while (tlsMemory), so that the
// next sessions to that server go in clear at once instead of paying a
// failing handshake and a second connection each time.
//
// A receiver that throttles (why.Reason) is not dialled again: it said to
// slow down, not that its TLS failed.
func (e *engine) open(ctx context.Context, host, addr string, spec dialSpec) (*client, status) {
	fallback := e.tlsFailures != nil
	plain := fallback && e.tlsFailures.failed(addr)
	c, why, tlsFailed := e.connect(ctx, host, addr, plain, spec)
	if c != nil || !tlsFailed || !fallback || ctx.Err() != nil || why.Reason == mailroom.DeferThrottled {
		return c, why
	}
	e.tlsFailures.remember(addr)
	c, why, _ = e.connect(ctx, host, addr, true, spec)
	return c, why
}
