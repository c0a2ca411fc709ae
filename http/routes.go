package http

import (
	"net/http"
	"slices"
	"strings"

	"github.com/mailroom/mailroom"
)

// methods maps HTTP methods to the handlers of one route.
type methods map[string]http.HandlerFunc

// routes registers every route of the API. Each path is registered once,
// with its methods, so that a known path with an unknown method answers 405
// with Allow, and anything else falls through to a JSON 404.
func (s *Server) routes() http.Handler {
	mux := http.NewServeMux()
	handle := func(pattern string, ms methods) { mux.Handle(pattern, route(pattern, ms)) }

	handle("/healthz", methods{"GET": s.getHealth})
	handle("/readyz", methods{"GET": s.getReady})
	handle("/v1/openapi.json", methods{"GET": s.getOpenAPI})

	handle("/v1/api-keys", methods{
		"GET":  s.authed(mailroom.ScopeKeys, s.listAPIKeys),
		"POST": s.authed(mailroom.ScopeKeys, s.createAPIKey),
	})
	// More specific than {keyId} (key ids are 16 characters), and open to
	// any scope: a client learns what its key may do.
	handle("/v1/api-keys/current", methods{"GET": s.authed(mailroom.ScopeAny, s.currentAPIKey)})
	handle("/v1/api-keys/{keyId}", methods{
		"GET":    s.authed(mailroom.ScopeKeys, s.getAPIKey),
		"DELETE": s.authed(mailroom.ScopeKeys, s.revokeAPIKey),
	})

	// The audit log is the administrator's, as the keys are.
	handle("/v1/audit-log", methods{"GET": s.authed(mailroom.ScopeKeys, s.listAuditLog)})

	handle("/v1/domains", methods{
		"GET":  s.authed(mailroom.ScopeDomains, s.listDomains),
		"POST": s.authed(mailroom.ScopeDomains, s.createDomain),
	})
	handle("/v1/domains/{domain}", methods{
		"GET":    s.authed(mailroom.ScopeDomains, s.getDomain),
		"PATCH":  s.authed(mailroom.ScopeDomains, s.updateDomain),
		"DELETE": s.authed(mailroom.ScopeDomains, s.deleteDomain),
	})
	handle("/v1/domains/{domain}/verify", methods{"POST": s.authed(mailroom.ScopeDomains, s.verifyDomain)})
	handle("/v1/domains/{domain}/dkim/rotate", methods{"POST": s.authed(mailroom.ScopeDomains, s.rotateDomainDKIM)})

	handle("/v1/templates", methods{
		"GET":  s.authed(mailroom.ScopeTemplates, s.listTemplates),
		"POST": s.authed(mailroom.ScopeTemplates, s.createTemplate),
	})
	handle("/v1/templates/{template}", methods{
		"GET":    s.authed(mailroom.ScopeTemplates, s.getTemplate),
		"PUT":    s.authed(mailroom.ScopeTemplates, s.updateTemplate),
		"DELETE": s.authed(mailroom.ScopeTemplates, s.deleteTemplate),
	})
	handle("/v1/templates/{template}/versions", methods{"GET": s.authed(mailroom.ScopeTemplates, s.listTemplateVersions)})
	handle("/v1/templates/{template}/versions/{version}", methods{"GET": s.authed(mailroom.ScopeTemplates, s.getTemplateVersion)})
	handle("/v1/templates/{template}/render", methods{"POST": s.authed(mailroom.ScopeTemplates, s.renderTemplate)})

	handle("/v1/send", methods{"POST": s.authed(mailroom.ScopeSend, s.send)})
	handle("/v1/send/batch", methods{"POST": s.authed(mailroom.ScopeSend, s.sendBatch)})
	handle("/v1/scheduled", methods{"GET": s.authed(mailroom.ScopeSend, s.listScheduled)})
	handle("/v1/scheduled/{messageId}", methods{
		"PATCH":  s.authed(mailroom.ScopeSend, s.rescheduleMessage),
		"DELETE": s.authed(mailroom.ScopeSend, s.cancelMessage),
	})
	handle("/v1/messages", methods{"GET": s.authed(mailroom.ScopeSend, s.listMessages)})
	handle("/v1/messages/{messageId}", methods{"GET": s.authed(mailroom.ScopeSend, s.getMessage)})
	handle("/v1/messages/{messageId}/raw", methods{"GET": s.authed(mailroom.ScopeSend, s.getRawMessage)})
	handle("/v1/suppressions", methods{
		"GET":  s.authed(mailroom.ScopeSend, s.listSuppressions),
		"POST": s.authed(mailroom.ScopeSend, s.addSuppression),
	})
	handle("/v1/suppressions/{address}", methods{
		"GET":    s.authed(mailroom.ScopeSend, s.getSuppression),
		"DELETE": s.authed(mailroom.ScopeSend, s.deleteSuppression),
	})

	handle("/v1/received", methods{"GET": s.authed(mailroom.ScopeReceive, s.listReceived)})
	handle("/v1/received/{id}", methods{"GET": s.authed(mailroom.ScopeReceive, s.getReceived)})
	handle("/v1/received/{id}/raw", methods{"GET": s.authed(mailroom.ScopeReceive, s.getReceivedRaw)})
	handle("/v1/received/{id}/attachments/{attachmentId}", methods{"GET": s.authed(mailroom.ScopeReceive, s.getReceivedAttachment)})

	handle("/v1/webhooks", methods{
		"GET":  s.authed(mailroom.ScopeWebhooks, s.listWebhooks),
		"POST": s.authed(mailroom.ScopeWebhooks, s.createWebhook),
	})
	handle("/v1/webhooks/{id}", methods{
		"GET":    s.authed(mailroom.ScopeWebhooks, s.getWebhook),
		"PATCH":  s.authed(mailroom.ScopeWebhooks, s.updateWebhook),
		"DELETE": s.authed(mailroom.ScopeWebhooks, s.deleteWebhook),
	})
	handle("/v1/webhooks/{id}/rotate-secret", methods{"POST": s.authed(mailroom.ScopeWebhooks, s.rotateWebhookSecret)})
	handle("/v1/webhooks/{id}/deliveries", methods{"GET": s.authed(mailroom.ScopeWebhooks, s.listWebhookAttempts)})
	handle("/v1/webhooks/{id}/test", methods{"POST": s.authed(mailroom.ScopeWebhooks, s.testWebhook)})
	// The events are the log's as much as the webhooks': a sender reads
	// them with its send key, a consumer catching up with its webhooks key.
	handle("/v1/events", methods{"GET": s.authedEither(mailroom.ScopeSend, mailroom.ScopeWebhooks, s.listEvents)})
	handle("/v1/events/{eventId}/replay", methods{"POST": s.authed(mailroom.ScopeWebhooks, s.replayEvent)})

	// No key: the token in the path is the credential (docs/api.md
	// "Mail coming back").
	handle("/v1/unsubscribe/{token}", methods{"GET": s.getUnsubscribe, "POST": s.postUnsubscribe})
	// No key either: the tracked copies' pixel and links (docs/api.md
	// "Engagement tracking"), outside /v1 so that their addresses stay
	// short, and claimed here before Resend's routes and the dashboard.
	// The pixel takes any path under /t/o/ (none, or several segments, as
	// a mail client that mangled the address asks for): it answers the
	// image whatever comes, and only a token that opens is recorded.
	handle("/t/o/{token...}", methods{"GET": s.getTrackedOpen})
	handle("/t/c/{token}", methods{"GET": s.getTrackedClick})

	// What no route above claims, outside the API's /v1 tree: Resend's
	// routes for a request that is the API's (forResend), the
	// dashboard's pages and files for browser navigation (docs/api.md
	// "Dashboard"), so that /domains is both; a JSON 404 otherwise.
	rs := s.resendRoutes()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v1" || strings.HasPrefix(r.URL.Path, "/v1/") {
			writeError(w, r, mailroom.Errorf(mailroom.ECodeNotFound, "No route %s %s.", r.Method, r.URL.Path))
			return
		}
		if forResend(r) || s.Dashboard == nil {
			rs.ServeHTTP(w, r)
			return
		}
		requestInfoFrom(r.Context()).route = "dashboard"
		s.Dashboard.ServeHTTP(w, r)
	})
	return leadingSlashes(wellFormed(mux))
}

