package http_test

import (
	"context"
	"crypto/x509"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mailroom/mailroom/delivery"
	mhttp "github.com/mailroom/mailroom/http"
	"github.com/mailroom/mailroom/resend"
	"github.com/mailroom/mailroom/storetest"
)

// fileServer is a real TLS server on loopback serving the files a test
// attaches by path, and its roots.
func fileServer(t *testing.T) (*httptest.Server, *x509.CertPool) {
	ts := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/files/report.pdf":
			w.Header().Set("Content-Type", "application/pdf")
			_, _ = w.Write([]byte("%PDF-1.4 report"))
		case "/files/big.bin":
			_, _ = w.Write(make([]byte, 11<<20))
		case "/redirect":
			http.Redirect(w, r, "/files/report.pdf", http.StatusFound)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(ts.Close)
	pool := x509.NewCertPool()
	pool.AddCert(ts.Certificate())
	return ts, pool
}

func withFetcher(f resend.Fetcher) envOption {
	return func(s *mhttp.Server, _ *delivery.Deliverer) { s.AttachmentFetcher = f }
}

// An attachment by path is fetched, its type and name from the answer and
// the URL; failures are invalid attachments naming it and why.
func TestResendAttachmentPath(t *testing.T) {
	storetest.Each(t, func(t *testing.T, eng storetest.Engine) {
		ts, pool := fileServer(t)
		e := newResendEnv(t, eng, withFetcher(resend.NewAttachmentFetcher(nil, pool, true)))
		e.verifiedDomain(t, "shop.example")
		send := func(attachments ...map[string]any) map[string]any {
			b := resendEmail("a@example.net")
			b["attachments"] = attachments
			return b
		}
		id := resendID(t, e.resendPost(t, "/emails", send(
			map[string]any{"path": ts.URL + "/files/report.pdf"},
			map[string]any{"path": ts.URL + "/redirect", "filename": "r.pdf", "content_type": "application/x-pdf"},
			map[string]any{"filename": "inline.txt", "content": "QQ=="},
		), nil))
		m := e.stored(t, id)
		if a := m.Attachments[0]; a.Filename != "report.pdf" || a.ContentType != "application/pdf" || string(a.Content) != "%PDF-1.4 report" {
			t.Errorf("fetched %+v", a)
		}
		if a := m.Attachments[1]; a.Filename != "r.pdf" || a.ContentType != "application/x-pdf" || string(a.Content) != "%PDF-1.4 report" {
			t.Errorf("fetched after a redirect %+v", a)
		}
		if a := m.Attachments[2]; string(a.Content) != "A" {
			t.Errorf("inline %+v", a)
		}

		for _, c := range []struct {
			path string
			want string
		}{
			{ts.URL + "/files/missing.pdf", "404"},
			{ts.URL + "/files/big.bin", "10 MiB"},
			{"ftp://files.example/a.pdf", "https"},
		} {
			wantResendError(t, e.resendPost(t, "/emails", send(map[string]any{"path": c.path}), nil), 422, "invalid_attachment", "attachments[0]", c.want)
		}
		if n := e.messageCount(t); n != 1 {
			t.Fatalf("%d messages, want 1", n)
		}
	})
}

// With the guard on (no --webhooks-allow-private), a path on a loopback
// address is refused before any connection, and the dial refuses it too.
func TestResendAttachmentPathGuarded(t *testing.T) {
	ts, pool := fileServer(t)
	e := newResendEnv(t, storetest.SQLite, withFetcher(resend.NewAttachmentFetcher(nil, pool, false)))
	e.verifiedDomain(t, "shop.example")
	b := resendEmail("a@example.net")
	b["attachments"] = []map[string]any{{"path": ts.URL + "/files/report.pdf"}}
	wantResendError(t, e.resendPost(t, "/emails", b, nil), 422, "invalid_attachment", "attachments[0]", "loopback")

	// The dial itself: a name that resolves to a public address when it
	// is checked and to loopback when it is dialled (DNS rebinding).
	f := resend.NewAttachmentFetcher(&rebinding{}, pool, false)
	_, err := f.Fetch(t.Context(), "https://files.example:"+ts.URL[strings.LastIndex(ts.URL, ":")+1:]+"/files/report.pdf", 1<<20)
	if err == nil || !strings.Contains(err.Error(), "loopback") {
		t.Fatalf("fetch through a name resolving to loopback: %v", err)
	}
}

// rebinding answers a public address first, loopback after.
type rebinding struct{ calls atomic.Int32 }

func (r *rebinding) LookupNetIP(context.Context, string, string) ([]netip.Addr, error) {
	if r.calls.Add(1) == 1 {
		return []netip.Addr{netip.MustParseAddr("93.184.215.14")}, nil
	}
	return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
}

// Paths whose server never answers are waited for once per request, not
// once each: an email stops fetching at its first failed path, and the
// fetches of a whole batch share one deadline (AttachmentFetchTimeout),
// so the hanging server is asked once in either case.
func TestResendAttachmentPathsShareOneDeadline(t *testing.T) {
	var asked atomic.Int32
	release := make(chan struct{})
	ts := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		asked.Add(1)
		select {
		case <-r.Context().Done():
			// The client gave up: answer nothing, as a server that hangs
			// would. Returning would send a 200 with no body, which a
			// client whose deadline passed as it closed the connection
			// can still read (a CI run under load took attachments[0] so).
			panic(http.ErrAbortHandler)
		case <-release:
		}
	}))
	t.Cleanup(ts.Close)
	t.Cleanup(func() { close(release) })
	pool := x509.NewCertPool()
	pool.AddCert(ts.Certificate())
	shortly := func(s *mhttp.Server, _ *delivery.Deliverer) { s.AttachmentFetchTimeout = 300 * time.Millisecond }
	e := newResendEnv(t, storetest.SQLite, withFetcher(resend.NewAttachmentFetcher(nil, pool, true)), shortly)
	e.verifiedDomain(t, "shop.example")
	hanging := func(n int) map[string]any {
		b := resendEmail("a@example.net")
		var as []map[string]any
		for i := range n {
			as = append(as, map[string]any{"path": ts.URL + "/hang/" + strconv.Itoa(i)})
		}
		b["attachments"] = as
		return b
	}

	wantResendError(t, e.resendPost(t, "/emails", hanging(3), nil), 422, "invalid_attachment", "attachments[0]", "attachments[2]", "was not fetched")
	if n := asked.Swap(0); n != 1 {
		t.Errorf("an email of 3 hanging paths asked the server %d times, want 1", n)
	}
	wantResendError(t, e.resendPost(t, "/emails/batch", []any{hanging(1), hanging(1), hanging(1)}, nil), 422, "invalid_attachment")
	if n := asked.Swap(0); n != 1 {
		t.Errorf("a batch of 3 emails with a hanging path asked the server %d times, want 1", n)
	}
	if n := e.messageCount(t); n != 0 {
		t.Fatalf("%d messages, want none", n)
	}
}
