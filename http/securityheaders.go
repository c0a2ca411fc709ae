package http

import "net/http"

// hstsValue is Strict-Transport-Security (RFC 6797): browsers that have
// seen it reach this host over HTTPS only, for a year from each answer,
// and never offer to click through a certificate warning (§12.1).
// Without includeSubDomains: the service answers for the one name it is
// reached at, not for names under it, which other servers may answer on
// plain HTTP (§11.4 warns what binding them does); an operator who wants
// the whole domain pinned (or preloaded) sets that where the domain's apex
// is served.
const hstsValue = "max-age=31536000"

// apiCSP is the Content-Security-Policy of every answer that sets none of
// its own (the JSON API): a JSON body loads nothing, runs nothing and may
// not be framed, should a browser ever render it. The dashboard and the
// unsubscribe pages set their own policies.
const apiCSP = "default-src 'none'; frame-ancestors 'none'"

// setSecurityHeaders sets, before the handler runs, the header fields a
// browser should apply to every answer, so that no route can forget one;
// a handler that needs another value (the dashboard's page policy, the
// OpenAPI document's caching) sets its own over it.
//
//   - Strict-Transport-Security, only on a TLS connection (RFC 6797 §7.2
//     forbids it in clear) and not when hsts is false (serve --dev, whose
//     self-signed certificate for localhost a browser would otherwise hold
//     the developer to for a year).
//   - X-Content-Type-Options: nosniff, so that a body is never read as
//     anything but its Content-Type (a JSON error echoing input as HTML).
//   - Content-Security-Policy and X-Frame-Options (for browsers without
//     frame-ancestors): nothing loaded, no framing (clickjacking).
//   - Referrer-Policy: no-referrer, so that no address of the service (an
//     unsubscribe token is in one) reaches another site.
//   - Cross-Origin-Opener-Policy and Cross-Origin-Resource-Policy
//     same-origin: no other site's window keeps a handle on ours, and no
//     other site may embed an answer as an image or script (Spectre-class
//     reads). Cross-Origin-Embedder-Policy is left out: it would block the
//     remote images a mail preview loads on request.
//   - Cache-Control: no-store, since answers carry account data and, once,
//     a whole API key: no shared or browser cache keeps them.
func setSecurityHeaders(h http.Header, r *http.Request, hsts bool) {
	if hsts && r.TLS != nil {
		h.Set("Strict-Transport-Security", hstsValue)
	}
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Content-Security-Policy", apiCSP)
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cross-Origin-Opener-Policy", "same-origin")
	h.Set("Cross-Origin-Resource-Policy", "same-origin")
	h.Set("Cache-Control", "no-store")
}
