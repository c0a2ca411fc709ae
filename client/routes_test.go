package client

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"
)

// Every method sends its route's method, path, query and body, and reads
// its answer.
func TestEveryMethodsRequest(t *testing.T) {
	ctx := context.Background()
	at := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name   string
		status int
		answer string
		call   func(c *Client) error
		want   string // METHOD path?query body
	}{
		{"Health", 200, `{"status":"ok"}`, func(c *Client) error { _, err := c.Health(ctx); return err }, "GET /healthz"},
		{"Ready", 200, `{"status":"ok"}`, func(c *Client) error { _, err := c.Ready(ctx); return err }, "GET /readyz"},
		{"OpenAPI", 200, `{"openapi":"3.1.0"}`, func(c *Client) error {
			doc, err := c.OpenAPI(ctx)
			if err == nil && string(doc) != `{"openapi":"3.1.0"}` {
				t.Errorf("OpenAPI answered %s", doc)
			}
			return err
		}, "GET /v1/openapi.json"},

		{"CreateAPIKey", 201, `{"keyId":"k","key":"mailroom_k_s"}`, func(c *Client) error {
			k, err := c.CreateAPIKey(ctx, &APIKeyCreateRequest{Name: "deploys", Scopes: []Scope{ScopeSend}})
			if err == nil && k.Key != "mailroom_k_s" {
				t.Errorf("key %+v", k)
			}
			return err
		}, `POST /v1/api-keys {"name":"deploys","scopes":["send"]}`},
		{"ListAPIKeys", 200, `{"data":[],"nextCursor":null}`, func(c *Client) error { _, err := c.ListAPIKeys(ctx, &ListOptions{Limit: 5}); return err }, "GET /v1/api-keys?limit=5"},
		{"GetAPIKey", 200, `{}`, func(c *Client) error { _, err := c.GetAPIKey(ctx, "abc"); return err }, "GET /v1/api-keys/abc"},
		{"RevokeAPIKey", 200, `{}`, func(c *Client) error { _, err := c.RevokeAPIKey(ctx, "abc"); return err }, "DELETE /v1/api-keys/abc"},
		{"CurrentAPIKey", 200, `{}`, func(c *Client) error { _, err := c.CurrentAPIKey(ctx); return err }, "GET /v1/api-keys/current"},

		{"CreateDomain", 201, `{}`, func(c *Client) error { _, err := c.CreateDomain(ctx, "example.com"); return err }, `POST /v1/domains {"name":"example.com"}`},
		{"ListDomains", 200, `{"data":[],"nextCursor":null}`, func(c *Client) error { _, err := c.ListDomains(ctx, nil); return err }, "GET /v1/domains"},
		{"GetDomain", 200, `{}`, func(c *Client) error { _, err := c.GetDomain(ctx, "example.com"); return err }, "GET /v1/domains/example.com"},
		{"RotateDomainDKIM", 200, `{}`, func(c *Client) error { _, err := c.RotateDomainDKIM(ctx, "example.com"); return err }, "POST /v1/domains/example.com/dkim/rotate"},
		{"VerifyDomain", 200, `{}`, func(c *Client) error { _, err := c.VerifyDomain(ctx, "example.com"); return err }, "POST /v1/domains/example.com/verify"},
		{"DeleteDomain", 204, ``, func(c *Client) error { return c.DeleteDomain(ctx, "example.com") }, "DELETE /v1/domains/example.com"},

		{"CreateTemplate", 201, `{}`, func(c *Client) error {
			_, err := c.CreateTemplate(ctx, &TemplateRequest{Name: "receipt", Subject: "Hi {{name}}", Text: "x"})
			return err
		}, `POST /v1/templates {"name":"receipt","subject":"Hi {{name}}","text":"x"}`},
		{"ListTemplates", 200, `{"data":[],"nextCursor":null}`, func(c *Client) error { _, err := c.ListTemplates(ctx, nil); return err }, "GET /v1/templates"},
		{"GetTemplate", 200, `{}`, func(c *Client) error { _, err := c.GetTemplate(ctx, "receipt"); return err }, "GET /v1/templates/receipt"},
		{"UpdateTemplate", 200, `{}`, func(c *Client) error {
			_, err := c.UpdateTemplate(ctx, "tpl_1", &TemplateRequest{Subject: "s", HTML: "<p>x</p>", Layout: "base"})
			return err
		}, `PUT /v1/templates/tpl_1 {"subject":"s","html":"<p>x</p>","layout":"base"}`},
		{"DeleteTemplate", 204, ``, func(c *Client) error { return c.DeleteTemplate(ctx, "receipt") }, "DELETE /v1/templates/receipt"},
		{"ListTemplateVersions", 200, `{"data":[],"nextCursor":null}`, func(c *Client) error {
			_, err := c.ListTemplateVersions(ctx, "receipt", &ListOptions{Cursor: "x"})
			return err
		}, "GET /v1/templates/receipt/versions?cursor=x"},
		{"GetTemplateVersion", 200, `{}`, func(c *Client) error { _, err := c.GetTemplateVersion(ctx, "receipt", 3); return err }, "GET /v1/templates/receipt/versions/3"},
		{"RenderTemplate", 200, `{"subject":"Hi Ann","html":"","text":"x"}`, func(c *Client) error {
			_, err := c.RenderTemplate(ctx, "receipt", map[string]any{"name": "Ann"})
			return err
		}, `POST /v1/templates/receipt/render {"variables":{"name":"Ann"}}`},

		{"Send", 200, queued, func(c *Client) error {
			_, err := c.Send(ctx, &SendRequest{From: "o@shop.example", To: []string{"ann@example.com"}, Subject: "Hi", Text: "x", ScheduledAt: &at, Attachments: []Attachment{{Filename: "a.txt", Content: []byte("hi")}}})
			return err
		}, `POST /v1/send {"from":"o@shop.example","to":["ann@example.com"],"subject":"Hi","text":"x","attachments":[{"filename":"a.txt","content":"aGk="}],"scheduledAt":"2026-11-22T10:00:00Z"}`},
		{"SendBatch", 200, `{"data":[],"accepted":0,"failed":0}`, func(c *Client) error {
			_, err := c.SendBatch(ctx, []SendRequest{{To: []string{"a@x.example"}}})
			return err
		}, `POST /v1/send/batch {"messages":[{"to":["a@x.example"],"idempotencyKey":"key-1"}]}`},
		{"ListScheduled", 200, `{"data":[],"nextCursor":null}`, func(c *Client) error { _, err := c.ListScheduled(ctx, nil); return err }, "GET /v1/scheduled"},
		{"RescheduleMessage", 200, `{}`, func(c *Client) error { _, err := c.RescheduleMessage(ctx, "msg_1", at); return err }, `PATCH /v1/scheduled/msg_1 {"scheduledAt":"2026-11-22T10:00:00Z"}`},
		{"CancelMessage", 200, `{}`, func(c *Client) error { _, err := c.CancelMessage(ctx, "msg_1"); return err }, "DELETE /v1/scheduled/msg_1"},
		{"ListMessages", 200, `{"data":[],"nextCursor":null}`, func(c *Client) error {
			_, err := c.ListMessages(ctx, &MessageListOptions{Status: MessageBounced})
			return err
		}, "GET /v1/messages?status=bounced"},
		{"GetMessage", 200, `{}`, func(c *Client) error { _, err := c.GetMessage(ctx, "msg_1"); return err }, "GET /v1/messages/msg_1"},
		{"GetRawMessage", 200, "From: a\r\n\r\nbody", func(c *Client) error {
			raw, err := c.GetRawMessage(ctx, "msg_1")
			if err == nil && string(raw) != "From: a\r\n\r\nbody" {
				t.Errorf("raw %q", raw)
			}
			return err
		}, "GET /v1/messages/msg_1/raw"},

		{"ListSuppressions", 200, `{"data":[],"nextCursor":null}`, func(c *Client) error { _, err := c.ListSuppressions(ctx, nil); return err }, "GET /v1/suppressions"},
		{"GetSuppression", 200, `{}`, func(c *Client) error { _, err := c.GetSuppression(ctx, "a/b@example.com"); return err }, "GET /v1/suppressions/a%2Fb@example.com"},
		{"AddSuppression", 201, `{"address":"bob@example.com","reason":"manual","createdAt":"2026-11-22T10:00:00Z","messageId":null}`, func(c *Client) error {
			sup, created, err := c.AddSuppression(ctx, "bob@example.com")
			if err == nil && (!created || sup.Reason != "manual") {
				t.Errorf("suppression %+v, created %v", sup, created)
			}
			return err
		}, `POST /v1/suppressions {"address":"bob@example.com"}`},
		{"DeleteSuppression", 204, ``, func(c *Client) error { return c.DeleteSuppression(ctx, "bob@example.com") }, "DELETE /v1/suppressions/bob@example.com"},

		{"CreateWebhook", 201, `{"id":"wh_1","secret":"whsec_x"}`, func(c *Client) error {
			wh, err := c.CreateWebhook(ctx, &WebhookCreateRequest{URL: "https://app.example/hooks", Events: []EventType{EventEmailDelivered}})
			if err == nil && (wh.ID != "wh_1" || wh.Secret != "whsec_x") {
				t.Errorf("webhook %+v", wh)
			}
			return err
		}, `POST /v1/webhooks {"url":"https://app.example/hooks","events":["email.delivered"]}`},
		{"ListWebhooks", 200, `{"data":[],"nextCursor":null}`, func(c *Client) error { _, err := c.ListWebhooks(ctx, nil); return err }, "GET /v1/webhooks"},
		{"GetWebhook", 200, `{}`, func(c *Client) error { _, err := c.GetWebhook(ctx, "wh_1"); return err }, "GET /v1/webhooks/wh_1"},
		{"UpdateWebhook", 200, `{}`, func(c *Client) error {
			_, err := c.UpdateWebhook(ctx, "wh_1", &WebhookUpdateRequest{Enabled: ptr(false), Description: ptr("")})
			return err
		}, `PATCH /v1/webhooks/wh_1 {"description":"","enabled":false}`},
		{"DeleteWebhook", 204, ``, func(c *Client) error { return c.DeleteWebhook(ctx, "wh_1") }, "DELETE /v1/webhooks/wh_1"},
		{"RotateWebhookSecret", 200, `{"secret":"whsec_y","previousSecretExpiresAt":"2026-11-23T10:00:00Z"}`, func(c *Client) error {
			_, err := c.RotateWebhookSecret(ctx, "wh_1")
			return err
		}, "POST /v1/webhooks/wh_1/rotate-secret"},
		{"ListWebhookDeliveries", 200, `{"data":[],"nextCursor":null}`, func(c *Client) error {
			_, err := c.ListWebhookDeliveries(ctx, "wh_1", &DeliveryListOptions{Status: AttemptFailed})
			return err
		}, "GET /v1/webhooks/wh_1/deliveries?status=failed"},
		{"TestWebhook", 202, `{"id":"evt_1","type":"webhook.test","createdAt":"2026-11-22T10:00:00Z","data":{"webhookId":"wh_1","message":"hi"}}`, func(c *Client) error {
			ev, err := c.TestWebhook(ctx, "wh_1")
			if err == nil {
				if d, derr := ev.TestData(); derr != nil || d.WebhookID != "wh_1" {
					t.Errorf("test data %+v, %v", d, derr)
				}
			}
			return err
		}, "POST /v1/webhooks/wh_1/test"},
		{"ListEvents", 200, `{"data":[],"nextCursor":null}`, func(c *Client) error {
			_, err := c.ListEvents(ctx, &EventListOptions{Type: EventEmailBounced})
			return err
		}, "GET /v1/events?type=email.bounced"},
		{"ReplayEvent", 202, `{"eventId":"evt_1","endpoints":["wh_1"]}`, func(c *Client) error { _, err := c.ReplayEvent(ctx, "evt_1", "wh_1"); return err }, "POST /v1/events/evt_1/replay?endpoint=wh_1"},
		{"ReplayEvent to all", 202, `{"eventId":"evt_1","endpoints":["wh_1"]}`, func(c *Client) error { _, err := c.ReplayEvent(ctx, "evt_1", ""); return err }, "POST /v1/events/evt_1/replay"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, srv := newScript(t, answer(tc.status, tc.answer))
			c, _ := testClient(srv.URL)
			if err := tc.call(c); err != nil {
				t.Fatal(err)
			}
			r := s.Requests()[0]
			path := r.Path
			if r.RawPath != "" {
				path = r.RawPath
			}
			got := r.Method + " " + path
			if r.Query != "" {
				got += "?" + r.Query
			}
			if r.Body != "" {
				got += " " + r.Body
			}
			if got != tc.want {
				t.Errorf("sent  %s\nwant  %s", got, tc.want)
			}
			if (r.Body != "") != (r.Header.Get("Content-Type") == "application/json") {
				t.Errorf("Content-Type %q with body %q", r.Header.Get("Content-Type"), r.Body)
			}
			if ua := r.Header.Get("User-Agent"); ua != "mailroom-go/"+Version {
				t.Errorf("User-Agent %q", ua)
			}
		})
	}
}

