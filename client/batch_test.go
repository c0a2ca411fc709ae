package client

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
)

const batchAnswer = `{"data":[{"status":"queued","messageId":"msg_1"},` +
	`{"error":"validation_error","message":"The request has 1 problem.","details":[{"field":"to","message":"not an address","index":0}]}],` +
	`"accepted":1,"failed":1}`

// A refused item's error is an *Error, as a refused request's: errors.As
// and IsCode work on it; an accepted item's is nil. Each item says the key
// it went under.
func TestBatchItemErr(t *testing.T) {
	_, srv := newScript(t, answer(200, batchAnswer, "X-Request-Id", "req_batch"))
	c, _ := testClient(srv.URL)
	res, err := c.SendBatch(context.Background(), []SendRequest{{To: []string{"ann@example.com"}}, {To: []string{"bob@"}, IdempotencyKey: "mine"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := res.Data[0].Err(); err != nil {
		t.Errorf("the accepted item's Err() = %#v, want nil", err)
	}
	itemErr := res.Data[1].Err()
	var e *Error
	if !errors.As(itemErr, &e) || !IsCode(itemErr, CodeValidation) || IsCode(itemErr, CodeNotFound) {
		t.Fatalf("the refused item's Err() = %#v, want an *Error with code validation_error", itemErr)
	}
	if e.Status != 0 || e.RequestID != "req_batch" || len(e.Details) != 1 || e.Details[0].Field != "to" || e.Retryable() {
		t.Errorf("item error %+v", e)
	}
	if want := "mailroom: validation_error: The request has 1 problem. — to[0]: not an address (request req_batch)"; itemErr.Error() != want {
		t.Errorf("Error() = %q, want %q", itemErr.Error(), want)
	}
	if res.RequestID != "req_batch" || res.Data[0].IdempotencyKey != "key-1" || res.Data[1].IdempotencyKey != "mine" {
		t.Errorf("request id %q, keys %q %q", res.RequestID, res.Data[0].IdempotencyKey, res.Data[1].IdempotencyKey)
	}
	// The wire's fields and methods are still there.
	if !res.Data[0].OK() || res.Data[0].Result().MessageID != "msg_1" || res.Data[1].ErrorBody().Error != CodeValidation || res.Accepted != 1 || res.Failed != 1 {
		t.Errorf("result %+v", res)
	}
}

// A batch that may have been stored though no attempt succeeded fails
// with an *OutcomeUnknownError naming every item's key, in order: its own
// or the one made for it. Sending again with Keyed sends the same keys.
func TestSendBatchOutcomeUnknownNamesTheKeys(t *testing.T) {
	s, srv := newScript(t, hangUp)
	c, _ := testClient(srv.URL, WithMaxRetries(1))
	msgs := []SendRequest{{To: []string{"ann@example.com"}}, {To: []string{"bob@example.com"}, IdempotencyKey: "mine"}, {To: []string{"cy@example.com"}}}
	_, err := c.SendBatch(context.Background(), msgs)
	var u *OutcomeUnknownError
	if !errors.As(err, &u) || !errors.Is(err, ErrOutcomeUnknown) {
		t.Fatalf("err = %v, want an *OutcomeUnknownError", err)
	}
	if want := []string{"key-1", "mine", "key-2"}; !slices.Equal(u.Keys, want) {
		t.Errorf("Keys = %q, want %q", u.Keys, want)
	}
	for _, k := range u.Keys {
		if !strings.Contains(err.Error(), fmt.Sprintf("%q", k)) {
			t.Errorf("the error %q does not name the key %q", err, k)
		}
	}
	first := s.Requests()[0].Body

	// Sent again under the same keys: the same body, so the service
	// answers what it stored as duplicates.
	s2, srv2 := newScript(t, answer(200, `{"data":[],"accepted":0,"failed":0}`))
	c2, _ := testClient(srv2.URL)
	if _, err := c2.SendBatch(context.Background(), u.Keyed(msgs)); err != nil {
		t.Fatal(err)
	}
	if got := s2.Requests()[0].Body; got != first {
		t.Errorf("sent again with %s, first sent %s", got, first)
	}
	if msgs[0].IdempotencyKey != "" {
		t.Error("Keyed changed the caller's messages")
	}
}

// Which failures leave a send's outcome unknown: an attempt that may have
// reached the service, or a 5xx but 503, even when a later attempt was
// refused; not a 4xx, a 503, a connection never made or a certificate
// that does not verify.
func TestWhichSendFailuresAreUnknown(t *testing.T) {
	internal := `{"error":"internal_error","message":"A bug (request req_test)."}`
	for _, tc := range []struct {
		name    string
		answers []func(http.ResponseWriter, *http.Request)
		unknown bool
		code    string // of the *Error wrapped, if any
	}{
		{"500", []func(http.ResponseWriter, *http.Request){answer(500, internal)}, true, CodeInternal},
		{"502 then 504", []func(http.ResponseWriter, *http.Request){answer(502, ""), answer(504, "")}, true, ""},
		{"hang-up then 503", []func(http.ResponseWriter, *http.Request){hangUp, answer(503, unavailable)}, true, CodeServiceUnavailable},
		{"503", []func(http.ResponseWriter, *http.Request){answer(503, unavailable)}, false, CodeServiceUnavailable},
		{"400", []func(http.ResponseWriter, *http.Request){answer(400, `{"error":"validation_error","message":"bad"}`)}, false, CodeValidation},
		{"429", []func(http.ResponseWriter, *http.Request){answer(429, rateLimited)}, false, CodeRateLimited},
	} {
		for _, call := range []string{"Send", "SendBatch"} {
			_, srv := newScript(t, tc.answers...)
			c, _ := testClient(srv.URL, WithMaxRetries(2))
			var err error
			if call == "Send" {
				_, err = send(t, c)
			} else {
				_, err = c.SendBatch(context.Background(), []SendRequest{{To: []string{"ann@example.com"}}})
			}
			var u *OutcomeUnknownError
			if got := errors.As(err, &u); got != tc.unknown || errors.Is(err, ErrOutcomeUnknown) != tc.unknown {
				t.Errorf("%s, %s: %v; unknown %v, want %v", call, tc.name, err, got, tc.unknown)
			}
			if u != nil && (len(u.Keys) != 1 || u.Keys[0] != "key-1") {
				t.Errorf("%s, %s: keys %q", call, tc.name, u.Keys)
			}
			if tc.code != "" && !IsCode(err, tc.code) {
				t.Errorf("%s, %s: %v is not %s", call, tc.name, err, tc.code)
			}
		}
	}

	// A connection never made carried nothing.
	_, srv := newScript(t, answer(200, queued))
	srv.Close()
	c, _ := testClient(srv.URL, WithMaxRetries(1))
	if _, err := send(t, c); err == nil || errors.Is(err, ErrOutcomeUnknown) {
		t.Errorf("a refused connection: %v", err)
	}
	// Nor did a request whose TLS handshake failed.
	tsrv, _, protos := tlsService(t)
	if _, err := send(t, New(tsrv.URL, "k")); err == nil || errors.Is(err, ErrOutcomeUnknown) || len(protos()) != 0 {
		t.Errorf("an untrusted certificate: %v", err)
	}
}

// The caller's context ending while the answer is awaited leaves the
// outcome unknown; a context ended before the call sends nothing.
func TestSendCanceledWhileAwaitingIsUnknown(t *testing.T) {
	arrived := make(chan struct{})
	_, srv := newScript(t, func(w http.ResponseWriter, r *http.Request) {
		close(arrived)
		<-r.Context().Done() // the client went away
	})
	c, _ := testClient(srv.URL)
	ctx, cancel := context.WithCancel(context.Background())
	go func() { <-arrived; cancel() }()
	_, err := c.Send(ctx, &SendRequest{To: []string{"ann@example.com"}})
	if !errors.Is(err, ErrOutcomeUnknown) || !errors.Is(err, context.Canceled) {
		t.Errorf("canceled while awaiting the answer: %v", err)
	}

	s, srv := newScript(t, answer(200, queued))
	c, _ = testClient(srv.URL)
	if _, err := c.Send(ctx, &SendRequest{To: []string{"ann@example.com"}}); !errors.Is(err, context.Canceled) || errors.Is(err, ErrOutcomeUnknown) || len(s.Requests()) != 0 {
		t.Errorf("canceled before the call: %v after %d requests", err, len(s.Requests()))
	}
}

// A batch's error names its first keys and says how many more there are.
func TestOutcomeUnknownErrorText(t *testing.T) {
	keys := make([]string, 500)
	for i := range keys {
		keys[i] = fmt.Sprintf("k%d", i)
	}
	got := (&OutcomeUnknownError{Keys: keys, Err: errors.New("EOF")}).Error()
	want := `mailroom: the outcome is unknown: the service may have accepted the request; send again with the same idempotency keys, in order: "k0" "k1" "k2" "k3" "k4" … and 495 more (OutcomeUnknownError.Keys): EOF`
	if got != want {
		t.Errorf("Error() = %q\nwant %q", got, want)
	}
}
