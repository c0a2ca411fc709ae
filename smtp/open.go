package smtp

import (
	"context"
	"crypto/tls"
	"net"
	"strings"

	"github.com/mailroom/mailroom"
)

// connect dials addr and readies a session for mail to host: greeting,
// EHLO, TLS, AUTH, without trying STARTTLS when plain. Any failure is
// returned as a deferral: it concerns this host and this session, not the
// recipients, so the next MX host may do better and a later attempt may
// too; a throttle (spec.throttled) is marked as such (why.Reason), once the
// connection is closed. fault is set when the session failed because the
// server's TLS did (see open).
func (e *engine) connect(ctx context.Context, host, addr string, plain bool, spec dialSpec) (c *client, why status, fault *tlsFault) {
	dctx, cancel := context.WithTimeout(ctx, spec.dialTimeout)
	raw, err := e.dial(dctx, spec.source.IP, addr)
	cancel()
	if err != nil {
		return nil, deferred(enhNoAnswer, "connecting to %s [%s]%s: %v", host, addr, fromSource(spec.source.IP), err), nil
	}
	c = newClient(raw, host, addr, e.cfg.commandTimeout, e.cfg.dataTimeout)
	c.ehlo = spec.ehlo
	stop := context.AfterFunc(ctx, func() { _ = raw.Close() })
	why, tlsFailed, ok := e.handshake(ctx, c, plain, spec)
	if !stop() && ok {
		ok = false
		why = deferred(enhBadConnection, "session with %s [%s]: %v", host, addr, ctx.Err())
	}
	if !ok {
		c.close()
		if spec.throttled.mark(&why) {
			tlsFailed = false
		}
		if tlsFailed {
			fault = &tlsFault{detail: why.Response, sendingIP: ipOf(raw.LocalAddr())}
		}
		return nil, why, fault
	}
	return c, status{}, nil
}

// tlsFault is a session that failed because the server's TLS did: a
// failed handshake, a 421 instead of TLS, a connection broken at the first
// exchange under TLS.
type tlsFault struct {
	detail    string
	sendingIP string
}

// handshake takes a new connection from TCP to ready-for-MAIL, using
// STARTTLS when the server offers it unless plain.
func (e *engine) handshake(ctx context.Context, c *client, plain bool, spec dialSpec) (why status, tlsFailed, ok bool) {
	if e.cfg.implicitTLS {
		// Only a relay speaks implicit TLS, and it never falls back.
		if why, ok := e.startTLS(ctx, c); !ok {
			return why, false, false
		}
	}
	// RFC 5321 §3.1: the server speaks first.
	c.deadline(spec.greetTimeout)
	greeting, err := c.read()
	if err != nil {
		return c.broken("reading the greeting", err), false, false
	}
	if greeting.Code != 220 {
		// A 554 greeting says this host takes no mail from us now
		// (RFC 5321 §3.1); another host, or later, may.
		return greeting.status().asDeferred(), false, false
	}
	if spec.sites != nil {
		spec.tellConnected(c)
	}
	if why, ok := c.hello(c.ehlo); !ok {
		return why, false, false
	}

	_, offered := c.ext["STARTTLS"]
	if offered && !c.tls && !plain {
		if why, tlsFailed, ok := e.startTLSCommand(ctx, c); !ok {
			return why, tlsFailed, false
		}
	}
	if !offered && !c.tls {
		// RFC 8460 §4.3.1: what TLS-RPT counts, and what a policy that
		// requires TLS refuses (tlsGate).
		c.tlsFailure, c.tlsDetail = mailroom.TLSFailStartTLSNotSupported, "does not offer STARTTLS"
	}
	if e.cfg.requireTLS && !c.tls {
		return deferred(enhSecurity, "%s does not offer STARTTLS; credentials are never sent in clear", c.host), false, false
	}

	if e.cfg.auth != nil {
		if why, ok := c.authenticate(e.cfg.auth()); !ok {
			return why, false, false
		}
	}
	return status{}, false, true
}