// route dispatches on the method, answering 405 with Allow for the others.
func route(pattern string, ms methods) http.Handler {
	allowed := make([]string, 0, len(ms)+1)
	for m := range ms {
		allowed = append(allowed, m)
	}
	if _, ok := ms["GET"]; ok {
		allowed = append(allowed, "HEAD")
	}
	slices.Sort(allowed)
	allow := strings.Join(allowed, ", ")
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requestInfoFrom(r.Context()).route = pattern
		m := r.Method
		if m == "HEAD" {
			m = "GET"
		}
		h, ok := ms[m]
		if !ok {
			w.Header().Set("Allow", allow)
			writeError(w, r, mailroom.Errorf(mailroom.ECodeMethodNotAllowed, "%s is not allowed on %s; use %s.", r.Method, pattern, allow))
			return
		}
		h(w, r)
	})
}

// leadingSlashes routes a path outside /v1 that starts with several
// slashes as if it started with one (resendPath): Resend's Node SDK makes
// //emails from a base URL that ends in "/". /v1's paths keep the rule
// that an empty segment is no route (wellFormed).
func leadingSlashes(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if p := resendPath(r.URL.Path); p != r.URL.Path && p != "/" && p != "/v1" && !strings.HasPrefix(p, "/v1/") {
			r2 := *r
			u := *r.URL
			u.Path, u.RawPath = p, ""
			if r.URL.RawPath != "" {
				u.RawPath = resendPath(r.URL.RawPath)
			}
			r2.URL = &u
			r = &r2
		}
		next.ServeHTTP(w, r)
	})
}
