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
// slow down, not that its TLS failed. Nor is a server whose TLS failed
// when the delivery's policy requires verified TLS (spec.gate): its mail
// never goes in clear (RFC 8461 §5, RFC 8689 §4.2.1), and the failure is
// returned (fault) for the gate to refuse the host. Under such a policy
// the memory is not consulted either: TLS is tried every time.
func (e *engine) open(ctx context.Context, host, addr string, spec dialSpec) (*client, status, *tlsFault) {
	fallback := e.tlsFailures != nil && !spec.gate.strict()
	plain := fallback && e.tlsFailures.failed(addr)
	c, why, fault := e.connect(ctx, host, addr, plain, spec)
	if c != nil && plain {
		c.tlsFailure = mailroom.TLSFailValidation
		c.tlsDetail = "TLS failed within the last hour; session in clear without STARTTLS"
	}
	if c != nil || fault == nil || !fallback || ctx.Err() != nil || why.Reason == mailroom.DeferThrottled {
		return c, why, fault
	}
	e.tlsFailures.remember(addr)
	c, why, _ = e.connect(ctx, host, addr, true, spec)
	if c != nil {
		c.tlsFailure, c.tlsDetail = mailroom.TLSFailValidation, "TLS failed, session in clear: "+fault.detail
	}
	return c, why, nil
}
