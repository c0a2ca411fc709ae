package http

import (
	"errors"
	"net/http"
	"time"

	"github.com/mailroom/mailroom"
	"github.com/mailroom/mailroom/client/api"
	"github.com/mailroom/mailroom/webhook"
)

// toWebhook shows an endpoint as it stands at now (docs/api.md "Webhooks
// and events"): never its secret, which only the create and a rotation
// show.
func toWebhook(e *mailroom.WebhookEndpoint, now time.Time) api.Webhook {
	out := api.Webhook{
		ID: e.ID, URL: e.URL, Description: e.Description, Events: make([]api.EventType, len(e.Events)), Enabled: e.Enabled,
		CreatedAt: wireTime(e.CreatedAt), UpdatedAt: wireTime(e.UpdatedAt),
	}
	out.Format = api.WebhookFormat(e.Format)
	if e.Format == "" {
		out.Format = api.WebhookFormatMailroom
	}
	for i, typ := range e.Events {
		out.Events[i] = api.EventType(typ)
	}
	if !e.Enabled {
		reason := e.DisabledReason
		if reason == "" {
			reason = "disabled"
		}
		out.DisabledReason = &reason
	}
	// The same rule as webhook.Service.SigningKeys: the previous secret
	// signs until PreviousSecretUntil.
	if e.PreviousSecretSigns(now) {
		out.SecretRotation = &api.SecretRotation{PreviousSecretExpiresAt: wireTime(*e.PreviousSecretUntil)}
	}
	return out
}

// toWebhookSecret answers a rotation: the new secret, shown this once, and
// until when the one it replaced keeps signing, which a rotation always
// sets (mailroom.WebhookStore.RotateWebhookSecret).
func toWebhookSecret(secret string, e *mailroom.WebhookEndpoint) (api.WebhookSecret, error) {
	if e.PreviousSecretUntil == nil {
		return api.WebhookSecret{}, errors.New("the rotated endpoint " + e.ID + " has no previous secret's expiry")
	}
	return api.WebhookSecret{Secret: secret, PreviousSecretExpiresAt: wireTime(*e.PreviousSecretUntil)}, nil
}

// toWebhookAttempt shows one attempt of GET /v1/webhooks/{id}/deliveries.
func toWebhookAttempt(a *mailroom.WebhookAttempt) api.WebhookAttempt {
	return api.WebhookAttempt{
		ID: a.ID, EventID: a.EventID, Type: api.EventType(a.EventType), Attempt: a.Attempt, Status: api.AttemptStatus(a.Status),
		StatusCode: optInt(a.StatusCode), Error: optString(a.Error), DurationMs: a.Duration.Milliseconds(),
		ResponseBody: a.ResponseBody, CreatedAt: wireTime(a.CreatedAt), NextAttemptAt: optWireTime(a.NextAttemptAt),
	}
}

// pathWebhook is the {id} of the path.
func pathWebhook(r *http.Request) (string, error) {
	id := r.PathValue("id")
	if !mailroom.IsID(id, mailroom.PrefixWebhook) {
		return "", mailroom.Errorf(mailroom.ECodeNotFound, "No webhook %q in this account.", mailroom.Excerpt(id, 64))
	}
	return id, nil
}

// createWebhook: POST /v1/webhooks answers 201 with the secret, shown this
// once.
func (s *Server) createWebhook(w http.ResponseWriter, r *http.Request) {
	var req webhook.Request
	if err := decodeJSON(r, &req); err != nil {
		writeError(w, r, err)
		return
	}
	e, secret, err := s.Webhooks.Create(r.Context(), keyFrom(r.Context()).AccountID, &req)
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusCreated, api.WebhookCreated{Webhook: toWebhook(e, s.Webhooks.Now()), Secret: secret})
}

// listWebhooks: GET /v1/webhooks, newest first.
func (s *Server) listWebhooks(w http.ResponseWriter, r *http.Request) {
	page, err := pageParams(r, scopeWebhooks)
	if err != nil {
		writeError(w, r, err)
		return
	}
	es, next, err := s.Webhooks.List(r.Context(), keyFrom(r.Context()).AccountID, page)
	if err != nil {
		writeError(w, r, err)
		return
	}
	now := s.Webhooks.Now()
	out := make([]api.Webhook, len(es))
	for i, e := range es {
		out[i] = toWebhook(e, now)
	}
	writeJSON(w, http.StatusOK, newList(out, scopeWebhooks, next))
}

