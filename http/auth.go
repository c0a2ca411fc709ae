package http

import (
	"context"
	"net"
	"net/http"
	"strings"

	"github.com/mailroom/mailroom"
)

type keyContextKey struct{}

// keyFrom returns the authenticated key of the request.
func keyFrom(ctx context.Context) *mailroom.APIKey {
	k, _ := ctx.Value(keyContextKey{}).(*mailroom.APIKey)
	return k
}

// authed guards a handler: the bearer key must be valid, not revoked,
// within its account's request rate (docs/api.md "Limits") and hold scope, checked in
// that order (docs/api.md "Errors"); then the request's body takes its
// memory from the node's budget (reserveMemory). Only the Authorization header is read: a key in
// the query string or a cookie would end up in proxy logs and browser
// history, so those are not accepted.
func (s *Server) authed(scope mailroom.Scope, next http.HandlerFunc) http.HandlerFunc {
	return s.authedEither(scope, scope, next)
}

// authedEither is authed for a route that either of two scopes opens:
// GET /v1/events serves the sender (the log's events) and the webhook
// consumer catching up (docs/api.md "Webhooks and events").
func (s *Server) authedEither(scope, or mailroom.Scope, next http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		r, release := withBudget(r, s.storageBudget())
		defer release()
		token, err := bearerToken(r.Header.Values("Authorization"))
		if err != nil {
			writeError(w, r, err)
			return
		}
		key, err := s.Auth.Authenticate(r.Context(), token)
		if err != nil {
			writeError(w, r, err)
			return
		}
		requestInfoFrom(r.Context()).keyID = key.KeyID
		if !s.admit(w, r, key.AccountID) {
			return
		}
		if err := requireEither(key, scope, or); err != nil {
			writeError(w, r, err)
			return
		}
		r, releaseMemory, ok := s.reserveMemory(w, r, key.AccountID)
		if !ok {
			return
		}
		defer releaseMemory()
		ctx := context.WithValue(r.Context(), keyContextKey{}, key)
		next(w, r.WithContext(mailroom.WithAuditOrigin(ctx, auditOrigin(r, key))))
	}
}

// auditOrigin is who acts in an authenticated request, for the audit log
// (docs/api.md "Audit log"): the key, the request id the response carries
// (X-Request-Id) and the client address as the server sees it (the
// connection's peer: the API trusts no forwarding header).
func auditOrigin(r *http.Request, key *mailroom.APIKey) mailroom.AuditOrigin {
	ip := r.RemoteAddr
	if host, _, err := net.SplitHostPort(ip); err == nil {
		ip = host
	}
	return mailroom.AuditOrigin{
		Actor:     mailroom.AuditActor{Type: mailroom.AuditByAPIKey, KeyID: key.KeyID},
		RequestID: requestInfoFrom(r.Context()).requestID,
		IP:        ip,
	}
}

// requireEither is mailroom.RequireScope for a route that either of two
// scopes opens.
func requireEither(key *mailroom.APIKey, scope, or mailroom.Scope) error {
	switch err := mailroom.RequireScope(key, scope); {
	case err == nil, or == scope:
		return err
	case mailroom.RequireScope(key, or) == nil:
		return nil
	}
	return mailroom.Errorf(mailroom.ECodeInsufficientScope, "This API key lacks the %q or the %q scope.", scope, or)
}

// bearerToken extracts the token of an "Authorization: Bearer" header (RFC
// 6750 §2.1; the scheme name is case-insensitive, RFC 9110 §11.1).
//
// More than one Authorization field is refused as invalid_api_key, whatever
// the keys: the field is not a list (RFC 9110 §5.3, §11.6.2), so a request
// carrying two is malformed, and taking either one would let whatever adds
// a header on the way (a proxy, a misconfigured client) decide which account
// acts. It is invalid_api_key, not missing_api_key, because keys were sent;
// its message names the cause and says nothing about either key.
func bearerToken(headers []string) (string, error) {
	missing := func(msg string) error { return mailroom.Errorf(mailroom.ECodeMissingAPIKey, "%s", msg) }
	if len(headers) > 1 {
		return "", mailroom.Errorf(mailroom.ECodeInvalidAPIKey, "Send one Authorization header; this request has %d.", len(headers))
	}
	header := ""
	if len(headers) == 1 {
		header = headers[0]
	}
	if header == "" {
		return "", missing("No API key: send it as Authorization: Bearer <key>.")
	}
	scheme, token, _ := strings.Cut(header, " ")
	if !strings.EqualFold(scheme, "Bearer") {
		return "", missing("Only Authorization: Bearer <key> is accepted.")
	}
	token = strings.TrimSpace(token)
	if token == "" {
		return "", missing("No API key: send it as Authorization: Bearer <key>.")
	}
	return token, nil
}
