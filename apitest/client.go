// Package apitest is a client for tests that drive the API the way clients
// do: over real TLS, checking every response against the OpenAPI document
// the service publishes (with getkin/kin-openapi), so that the document and
// the service cannot drift apart unnoticed. Decode reads a response into
// the wire types of package client/api, which the service writes and the
// Go client reads, refusing any member the type does not know.
package apitest

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/legacy"

	mhttp "github.com/mailroom/mailroom/http"
)

// Client sends requests to one server.
type Client struct {
	T    testing.TB
	Base string // https://host:port
	HTTP *http.Client
}

// New returns a client for base that trusts roots (nil: the system's).
func New(t testing.TB, base string, roots *x509.CertPool) *Client {
	tr := &http.Transport{
		TLSClientConfig:     &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12},
		MaxIdleConnsPerHost: 64,
		ForceAttemptHTTP2:   true,
	}
	t.Cleanup(tr.CloseIdleConnections)
	return &Client{T: t, Base: base, HTTP: &http.Client{Transport: tr, Timeout: 30 * time.Second}}
}

// Response is an answer, read whole.
type Response struct {
	Status int
	Header http.Header
	Body   []byte

	t testing.TB // the test of the Client that got it, for Decode
}

// Decode decodes the body of r, a response of Client.Do, into T: one of
// the wire types of package github.com/mailroom/mailroom/client/api (such
// as api.Domain, api.List[api.Message] or api.ErrorBody). It fails the
// test when the body is not JSON, holds a member T has no field for (the
// service wrote something the wire type lacks), has a member of another
// JSON type than T's field, or holds more than one value.
//
//	d := apitest.Decode[api.Domain](c.Do(apitest.Request{Method: "GET", Path: "/v1/domains/example.com", Key: key}))
func Decode[T any](r *Response) T {
	if r.t == nil {
		panic("apitest.Decode: the response did not come from Client.Do; use DecodeBody")
	}
	r.t.Helper()
	v, err := DecodeBody[T](r.Body)
	if err != nil {
		r.t.Fatalf("%v\nbody: %s", err, r.Body)
	}
	return v
}

// DecodeBody is Decode without a test: it decodes body into T by Decode's
// rules and returns the error.
func DecodeBody[T any](body []byte) (T, error) {
	var v T
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&v); err != nil {
		return v, fmt.Errorf("decode the body as %T: %w", v, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return v, fmt.Errorf("decode the body as %T: data after its JSON value", v)
	}
	return v, nil
}

// Map decodes the body as a JSON object.
func (r *Response) Map() map[string]any {
	var m map[string]any
	_ = json.Unmarshal(r.Body, &m)
	return m
}

// Str returns a top-level string field of the body.
func (r *Response) Str(field string) string {
	s, _ := r.Map()[field].(string)
	return s
}

// Code returns the error code of an error body.
func (r *Response) Code() string { return r.Str("error") }

// Request describes one call; Body is marshalled to JSON unless it is a
// string or []byte, which are sent as they are.
type Request struct {
	Method  string
	Path    string
	Key     string
	Body    any
	Header  map[string]string
	NoCheck bool // skip the OpenAPI check (for deliberately odd requests)
}