// startTLSCommand upgrades the session with STARTTLS (RFC 3207 §4) and
// greets again. When the server declines, the session goes on in clear.
// tlsFailed reports a failure of the server's TLS that leaves this
// connection unusable: a 421 instead of TLS, data sent after the 220, a
// failed handshake, or a connection that breaks at the first exchange
// under TLS. A connection lost before the server answered STARTTLS is not
// counted: it looks like any network failure, and the attempt is deferred.
func (e *engine) startTLSCommand(ctx context.Context, c *client) (why status, tlsFailed, ok bool) {
	r, err := c.cmd("STARTTLS")
	if err != nil {
		return c.broken("STARTTLS", err), false, false
	}
	switch {
	case r.Code == 220:
	case e.cfg.requireTLS:
		return r.status().asDeferred(), false, false
	case r.closing():
		// The server closes the connection rather than start TLS.
		return r.status().asDeferred(), true, false
	default:
		// The server declined (454, RFC 3207 §4): with opportunistic TLS
		// (RFC 7435) the session goes on in clear, on this connection;
		// a policy that requires TLS refuses it (tlsGate).
		c.tlsFailure = mailroom.TLSFailStartTLSNotSupported
		c.tlsDetail = "refused STARTTLS: " + r.String()
		return status{}, false, true
	}
	// RFC 3207 §4.2 (and CVE-2011-0411): nothing the server sent after its
	// 220 may be read as part of the TLS session.
	if c.r.Buffered() > 0 {
		return deferred(enhSecurity, "%s sent data after its STARTTLS reply", c.host), true, false
	}
	if why, ok := e.startTLS(ctx, c); !ok {
		return why, true, false
	}
	// RFC 3207 §4.2: forget what was said before TLS and greet again.
	if why, ok := c.hello(c.ehlo); !ok {
		// A connection that breaks here (no reply, so no code) is TLS
		// failing too: under TLS 1.3 the client's handshake ends before
		// the server has checked it, and the server's alert arrives with
		// its first record (RFC 8446 §4.4.4, §6.2).
		return why, why.Code == 0, false
	}
	return status{}, false, true
}

// hello introduces us (RFC 5321 §4.1.1.1) and records the extensions the
// server offers; a server that does not know EHLO gets HELO (RFC 5321
// §3.2).
func (c *client) hello(name string) (status, bool) {
	r, err := c.cmd("EHLO %s", name)
	if err != nil {
		return c.broken("EHLO", err), false
	}
	if r.Code == 250 {
		c.ext = parseExtensions(r)
		return status{}, true
	}
	if r.Code/100 != 5 || r.Code == 554 {
		return r.status().asDeferred(), false
	}
	if r, err = c.cmd("HELO %s", name); err != nil {
		return c.broken("HELO", err), false
	}
	if r.Code != 250 {
		return r.status().asDeferred(), false
	}
	c.ext = map[string]string{}
	return status{}, true
}

// parseExtensions reads an EHLO reply: the first line names the server, each
// further line is a keyword and its parameters (RFC 5321 §4.1.1.1). Our
// reply type joined the lines, so this works from the raw reply again.
func parseExtensions(r reply) map[string]string {
	ext := map[string]string{}
	for i, line := range r.lines {
		if i == 0 {
			continue
		}
		keyword, params, _ := strings.Cut(strings.TrimSpace(line), " ")
		ext[strings.ToUpper(keyword)] = params
	}
	return ext
}

// startTLS wraps the connection in TLS, for STARTTLS or implicit TLS.
func (e *engine) startTLS(ctx context.Context, c *client) (status, bool) {
	cfg := e.cfg.tlsConfig.Clone()
	if cfg == nil {
		cfg = &tls.Config{}
	}
	if cfg.ServerName == "" {
		// SNI, and the name a verified certificate must hold; crypto/tls
		// checks an IP address against the IP SANs and sends no SNI.
		cfg.ServerName = c.host
	}
	tc := tls.Client(c.raw, cfg)
	hctx, cancel := context.WithTimeout(ctx, c.commandTimeout)
	defer cancel()
	if err := tc.HandshakeContext(hctx); err != nil {
		// The caller decides whether to go on in clear (see open).
		return deferred(enhSecurity, "TLS with %s [%s] failed: %v", c.host, c.addr, err), false
	}
	c.setConn(tc)
	c.tls = true
	c.tlsState = tc.ConnectionState()
	if e.cfg.verifyCerts {
		if err := verifyPeer(c.tlsState, c.host, e.cfg.roots); err != nil {
			c.tlsFailure, c.tlsDetail = certFailure(c.host, err)
		} else {
			c.verified = true
		}
	}
	return status{}, true
}

// broken is the deferral for a session whose connection failed mid-way.
func (c *client) broken(during string, err error) status {
	return deferred(enhBadConnection, "connection to %s [%s] failed during %s: %v", c.host, c.addr, during, err)
}

// ipOf is the IP address of a connection's end, "" when it has none.
func ipOf(a net.Addr) string {
	if tcp, ok := a.(*net.TCPAddr); ok {
		return tcp.IP.String()
	}
	return ""
}
