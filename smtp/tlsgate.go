package smtp

import (
	"context"
	"net"
	"strings"
	"time"

	"github.com/mailroom/mailroom"
)

// enhTLSRequired is the enhanced code of a recipient deferred because its
// delivery's TLS policy found no MX host that qualifies (reason
// tls_required): 4.7.5, "cryptographic failure" (RFC 3463 §3.8), as
// Postfix answers a TLS policy it cannot meet. It has no reply code (0),
// so it is never taken for a receiver's throttle.
const enhTLSRequired = "4.7.5"

// tlsGate is one delivery attempt's TLS requirement (docs/api.md "TLS
// policy": the strongest of REQUIRETLS, the recipient domain's MTA-STS
// policy and the sending domain's tls) and what it met on the way: which
// MX hosts and sessions it refused and why, for the verdict when none
// qualified. It tells the TLSObserver of every session the delivery
// decides on (RFC 8460 §4.4). A delivery runs its attempt on one
// goroutine, so the gate needs no lock. A nil gate (Relay) requires
// nothing and tells no one.
type tlsGate struct {
	req      mailroom.TLSRequirement
	domain   string
	observer mailroom.TLSObserver
	now      func() time.Time
	// lookupFailed says the domain announces an MTA-STS policy that could
	// not be had: a REQUIRETLS delivery is then deferred, not bounced,
	// since a later attempt may fetch it.
	lookupFailed bool
	// refusals are the hosts refused, each "host: why"; other says some
	// host failed for another reason (no answer, a 4xx greeting): it may
	// qualify later, so the verdict is a deferral, never a bounce.
	refusals []string
	other    bool
	otherWhy status
}

// gate looks up the recipient domain's MTA-STS policy (RFC 8461 §5; again
// at every attempt after a failure, as docs/api.md has it) and makes the
// delivery's gate. A lookup that failed is reported: the delivery goes on
// as if the domain had no policy (RFC 8461 §5), with the failure counted
// for TLS-RPT (RFC 8460 §4.3.2).
func (d *Direct) gate(ctx context.Context, del *mailroom.Delivery, domain string) *tlsGate {
	g := &tlsGate{domain: domain, observer: d.TLSObserver, now: d.now}
	var sts *mailroom.MTASTSPolicy
	if d.MTASTS != nil {
		lookup := d.MTASTS.Lookup(ctx, domain, !del.FirstAttempt)
		sts = lookup.Policy
		if lookup.Failure != "" {
			g.lookupFailed = true
			g.req = mailroom.TLSRequirementFor(del.RequireTLS, del.TLSMode, sts)
			// No session: Outcome stays empty.
			g.observe(mailroom.TLSSessionResult{Failure: lookup.Failure, Detail: lookup.Detail})
			return g
		}
	}
	g.req = mailroom.TLSRequirementFor(del.RequireTLS, del.TLSMode, sts)
	return g
}

func (d *Direct) now() time.Time {
	if d.Now != nil {
		return d.Now()
	}
	return time.Now()
}

// strict says the delivery needs verified TLS: no session in clear, no
// plaintext retry after a failed handshake.
func (g *tlsGate) strict() bool { return g != nil && g.req.Verified }

// allows says whether host may be used at all (an enforced MTA-STS
// policy's mx patterns, RFC 8461 §4.1; a REQUIRETLS delivery's validated
// MX).
func (g *tlsGate) allows(host string) bool {
	return g == nil || g.req.MX == nil || g.req.MX(host)
}

// validatedMX says whether the requirement's MX comes from an MTA-STS
// policy in force; a REQUIRETLS delivery without one has no validated MX
// (RFC 8689 §4.2.1; Mailroom does not check DNSSEC).
func (g *tlsGate) validatedMX() bool {
	return g.req.STS != nil && g.req.STS.Mode == mailroom.MTASTSEnforce
}

// fits says whether a pooled session may carry the delivery: its host is
// allowed, and its TLS is what the requirement needs. One that does not
// is left in the pool for deliveries it does fit.
func (g *tlsGate) fits(c *client) bool {
	return g == nil || (g.allows(c.host) && g.shortfall(c) == "")
}

// shortfall says why c does not meet the requirement, "" when it does.
func (g *tlsGate) shortfall(c *client) string {
	switch {
	case !g.req.Verified:
		return ""
	case !c.tls, !c.verified:
		if c.tlsDetail == "" {
			return "no verified TLS"
		}
		return c.tlsDetail
	case g.req.RequireTLS:
		// RFC 8689 §4.2.1: the EHLO reply after STARTTLS must offer it.
		if _, ok := c.ext["REQUIRETLS"]; !ok {
			return "does not offer REQUIRETLS (RFC 8689)"
		}
	}
	return ""
}

