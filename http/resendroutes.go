package http

import (
	"net/http"
	"strings"

	"github.com/mailroom/mailroom"
)

// resendRoutes are Resend's routes, served at the root of the listener
// (docs/api.md "Moving from Resend"), over the same services as /v1: each
// handler translates Resend's shapes (package resend) and calls the
// service /v1 calls. Errors on them are written in Resend's shape
// (requestInfo.resend).
func (s *Server) resendRoutes() *http.ServeMux {
	mux := http.NewServeMux()
	handle := func(pattern string, ms methods) {
		mux.Handle(pattern, resendDialect(route(pattern, ms)))
	}

	handle("/emails", methods{
		"GET":  s.authed(mailroom.ScopeSend, s.resendListEmails),
		"POST": s.authed(mailroom.ScopeSend, s.resendSendEmail),
	})
	handle("/emails/batch", methods{"POST": s.authed(mailroom.ScopeSend, s.resendSendBatch)})
	handle("/emails/{id}", methods{
		"GET":   s.authed(mailroom.ScopeSend, s.resendGetEmail),
		"PATCH": s.authed(mailroom.ScopeSend, s.resendUpdateEmail),
	})
	handle("/emails/{id}/cancel", methods{"POST": s.authed(mailroom.ScopeSend, s.resendCancelEmail)})

	handle("/domains", methods{
		"GET":  s.authed(mailroom.ScopeDomains, s.resendListDomains),
		"POST": s.authed(mailroom.ScopeDomains, s.resendCreateDomain),
	})
	handle("/domains/{id}", methods{
		"GET":    s.authed(mailroom.ScopeDomains, s.resendGetDomain),
		"PATCH":  s.authed(mailroom.ScopeDomains, s.resendUpdateDomain),
		"DELETE": s.authed(mailroom.ScopeDomains, s.resendDeleteDomain),
	})
	handle("/domains/{id}/verify", methods{"POST": s.authed(mailroom.ScopeDomains, s.resendVerifyDomain)})

	handle("/api-keys", methods{
		"GET":  s.authed(mailroom.ScopeKeys, s.resendListAPIKeys),
		"POST": s.authed(mailroom.ScopeKeys, s.resendCreateAPIKey),
	})
	handle("/api-keys/{id}", methods{"DELETE": s.authed(mailroom.ScopeKeys, s.resendDeleteAPIKey)})

	handle("/webhooks", methods{
		"GET":  s.authed(mailroom.ScopeWebhooks, s.resendListWebhooks),
		"POST": s.authed(mailroom.ScopeWebhooks, s.resendCreateWebhook),
	})
	handle("/webhooks/{id}", methods{
		"GET":    s.authed(mailroom.ScopeWebhooks, s.resendGetWebhook),
		"PATCH":  s.authed(mailroom.ScopeWebhooks, s.resendUpdateWebhook),
		"DELETE": s.authed(mailroom.ScopeWebhooks, s.resendDeleteWebhook),
	})
	handle("/webhooks/{id}/signing-secret/rotate", methods{"POST": s.authed(mailroom.ScopeWebhooks, s.resendRotateWebhookSecret)})

	mux.Handle("/", resendDialect(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		writeError(w, r, mailroom.Errorf(mailroom.ECodeNotFound, "No route %s %s.", r.Method, r.URL.Path))
	})))
	return mux
}

// resendDialect marks the request as one of Resend's routes, so that its
// errors, from the pipeline's (a missing key, a rate limit) to the
// handler's, are written in Resend's shape.
func resendDialect(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requestInfoFrom(r.Context()).resend = true
		next.ServeHTTP(w, r)
	})
}

// forResend says whether a request outside /v1 is the API's (one of
// Resend's routes) rather than the dashboard's: one that carries
// Authorization is (a browser's navigation never does; Resend's Node SDK
// sends no Accept, so Accept cannot decide), and so is one the dashboard
// would refuse anyway (a POST, a PATCH, a DELETE), so that a Resend client
// without a key is told missing_api_key in Resend's shape.
func forResend(r *http.Request) bool {
	return len(r.Header.Values("Authorization")) > 0 || (r.Method != "GET" && r.Method != "HEAD")
}

// resendPath is the path a Resend SDK meant: Node's SDK joins a base URL
// that ends in "/" and a path that starts with one into "//emails".
// Leading slashes are collapsed to one; an empty or dot segment anywhere
// else is still refused (wellFormed).
func resendPath(p string) string {
	if !strings.HasPrefix(p, "//") {
		return p
	}
	return "/" + strings.TrimLeft(p, "/")
}