func TestOptions(t *testing.T) {
	s, srv := newScript(t, answer(200, `{"status":"ok"}`))
	hc := &http.Client{Timeout: 7 * time.Second}
	c := New(srv.URL+"/prefix/", "k", WithHTTPClient(hc), WithUserAgent("cli/1"), WithTimeout(time.Second), WithMaxRetries(1), WithRetryBackoff(time.Second, time.Minute))
	if c.hc.Timeout != hc.Timeout || hc.CheckRedirect != nil || c.timeout != time.Second || c.maxRetries != 1 || c.retryBase != time.Second || c.retryMax != time.Minute || c.BaseURL() != srv.URL+"/prefix" {
		t.Errorf("options not taken: %+v", c)
	}
	if _, err := c.Health(context.Background()); err != nil {
		t.Fatal(err)
	}
	if r := s.Requests()[0]; r.Path != "/prefix/healthz" || r.Header.Get("User-Agent") != "cli/1" {
		t.Errorf("request %+v", r)
	}
	d := New("http://x", "k")
	if d.timeout != DefaultTimeout || d.maxRetries != DefaultMaxRetries || d.retryBase != DefaultRetryBase || d.retryMax != DefaultRetryMax {
		t.Errorf("defaults %+v", d)
	}
}

func TestNilRequests(t *testing.T) {
	c := New("http://127.0.0.1:1", "k")
	ctx := context.Background()
	for name, err := range map[string]error{
		"Send":           func() error { _, err := c.Send(ctx, nil); return err }(),
		"CreateAPIKey":   func() error { _, err := c.CreateAPIKey(ctx, nil); return err }(),
		"CreateTemplate": func() error { _, err := c.CreateTemplate(ctx, nil); return err }(),
		"UpdateTemplate": func() error { _, err := c.UpdateTemplate(ctx, "x", nil); return err }(),
		"CreateWebhook":  func() error { _, err := c.CreateWebhook(ctx, nil); return err }(),
	} {
		if err != errNilRequest {
			t.Errorf("%s(nil): %v", name, err)
		}
	}
}

func TestErrorOfAnotherBody(t *testing.T) {
	_, srv := newScript(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(502)
		_, _ = w.Write([]byte("<html><body>Bad gateway</body></html>"))
	})
	c, _ := testClient(srv.URL)
	_, err := c.GetMessage(context.Background(), "msg_1")
	var e *Error
	if !errors.As(err, &e) || e.Status != 502 || e.Code != "" || e.Message != "Bad Gateway" {
		t.Fatalf("err %#v", err)
	}
	if got := e.Error(); got != "mailroom: 502: Bad Gateway" {
		t.Errorf("Error() = %q", got)
	}
	long := newError(500, http.Header{}, []byte(strings.Repeat("é", 400)), time.Now())
	if len(long.Message) > maxMessageBytes+len("…") || !strings.HasSuffix(long.Message, "…") {
		t.Errorf("message of %d bytes", len(long.Message))
	}
}
