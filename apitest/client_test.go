package apitest

import (
	"net/http"
	"testing"
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