// Do sends req and checks the response against the OpenAPI document.
func (c *Client) Do(req Request) *Response {
	c.T.Helper()
	var body io.Reader
	var raw []byte
	switch b := req.Body.(type) {
	case nil:
	case string:
		raw = []byte(b)
	case []byte:
		raw = b
	default:
		var err error
		if raw, err = json.Marshal(b); err != nil {
			c.T.Fatalf("marshal body: %v", err)
		}
	}
	if raw != nil {
		body = bytes.NewReader(raw)
	}
	hr, err := http.NewRequest(req.Method, c.Base+req.Path, body)
	if err != nil {
		c.T.Fatalf("request: %v", err)
	}
	if raw != nil {
		hr.Header.Set("Content-Type", "application/json")
	}
	if req.Key != "" {
		hr.Header.Set("Authorization", "Bearer "+req.Key)
	}
	for k, v := range req.Header {
		if v == "" {
			hr.Header.Del(k)
		} else {
			hr.Header.Set(k, v)
		}
	}
	resp, err := c.HTTP.Do(hr)
	if err != nil {
		c.T.Fatalf("%s %s: %v", req.Method, req.Path, err)
	}
	defer resp.Body.Close()
	got, err := io.ReadAll(resp.Body)
	if err != nil {
		c.T.Fatalf("%s %s: read body: %v", req.Method, req.Path, err)
	}
	out := &Response{Status: resp.StatusCode, Header: resp.Header, Body: got, t: c.T}
	if resp.Header.Get("X-Request-Id") == "" {
		c.T.Errorf("%s %s: no X-Request-Id header", req.Method, req.Path)
	}
	if !req.NoCheck {
		if err := Check(hr, out); err != nil {
			c.T.Errorf("%s %s → %d does not match the OpenAPI document: %v\nbody: %s", req.Method, req.Path, out.Status, err, got)
		}
	}
	return out
}

var (
	docOnce   sync.Once
	doc       *openapi3.T
	docRouter routers.Router
	docErr    error
)

func loadDoc() {
	// Raw messages are bytes: checked as an opaque string.
	openapi3filter.RegisterBodyDecoder("message/rfc822", openapi3filter.FileBodyDecoder)
	// The unsubscribe pages: checked as an opaque string too.
	openapi3filter.RegisterBodyDecoder("text/html", openapi3filter.FileBodyDecoder)
	loader := openapi3.NewLoader()
	doc, docErr = loader.LoadFromData(mhttp.OpenAPIDocument())
	if docErr == nil {
		docErr = doc.Validate(context.Background())
	}
	if docErr == nil {
		docRouter, docErr = legacy.NewRouter(doc)
	}
}

// Document returns the parsed, validated OpenAPI document.
func Document() (*openapi3.T, error) {
	docOnce.Do(loadDoc)
	return doc, docErr
}

// Check validates a response against the document: /v1's and Resend's
// routes (the operations tagged Resend-compatible, outside /v1) alike. A
// request that matches no documented operation (an unknown route, an
// unsupported method) must still answer the documented error shape:
// Mailroom's Error under /v1 and on the service routes, Resend's
// ResendError elsewhere (what the server answers a request with a key on
// a path outside /v1).
func Check(req *http.Request, resp *Response) error {
	docOnce.Do(loadDoc)
	if docErr != nil {
		return docErr
	}
	u := *req.URL
	u.Scheme, u.Host = "", "" // the document's server is "/"
	if resend := "/" + strings.TrimLeft(u.Path, "/"); !mailroomPath(resend) {
		// Resend's SDKs may send //emails, which the server takes as
		// /emails (a base URL ending in "/").
		u.Path, u.RawPath = resend, ""
	}
	r2 := req.Clone(context.Background())
	r2.URL = &u
	route, params, err := docRouter.FindRoute(r2)
	if err != nil {
		schema := "ResendError"
		if mailroomPath(u.Path) {
			schema = "Error"
		}
		return checkErrorBody(resp, schema)
	}
	input := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: &openapi3filter.RequestValidationInput{
			Request: r2, PathParams: params, Route: route,
			Options: &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc},
		},
		Status:  resp.Status,
		Header:  resp.Header,
		Options: &openapi3filter.Options{IncludeResponseStatus: true},
	}
	input.SetBodyBytes(resp.Body)
	return openapi3filter.ValidateResponse(context.Background(), input)
}

// mailroomPath says whether path is Mailroom's own API's (/v1 and the
// service routes) rather than Resend's.
func mailroomPath(path string) bool {
	return path == "/v1" || strings.HasPrefix(path, "/v1/") || path == "/healthz" || path == "/readyz"
}

func checkErrorBody(resp *Response, name string) error {
	schema := doc.Components.Schemas[name].Value
	var v any
	if err := json.Unmarshal(resp.Body, &v); err != nil {
		return err
	}
	if !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
		return &json.UnsupportedValueError{Str: "content type " + resp.Header.Get("Content-Type")}
	}
	return schema.VisitJSON(v, openapi3.EnableJSONSchema2020())
}
