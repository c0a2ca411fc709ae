package http

import (
	"net/http"

	"github.com/mailroom/mailroom"
	"github.com/mailroom/mailroom/resend"
	"github.com/mailroom/mailroom/webhook"
)

// Resend's webhook routes (docs/api.md "Moving from Resend"; package
// resend's webhook.go for the shapes): a translation over webhook.Service,
// the service /v1/webhooks uses, so that the URL's checks, the limits and
// what turning an endpoint off does are the same. An endpoint made here
// has format resend: it is sent Resend's payload and event names.

// resendWebhookRequest is a webhook.Request from Resend's body: the
// endpoint, the events read from Resend's names into Mailroom's types, the
// status as enabled.
func resendWebhookRequest(r *resend.WebhookRequest) (*webhook.Request, error) {
	req := &webhook.Request{URL: r.URL()}
	if r.Events != nil {
		events, err := resend.EventTypes(r.Events)
		if err != nil {
			return nil, err
		}
		req.Events = &events
	}
	enabled, err := r.Enabled()
	if err != nil {
		return nil, err
	}
	req.Enabled = enabled
	return req, nil
}

// resendCreateWebhook: POST /webhooks {endpoint, events} → {object, id,
// signing_secret}.
func (s *Server) resendCreateWebhook(w http.ResponseWriter, r *http.Request) {
	var body resend.WebhookRequest
	if err := decodeResendJSON(r, &body); err != nil {
		writeError(w, r, err)
		return
	}
	req, err := resendWebhookRequest(&body)
	if err != nil {
		writeError(w, r, err)
		return
	}
	format := string(mailroom.WebhookFormatResend)
	req.Format = &format
	e, secret, err := s.Webhooks.Create(r.Context(), keyFrom(r.Context()).AccountID, req)
	if err != nil {
		writeError(w, r, resend.WebhookFields(err))
		return
	}
	writeJSON(w, http.StatusOK, resend.WebhookCreated{Object: "webhook", ID: e.ID, SigningSecret: secret})
}

// resendListWebhooks: GET /webhooks?limit&after&before → {object: "list",
// has_more, data}. An account has a bounded number of endpoints
// (--max-webhooks), so they are read whole and paged by id.
func (s *Server) resendListWebhooks(w http.ResponseWriter, r *http.Request) {
	win, err := resend.ParseListWindow(r.URL.Query(), resend.DefaultListLimit)
	if err != nil {
		writeError(w, r, err)
		return
	}
	all, err := s.Webhooks.All(r.Context(), keyFrom(r.Context()).AccountID)
	if err != nil {
		writeError(w, r, err)
		return
	}
	page, more, err := resend.Select(win, all, func(e *mailroom.WebhookEndpoint) string { return e.ID })
	if err != nil {
		writeError(w, r, err)
		return
	}
	out := resend.WebhookList{Object: "list", HasMore: more, Data: make([]resend.WebhookInList, len(page))}
	for i, e := range page {
		out.Data[i] = resend.NewWebhookInList(e)
	}
	writeJSON(w, http.StatusOK, out)
}

// resendGetWebhook: GET /webhooks/{id} → the endpoint with its secret, as
// Resend shows it.
func (s *Server) resendGetWebhook(w http.ResponseWriter, r *http.Request) {
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
	secret, err := s.Webhooks.SigningSecret(e)
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, resend.NewWebhook(e, secret))
}

// resendUpdateWebhook: PATCH /webhooks/{id} {endpoint?, events?, status?}
// → {object, id}. status "disabled" turns the endpoint off as PATCH
// /v1/webhooks/{id} {"enabled": false} does (its pending deliveries are
// dropped); "enabled" turns it on again with its failing time cleared.
func (s *Server) resendUpdateWebhook(w http.ResponseWriter, r *http.Request) {
	id, err := pathWebhook(r)
	if err != nil {
		writeError(w, r, err)
		return
	}
	var body resend.WebhookRequest
	if err := decodeResendJSON(r, &body); err != nil {
		writeError(w, r, err)
		return
	}
	if len(body.Events) == 0 {
		body.Events = nil // [] as null: the Go SDK leaves out an empty list
	}
	req, err := resendWebhookRequest(&body)
	if err != nil {
		writeError(w, r, err)
		return
	}
	if _, err := s.Webhooks.Update(r.Context(), keyFrom(r.Context()).AccountID, id, req); err != nil {
		writeError(w, r, resend.WebhookFields(err))
		return
	}
	writeJSON(w, http.StatusOK, resend.WebhookRef{Object: "webhook", ID: id})
}

// resendDeleteWebhook: DELETE /webhooks/{id} → 200 {object, id, deleted}.
func (s *Server) resendDeleteWebhook(w http.ResponseWriter, r *http.Request) {
	id, err := pathWebhook(r)
	if err != nil {
		writeError(w, r, err)
		return
	}
	if err := s.Webhooks.Delete(r.Context(), keyFrom(r.Context()).AccountID, id); err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, resend.WebhookDeleted{Object: "webhook", ID: id, Deleted: true})
}

// resendRotateWebhookSecret: POST /webhooks/{id}/signing-secret/rotate →
// {object, id, signing_secret} (the Node SDK's rotateSigningSecret). The
// secret it replaces keeps signing beside it for a day, as on /v1.
func (s *Server) resendRotateWebhookSecret(w http.ResponseWriter, r *http.Request) {
	id, err := pathWebhook(r)
	if err != nil {
		writeError(w, r, err)
		return
	}
	secret, _, err := s.Webhooks.RotateSecret(r.Context(), keyFrom(r.Context()).AccountID, id)
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, resend.WebhookCreated{Object: "webhook", ID: id, SigningSecret: secret})
}