// getWebhook: GET /v1/webhooks/{id}.
func (s *Server) getWebhook(w http.ResponseWriter, r *http.Request) {
	id, err := pathWebhook(r)
	if err != nil {
		writeError(w, r, err)
		return
	}
	e, err := s.Webhooks.Get(r.Context(), keyFrom(r.Context()).AccountID, id)
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, toWebhook(e, s.Webhooks.Now()))
}

// updateWebhook: PATCH /v1/webhooks/{id} changes the fields given; {} is
// no change.
func (s *Server) updateWebhook(w http.ResponseWriter, r *http.Request) {
	id, err := pathWebhook(r)
	if err != nil {
		writeError(w, r, err)
		return
	}
	var req webhook.Request
	if err := decodeJSON(r, &req); err != nil {
		writeError(w, r, err)
		return
	}
	e, err := s.Webhooks.Update(r.Context(), keyFrom(r.Context()).AccountID, id, &req)
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, toWebhook(e, s.Webhooks.Now()))
}

// deleteWebhook: DELETE /v1/webhooks/{id}, with its pending deliveries and
// its attempts.
func (s *Server) deleteWebhook(w http.ResponseWriter, r *http.Request) {
	id, err := pathWebhook(r)
	if err != nil {
		writeError(w, r, err)
		return
	}
	if err := s.Webhooks.Delete(r.Context(), keyFrom(r.Context()).AccountID, id); err != nil {
		writeError(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// rotateWebhookSecret: POST /v1/webhooks/{id}/rotate-secret answers the new
// secret, shown this once.
func (s *Server) rotateWebhookSecret(w http.ResponseWriter, r *http.Request) {
	id, err := pathWebhook(r)
	if err != nil {
		writeError(w, r, err)
		return
	}
	secret, e, err := s.Webhooks.RotateSecret(r.Context(), keyFrom(r.Context()).AccountID, id)
	if err != nil {
		writeError(w, r, err)
		return
	}
	out, err := toWebhookSecret(secret, e)
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, out)
}

// testWebhook: POST /v1/webhooks/{id}/test queues a webhook.test event to
// the endpoint and answers 202 with it: it is delivered as soon as the
// dispatcher gets to it, not within the request.
func (s *Server) testWebhook(w http.ResponseWriter, r *http.Request) {
	id, err := pathWebhook(r)
	if err != nil {
		writeError(w, r, err)
		return
	}
	ev, err := s.Webhooks.Test(r.Context(), keyFrom(r.Context()).AccountID, id)
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusAccepted, toEventRecord(ev))
}

// listWebhookAttempts: GET /v1/webhooks/{id}/deliveries, the endpoint's
// attempts newest first. Its cursors are bound to the endpoint and the
// filters.
func (s *Server) listWebhookAttempts(w http.ResponseWriter, r *http.Request) {
	id, err := pathWebhook(r)
	if err != nil {
		writeError(w, r, err)
		return
	}
	f, err := webhookAttemptFilter(r)
	if err != nil {
		writeError(w, r, err)
		return
	}
	scope := scopeWebhooks + "/" + id + "/deliveries\x00eventId=" + f.EventID + "\x00status=" + string(f.Status)
	page, err := pageParams(r, scope)
	if err != nil {
		writeError(w, r, err)
		return
	}
	as, next, err := s.Webhooks.Attempts(r.Context(), keyFrom(r.Context()).AccountID, id, f, page)
	if err != nil {
		writeError(w, r, err)
		return
	}
	out := make([]api.WebhookAttempt, len(as))
	for i, a := range as {
		out[i] = toWebhookAttempt(a)
	}
	writeJSON(w, http.StatusOK, newList(out, scope, next))
}

// webhookAttemptFilter reads and checks ?eventId= and ?status=.
func webhookAttemptFilter(r *http.Request) (mailroom.WebhookAttemptFilter, error) {
	if err := onceEach(r, "eventId", "status"); err != nil {
		return mailroom.WebhookAttemptFilter{}, err
	}
	q := r.URL.Query()
	f := mailroom.WebhookAttemptFilter{EventID: q.Get("eventId"), Status: mailroom.WebhookAttemptStatus(q.Get("status"))}
	var v mailroom.Validator
	if f.EventID != "" && !mailroom.IsID(f.EventID, mailroom.PrefixEvent) {
		// A value no event can have would match nothing, silently.
		v.Add("eventId", "must be an event id (evt_ and 26 letters and digits)")
	}
	switch f.Status {
	case "", mailroom.WebhookAttemptSucceeded, mailroom.WebhookAttemptFailed:
	default:
		v.Add("status", "must be succeeded or failed")
	}
	return f, v.Err()
}
