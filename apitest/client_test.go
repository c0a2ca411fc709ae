package apitest

import (
	"net/http"
	"testing"
	"time"

	"github.com/mailroom/mailroom/client/api"
)

// The OpenAPI check must be able to fail, or it proves nothing.
func TestCheckRejectsUndocumentedShapes(t *testing.T) {
	req, _ := http.NewRequest("GET", "https://x/v1/api-keys", nil)
	h := http.Header{"Content-Type": {"application/json"}, "X-Request-Id": {"r"}}
	good := &Response{Status: 200, Header: h, Body: []byte(`{"data":[],"nextCursor":null}`)}
	if err := Check(req, good); err != nil {
		t.Fatalf("a valid list was rejected: %v", err)
	}
	for name, r := range map[string]*Response{
		"missing field":       {Status: 200, Header: h, Body: []byte(`{"data":[]}`)},
		"extra field":         {Status: 200, Header: h, Body: []byte(`{"data":[],"nextCursor":null,"x":1}`)},
		"undocumented status": {Status: 418, Header: h, Body: []byte(`{"error":"x","message":"y"}`)},
		"unknown error code":  {Status: 400, Header: h, Body: []byte(`{"error":"oops","message":"y"}`)},
	} {
		if err := Check(req, r); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// Decode reads the api types strictly: a member the type lacks is the
// service writing something the wire type does not know.
func TestDecodeBody(t *testing.T) {
	d, err := DecodeBody[api.Domain]([]byte(`{"name":"example.com","status":"pending","records":[],"createdAt":"2026-11-22T10:00:00Z",` +
		`"verifiedAt":null,"lastCheckedAt":null,"nextCheckAt":"2026-11-22T10:05:00Z"}` + "\n"))
	if err != nil || d.Name != "example.com" || d.Status != api.DomainPending || d.VerifiedAt != nil ||
		d.NextCheckAt == nil || !d.NextCheckAt.Equal(time.Date(2026, 11, 22, 10, 5, 0, 0, time.UTC)) {
		t.Fatalf("%+v, %v", d, err)
	}
	l, err := DecodeBody[api.List[api.Suppression]]([]byte(`{"data":[{"address":"a@example.com","reason":"manual","createdAt":"2026-11-22T10:00:00Z","messageId":null}],"nextCursor":"c"}`))
	if err != nil || len(l.Data) != 1 || l.Data[0].Reason != api.SuppressedManual || l.Cursor() != "c" {
		t.Fatalf("%+v, %v", l, err)
	}
	for name, body := range map[string]string{
		"unknown member":  `{"status":"ok","extra":1}`,
		"wrong JSON type": `{"status":1}`,
		"two values":      `{"status":"ok"} {}`,
		"trailing bytes":  `{"status":"ok"} x`,
		"not JSON":        `<html>`,
	} {
		if _, err := DecodeBody[api.Status]([]byte(body)); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}
