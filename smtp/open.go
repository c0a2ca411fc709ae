package smtp

import (
	"context"
	"crypto/tls"
	"strings"
)

// open dials addr and readies a session for mail to host: greeting, EHLO,
// TLS, AUTH. Any failure is returned as a deferral: it concerns this host
// and this session, not the recipients, so the next MX host may do better
// and a later attempt may too.
func (e *engine) open(ctx context.Context, host, addr string) (*client, status) {
	dctx, cancel := context.WithTimeout(ctx, e.cfg.dialTimeout)
	raw, err := e.cfg.dialer.DialContext(dctx, "tcp", addr)
	cancel()
	if err != nil {
		return nil, deferred(enhNoAnswer, "connecting to %s [%s]: %v", host, addr, err)
	}
	c := newClient(raw, host, addr, e.cfg.commandTimeout, e.cfg.dataTimeout)
	stop := context.AfterFunc(ctx, func() { _ = raw.Close() })
	why, ok := e.handshake(ctx, c)
	if !stop() && ok {
		ok = false
		why = deferred(enhBadConnection, "session with %s [%s]: %v", host, addr, ctx.Err())
	}
	if !ok {
		c.close()
		return nil, why
	}
	return c, status{}
}

// handshake takes a new connection from TCP to ready-for-MAIL.
func (e *engine) handshake(ctx context.Context, c *client) (status, bool) {
	if e.cfg.implicitTLS {
		if why, ok := e.startTLS(ctx, c); !ok {
			return why, false
		}
	}
	// RFC 5321 §3.1: the server speaks first.
	c.deadline(c.commandTimeout)
	greeting, err := c.read()
	if err != nil {
		return c.broken("reading the greeting", err), false
	}
	if greeting.Code != 220 {
		// A 554 greeting says this host takes no mail from us now
		// (RFC 5321 §3.1); another host, or later, may.
		return greeting.status().asDeferred(), false
	}
	if why, ok := c.hello(e.cfg.hostname); !ok {
		return why, false
	}

	if !c.tls {
		if _, offered := c.ext["STARTTLS"]; offered {
			r, err := c.cmd("STARTTLS")
			if err != nil {
				return c.broken("STARTTLS", err), false
			}
			switch {
			case r.Code == 220:
				// RFC 3207 §4.2 (and CVE-2011-0411): nothing the server
				// sent after its 220 may be read as part of the TLS session.
				if c.r.Buffered() > 0 {
					return deferred(enhSecurity, "%s sent data after its STARTTLS reply", c.host), false
				}
				if why, ok := e.startTLS(ctx, c); !ok {
					return why, false
				}
				// RFC 3207 §4.2: forget what was said before TLS and
				// greet again.
				if why, ok := c.hello(e.cfg.hostname); !ok {
					return why, false
				}
			case e.cfg.requireTLS:
				return r.status().asDeferred(), false
			}
			// Otherwise the server declined (454, RFC 3207 §4): with
			// opportunistic TLS (RFC 7435) the session goes on in clear.
		}
	}
	if e.cfg.requireTLS && !c.tls {
		return deferred(enhSecurity, "%s does not offer STARTTLS; credentials are never sent in clear", c.host), false
	}

	if e.cfg.auth != nil {
		if why, ok := c.authenticate(e.cfg.auth()); !ok {
			return why, false
		}
	}
	return status{}, true
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
		// No fall-back to clear text on the same host: the attempt is
		// deferred, and the failure is in the log for the operator.
		return deferred(enhSecurity, "TLS with %s [%s] failed: %v", c.host, c.addr, err), false
	}
	c.setConn(tc)
	c.tls = true
	return status{}, true
}

// broken is the deferral for a session whose connection failed mid-way.
func (c *client) broken(during string, err error) status {
	return deferred(enhBadConnection, "connection to %s [%s] failed during %s: %v", c.host, c.addr, during, err)
}
