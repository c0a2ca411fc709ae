package smtp

import (
	"encoding/base64"
	"strings"

	"github.com/emersion/go-sasl"
)

// authenticate runs AUTH (RFC 4954 §4) with a SASL client: the initial
// response goes with the command, and challenges (334) are answered until
// the server says 235. A refusal (535 for wrong credentials) is a problem
// of configuration, not of the recipients: it is deferred, so that nothing
// is lost while the operator fixes it. No error text carries the
// credentials: only the server's replies are quoted.
func (c *client) authenticate(a sasl.Client) (status, bool) {
	mech, ir, err := a.Start()
	if err != nil {
		return deferred(enhSecurity, "AUTH with %s: %v", c.host, err), false
	}
	if !c.offersAuth(mech) {
		return deferred(enhSecurity, "%s does not offer AUTH %s", c.host, mech), false
	}
	cmd := "AUTH " + mech
	if ir != nil {
		// RFC 4954 §4: an empty initial response is sent as "=".
		cmd += " " + encodeSASL(ir)
	}
	r, err := c.cmd("%s", cmd)
	for err == nil && r.Code == 334 {
		challenge, derr := base64.StdEncoding.DecodeString(strings.Join(r.lines, ""))
		var resp []byte
		if derr == nil {
			resp, derr = a.Next(challenge)
		}
		if derr != nil {
			// RFC 4954 §4: "*" cancels the exchange.
			r, err = c.cmd("*")
			if err == nil {
				return deferred(enhSecurity, "AUTH with %s cancelled: %v", c.host, derr), false
			}
			break
		}
		r, err = c.cmd("%s", encodeSASL(resp))
	}
	if err != nil {
		return c.broken("AUTH", err), false
	}
	if r.Code != 235 {
		st := r.status().asDeferred()
		if r.Code == 535 {
			st.Response += " (the relay refused the configured credentials)"
		}
		return st, false
	}
	return status{}, true
}

// offersAuth reports whether the EHLO reply listed mech under AUTH.
func (c *client) offersAuth(mech string) bool {
	params, ok := c.ext["AUTH"]
	if !ok {
		return false
	}
	for _, m := range strings.Fields(params) {
		if strings.EqualFold(m, mech) {
			return true
		}
	}
	return false
}

func encodeSASL(b []byte) string {
	if len(b) == 0 {
		return "="
	}
	return base64.StdEncoding.EncodeToString(b)
}
