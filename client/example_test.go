package client_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	mailroom "github.com/mailroom/mailroom/client"
)

// fakeMailroom stands for `mailroom serve --dev` in these examples: it
// answers a send, two pages of the log, and refuses mail from a domain that
// is not verified.
func fakeMailroom() *httptest.Server { return httptest.NewServer(fakeMailroomHandler()) }

// fakeMailroomHandler is fakeMailroom's handler.
func fakeMailroomHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/send", func(w http.ResponseWriter, r *http.Request) {
		var req mailroom.SendRequest
		_ = json.NewDecoder(r.Body).Decode(&req)
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("X-Request-Id", "req_01jd7x8m2k")
		if !strings.HasSuffix(req.From, "@mailroom.test>") && !strings.HasSuffix(req.From, "@mailroom.test") {
			w.WriteHeader(http.StatusForbidden)
			fmt.Fprint(w, `{"error":"domain_not_verified","message":"The domain of from, shop.example, is not a verified domain of this account."}`)
			return
		}
		fmt.Fprint(w, `{"status":"queued","messageId":"msg_01jd7x8m2k4q6r8t0v2x4z6b8d"}`)
	})
	var batches atomic.Int32
	mux.HandleFunc("POST /v1/send/batch", func(w http.ResponseWriter, r *http.Request) {
		var req struct{ Messages []mailroom.SendRequest }
		_ = json.NewDecoder(r.Body).Decode(&req)
		if req.Messages[0].Subject == "Receipt 42" && batches.Add(1) == 1 {
			conn, _, _ := http.NewResponseController(w).Hijack() // stored, and the answer lost
			_ = conn.Close()
			return
		}
		w.Header().Set("Content-Type", "application/json")
		var items []string
		for i, m := range req.Messages {
			switch {
			case m.Subject == "Receipt 42" || m.Subject == "Receipt 43":
				items = append(items, `{"status":"duplicate","messageId":"msg_`+strconv.Itoa(42+i)+`"}`)
			case !strings.Contains(m.To[0], "@") || strings.HasSuffix(m.To[0], "@"):
				items = append(items, `{"error":"validation_error","message":"The request has 1 problem.","details":[{"field":"to","message":"not an address","index":0}]}`)
			default:
				items = append(items, `{"status":"queued","messageId":"msg_01jd7x8m2k4q6r8t0v2x4z6b8d"}`)
			}
		}
		fmt.Fprint(w, `{"data":[`+strings.Join(items, ",")+`]}`)
	})
	mux.HandleFunc("GET /v1/messages", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		item := func(id, subject string) string {
			return `{"id":"` + id + `","status":"delivered","from":"orders@mailroom.test","to":["ann@example.com"],"cc":[],"bcc":[],"replyTo":[],` +
				`"subject":"` + subject + `","category":"transactional","tags":{"kind":"receipt"},"template":null,"idempotencyKey":null,` +
				`"createdAt":"2026-11-22T10:00:00Z","scheduledAt":null,"recipients":[]}`
		}
		if r.URL.Query().Get("cursor") == "" {
			fmt.Fprint(w, `{"data":[`+item("msg_3", "Receipt 3")+`,`+item("msg_2", "Receipt 2")+`],"nextCursor":"page2"}`)
			return
		}
		fmt.Fprint(w, `{"data":[`+item("msg_1", "Receipt 1")+`],"nextCursor":null}`)
	})
	return mux
}