// admit decides whether the delivery may go over session c, new or
// pooled, and tells the observer. A session refused is to be closed (QUIT)
// before MAIL: nothing of the message is sent to it.
func (g *tlsGate) admit(c *client) (status, bool) {
	if g == nil {
		return status{}, true
	}
	r := mailroom.TLSSessionResult{MX: c.host, ReceivingIP: ipOf(c.raw.RemoteAddr()), SendingIP: ipOf(c.raw.LocalAddr()),
		Failure: c.tlsFailure, Detail: c.tlsDetail}
	if short := g.shortfall(c); short != "" {
		if r.Failure == "" {
			// The TLS was good; the host lacks REQUIRETLS, which TLS-RPT
			// has no result type for.
			r.Detail = short
		}
		r.Outcome = mailroom.TLSRefused
		g.observe(r)
		return g.refuse(c.host, short), false
	}
	if r.Failure == "" && g.req.STS != nil && !g.req.STS.MatchesMX(c.host) {
		// A testing policy's MX patterns do not name this host: delivered
		// as usual, reported (RFC 8461 §5, RFC 8460 §4.3).
		r.Failure, r.Detail = mailroom.TLSFailValidation, "MX host does not match the MTA-STS policy"
	}
	switch {
	case c.verified:
		r.Outcome = mailroom.TLSVerified
	case c.tls:
		r.Outcome = mailroom.TLSUnverified
	default:
		r.Outcome = mailroom.TLSPlaintext
	}
	g.observe(r)
	return status{}, true
}

// failedTLS refuses a host whose TLS failed (fault), under a strict
// requirement: no plaintext retry.
func (g *tlsGate) failedTLS(host, addr string, fault *tlsFault) status {
	receiving, _, _ := net.SplitHostPort(addr)
	g.observe(mailroom.TLSSessionResult{MX: host, ReceivingIP: receiving, SendingIP: fault.sendingIP,
		Outcome: mailroom.TLSRefused, Failure: mailroom.TLSFailValidation, Detail: fault.detail})
	return g.refuse(host, "TLS failed: "+fault.detail)
}

// rejectMX refuses a host the requirement's MX does not allow; nothing is
// dialled. With an enforced MTA-STS policy the host is reported (its MX
// record disagrees with the policy); a REQUIRETLS delivery without a
// policy has no validated MX, which is the sender's rule, not a failure
// of the receiver's, and is not.
func (g *tlsGate) rejectMX(host string) status {
	if !g.validatedMX() {
		return g.refuse(g.domain, "no MTA-STS policy in enforce mode validates its MX hosts, as REQUIRETLS needs (RFC 8689 §4.2.1)")
	}
	g.observe(mailroom.TLSSessionResult{MX: host, Outcome: mailroom.TLSRefused, Failure: mailroom.TLSFailValidation,
		Detail: "MX host does not match the MTA-STS policy"})
	return g.refuse(host, "not an MX host of the MTA-STS policy (RFC 8461 §4.1)")
}

// refuse records a refusal, once per text, and returns the deferral it
// stands for alone.
func (g *tlsGate) refuse(host, why string) status {
	line := host + ": " + why
	if !strings.Contains(strings.Join(g.refusals, "\n")+"\n", line+"\n") {
		g.refusals = append(g.refusals, line)
	}
	st := deferred(enhTLSRequired, "%s", line)
	st.Reason = mailroom.DeferTLSRequired
	return st
}

// failedOther notes a host that failed for a reason other than TLS (why).
func (g *tlsGate) failedOther(why status) {
	if g != nil {
		g.other, g.otherWhy = true, why
	}
}

// verdict is the recipients' result when no session carried the
// delivery; why is the last failure, returned as it is when the
// requirement refused nothing. Where the requirement refused a
// host, the deferral's reason is tls_required and its text names each
// host refused and why. A REQUIRETLS delivery for which every host was
// refused, none failed otherwise, and the policy was not missing for a
// failed lookup, bounces: 550 5.7.30 (RFC 8689 §5) instead of waiting
// for a path that will not come.
func (g *tlsGate) verdict(why status) status {
	if g == nil || len(g.refusals) == 0 || why.Reason == mailroom.DeferThrottled {
		// A throttle keeps its meaning: the site's next place.
		return why
	}
	text := strings.Join(g.refusals, "; ")
	if g.req.RequireTLS && !g.other && !g.lookupFailed {
		return local(550, mailroom.RequireTLSBounce, "REQUIRETLS: no MX host of %s qualifies: %s", g.domain, text)
	}
	if g.other {
		text += "; " + g.otherWhy.Response
	}
	st := deferred(enhTLSRequired, "the %s TLS policy requires verified TLS, and no MX host of %s gave it: %s", g.req.Policy, g.domain, text)
	st.Reason = mailroom.DeferTLSRequired
	return st
}

// observe tells the observer of r, with the delivery's domain and policy.
func (g *tlsGate) observe(r mailroom.TLSSessionResult) {
	if g.observer == nil {
		return
	}
	r.Domain, r.Policy, r.STS, r.At = g.domain, g.req.Policy, g.req.STS, g.now()
	g.observer.ObserveTLS(r)
}

// info is the TLS of session c for the delivery's results, nil in clear.
func (g *tlsGate) info(c *client) *mailroom.TLSInfo {
	if g == nil || !c.tls {
		return nil
	}
	return mailroom.NewTLSInfo(c.tlsState, c.verified, g.req.Policy)
}