// Three lines send a message: a client, a request, the answer.
func Example() {
	srv := fakeMailroom()
	defer srv.Close()

	c := mailroom.New(srv.URL, "mailroom_6ceqkahjy69sur3g_rWb9jjjTCM7noGqrYnDLe0Wsvq03DK7vjlaRk0ns5bW")
	res, err := c.Send(context.Background(), &mailroom.SendRequest{From: "Shop <orders@mailroom.test>",
		To: []string{"ann@example.com"}, Subject: "Your receipt", Text: "Thanks!"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Status, res.MessageID)
	// Output: queued msg_01jd7x8m2k4q6r8t0v2x4z6b8d
}

// serve --dev makes a self-signed certificate (mailroom-data/tls/cert.pem):
// WithCAFile trusts it, and only it, keeping HTTP/2 and the environment's
// proxy.
func ExampleWithCAFile() {
	srv, certFile, done := fakeDevService() // stands for serve --dev and its cert.pem
	defer done()

	c := mailroom.New(srv.URL, "mailroom_…", mailroom.WithCAFile(certFile))
	res, err := c.Send(context.Background(), &mailroom.SendRequest{From: "Shop <orders@mailroom.test>",
		To: []string{"ann@example.com"}, Subject: "Your receipt", Text: "Thanks!"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Status)
	// Output: queued
}

// fakeDevService is fakeMailroom over TLS with HTTP/2, as serve --dev
// listens, the file of its self-signed certificate, and what closes both.
func fakeDevService() (srv *httptest.Server, certFile string, done func()) {
	srv = httptest.NewUnstartedServer(fakeMailroomHandler())
	srv.EnableHTTP2 = true
	srv.StartTLS()
	dir, err := os.MkdirTemp("", "mailroom-example")
	if err != nil {
		log.Fatal(err)
	}
	certFile = filepath.Join(dir, "cert.pem")
	pemBytes := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	if err := os.WriteFile(certFile, pemBytes, 0o600); err != nil {
		log.Fatal(err)
	}
	return srv, certFile, func() { srv.Close(); _ = os.RemoveAll(dir) }
}

// AllMessages follows the log's cursors page after page; a break stops it.
func ExampleClient_AllMessages() {
	srv := fakeMailroom()
	defer srv.Close()
	c := mailroom.New(srv.URL, "mailroom_…")

	filter := &mailroom.MessageListOptions{Tags: map[string]string{"kind": "receipt"}, Since: time.Now().Add(-24 * time.Hour)}
	for m, err := range c.AllMessages(context.Background(), filter) {
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(m.ID, m.Status, m.Subject)
	}
	// Output:
	// msg_3 delivered Receipt 3
	// msg_2 delivered Receipt 2
	// msg_1 delivered Receipt 1
}

// An answer that is not a 2xx is a *mailroom.Error: its status, the API's
// error code and message, and the request id to quote.
func ExampleError() {
	srv := fakeMailroom()
	defer srv.Close()
	c := mailroom.New(srv.URL, "mailroom_…")

	_, err := c.Send(context.Background(), &mailroom.SendRequest{From: "orders@shop.example",
		To: []string{"ann@example.com"}, Subject: "Hi", Text: "Hello"})
	var e *mailroom.Error
	if errors.As(err, &e) {
		fmt.Println(e.Status, e.Code, e.RequestID)
		fmt.Println(e.Message)
	}
	fmt.Println(mailroom.IsCode(err, mailroom.CodeDomainNotVerified))
	// Output:
	// 403 domain_not_verified req_01jd7x8m2k
	// The domain of from, shop.example, is not a verified domain of this account.
	// true
}

// Each item of a batch is accepted or refused on its own: a refused
// item's Err is an *mailroom.Error, as a refused request's is.
func ExampleBatchItemResult_Err() {
	srv := fakeMailroom()
	defer srv.Close()
	c := mailroom.New(srv.URL, "mailroom_…")

	res, err := c.SendBatch(context.Background(), []mailroom.SendRequest{
		{From: "orders@mailroom.test", To: []string{"ann@example.com"}, Subject: "Receipt 1", Text: "Thanks!"},
		{From: "orders@mailroom.test", To: []string{"bob@"}, Subject: "Receipt 2", Text: "Thanks!"},
	})
	if err != nil {
		log.Fatal(err) // nothing was stored, or the outcome is unknown
	}
	for i, item := range res.Data {
		var e *mailroom.Error
		switch err := item.Err(); {
		case err == nil:
			fmt.Println(i, item.Status, item.MessageID)
		case mailroom.IsCode(err, mailroom.CodeValidation) && errors.As(err, &e):
			fmt.Println(i, e.Code, e.Details[0].Field, e.Details[0].Message)
		default:
			fmt.Println(i, err)
		}
	}
	// Output:
	// 0 queued msg_01jd7x8m2k4q6r8t0v2x4z6b8d
	// 1 validation_error to not an address
}

// When a batch may have been stored though no answer came back, the error
// names the idempotency keys its messages went under: sending again under
// them stores nothing twice.
func ExampleOutcomeUnknownError() {
	srv := fakeMailroom() // its first batch hangs up after reading the request
	defer srv.Close()
	c := mailroom.New(srv.URL, "mailroom_…", mailroom.WithMaxRetries(0))

	msgs := []mailroom.SendRequest{
		{From: "orders@mailroom.test", To: []string{"ann@example.com"}, Subject: "Receipt 42", Text: "Thanks!"},
		{From: "orders@mailroom.test", To: []string{"cy@example.com"}, Subject: "Receipt 43", Text: "Thanks!", IdempotencyKey: "order-43-receipt"},
	}
	_, err := c.SendBatch(context.Background(), msgs)
	var unknown *mailroom.OutcomeUnknownError
	if errors.As(err, &unknown) {
		fmt.Println(len(unknown.Keys), "keys; the second is", unknown.Keys[1])
		res, err := c.SendBatch(context.Background(), unknown.Keyed(msgs)) // later: the same keys
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(res.Data[0].Status, res.Data[1].Status)
	}
	// Output:
	// 2 keys; the second is order-43-receipt
	// duplicate duplicate
}

// A webhook endpoint verifies each request's signature on its raw body,
// then decodes the event.
func ExampleVerifyWebhook() {
	secret := "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw" // CreateWebhook's answer

	handler := func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, 1<<20))
		if err != nil {
			http.Error(w, "unreadable body", http.StatusBadRequest)
			return
		}
		if err := mailroom.VerifyWebhook(secret, r.Header, body); err != nil {
			fmt.Println("refused:", err)
			http.Error(w, "bad signature", http.StatusBadRequest)
			return
		}
		ev, err := mailroom.ParseEvent(body)
		if err != nil {
			http.Error(w, "bad event", http.StatusBadRequest)
			return
		}
		// Deduplicate on r.Header.Get("webhook-id"): a delivery may come twice.
		if ev.Type == mailroom.EventEmailDelivered {
			d, _ := ev.EmailData()
			fmt.Println("delivered to", d.Recipient, "with", d.SMTPResponse)
		}
		w.WriteHeader(http.StatusNoContent)
	}

	// What the service sends.
	body := `{"type":"email.delivered","timestamp":"2026-11-22T10:00:00.123Z","data":{"messageId":"msg_1",` +
		`"recipient":"ann@example.com","from":"orders@shop.example","subject":"Hi","tags":{},"smtpCode":250,` +
		`"smtpResponse":"250 2.0.0 OK","mx":"mx.example.com","attempt":1}}`
	req := signedRequest(secret, "evt_01jd7x8m2k4q6r8t0v2x4z6b8d", body)
	rec := httptest.NewRecorder()
	handler(rec, req)
	fmt.Println(rec.Code)

	tampered := signedRequest(secret, "evt_01jd7x8m2k4q6r8t0v2x4z6b8d", body)
	tampered.Body = io.NopCloser(strings.NewReader(strings.Replace(body, "ann@", "eve@", 1)))
	rec = httptest.NewRecorder()
	handler(rec, tampered)
	fmt.Println(rec.Code)
	// Output:
	// delivered to ann@example.com with 250 2.0.0 OK
	// 204
	// refused: mailroom: webhook: no signature matches
	// 400
}

// signedRequest is a delivery as the service signs it (Standard Webhooks).
func signedRequest(secret, id, body string) *http.Request {
	key, _ := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, "whsec_"))
	ts := strconv.FormatInt(time.Now().Unix(), 10)
	m := hmac.New(sha256.New, key)
	m.Write([]byte(id + "." + ts + "." + body))
	r := httptest.NewRequest("POST", "/hooks/mailroom", strings.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("webhook-id", id)
	r.Header.Set("webhook-timestamp", ts)
	r.Header.Set("webhook-signature", "v1,"+base64.StdEncoding.EncodeToString(m.Sum(nil)))
	return r
}
