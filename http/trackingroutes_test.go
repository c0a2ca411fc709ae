package http_test

import (
	"bytes"
	"encoding/json"
	"image/gif"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mailroom/mailroom"
	"github.com/mailroom/mailroom/delivery"
	mhttp "github.com/mailroom/mailroom/http"
	"github.com/mailroom/mailroom/storetest"
	"github.com/mailroom/mailroom/tracking"
)

const trackingBrowser = "Mozilla/5.0 (Macintosh; Intel Mac OS X 14_5) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Safari/605.1.15"

// trackingEnv is the test service with tracking answered under a key of
// the test's, and a message delivered to ann@example.net a minute ago.
type trackingEnv struct {
	*env
	tokens    *tracking.Tokens
	messageID string
	// raw sends requests as a mail program does: no key, no redirects
	// followed.
	raw *http.Client
}

func newTrackingEnv(t *testing.T, eng storetest.Engine) *trackingEnv {
	t.Helper()
	tokens, err := tracking.NewTokens([]byte("the tracking key of this test"))
	if err != nil {
		t.Fatal(err)
	}
	e := newEnvWithStore(t, eng.Open(t), func(srv *mhttp.Server, _ *delivery.Deliverer) {
		srv.Tracking = &tracking.Service{Tokens: tokens, Store: srv.Store, Now: srv.Sender.Now, Log: slog.New(slog.DiscardHandler)}
	})
	e.verifiedDomain(t, "shop.example")
	e.mailDomain("example.net")
	r := e.send(t, map[string]any{"from": "orders@shop.example", "to": "ann@example.net", "subject": "Your order",
		"html": `<p><a href="https://shop.example/o/7">Your order</a></p>`})
	id := r.Str("messageId")
	e.waitStatus(t, id, "delivered")
	// A reader, not a scanner: clicks come a minute after delivery.
	e.clock.Advance(time.Minute)
	raw := *e.HTTP
	raw.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return &trackingEnv{env: e, tokens: tokens, messageID: id, raw: &raw}
}

func (e *trackingEnv) get(t *testing.T, method, path string, header map[string]string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, e.Base+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := e.raw.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, body
}

func (e *trackingEnv) clickToken(t *testing.T, url string) string {
	t.Helper()
	tok, err := e.tokens.SealLink(tracking.Link{MessageID: e.messageID, Recipient: "ann@example.net", Index: 0, URL: url})
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// engagement reads the recipient and its engagement events from the store.
func (e *trackingEnv) engagement(t *testing.T) (*mailroom.Recipient, []*mailroom.Event) {
	t.Helper()
	return storetest.Engagement(t, e.store, e.acct.ID, e.messageID)
}

// A click, with no key, redirects to exactly the link's address and
// writes email.clicked with it, the client's IP truncated (the
// connection's: X-Forwarded-For is not trusted), its User-Agent and
// machine false; a HEAD is machine; a tampered token, or an open token
// at the click route, is a 404 page that redirects nowhere and writes
// nothing; other methods are 405. A request carrying Authorization, which
// outside /v1 may be Resend's, still reaches the route.
func TestTrackedClickRedirectsAndRecords(t *testing.T) {
	storetest.Each(t, func(t *testing.T, eng storetest.Engine) {
		e := newTrackingEnv(t, eng)
		const url = "https://bücher.example/straße/ü?q=ö&r=%41&s=1#frag"
		tok := e.clickToken(t, url)

		resp, body := e.get(t, "GET", "/t/c/"+tok, map[string]string{"User-Agent": trackingBrowser, "X-Forwarded-For": "198.51.100.7"})
		if resp.StatusCode != 302 || resp.Header.Get("Location") != url || len(body) != 0 {
			t.Fatalf("click: %d Location %q body %q", resp.StatusCode, resp.Header.Get("Location"), body)
		}
		if cc, rp := resp.Header.Get("Cache-Control"), resp.Header.Get("Referrer-Policy"); cc != "no-store" || rp != "no-referrer" {
			t.Errorf("Cache-Control %q, Referrer-Policy %q", cc, rp)
		}
		resp, _ = e.get(t, "HEAD", "/t/c/"+tok, map[string]string{"User-Agent": trackingBrowser, "Authorization": "Bearer re_not_a_key"})
		if resp.StatusCode != 302 || resp.Header.Get("Location") != url {
			t.Fatalf("HEAD with Authorization: %d %q", resp.StatusCode, resp.Header.Get("Location"))
		}

		pixel, _ := e.tokens.SealPixel(tracking.Pixel{MessageID: e.messageID, Recipient: "ann@example.net"})
		tampered := tok[:20] + flip(tok[20]) + tok[21:]
		for _, bad := range []string{tampered, pixel, "garbage", strings.Repeat("A", 7000)} {
			resp, body := e.get(t, "GET", "/t/c/"+bad, map[string]string{"User-Agent": trackingBrowser})
			if resp.StatusCode != 404 || resp.Header.Get("Location") != "" || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") ||
				!strings.Contains(string(body), "This link is not valid") {
				t.Fatalf("bad token %.30s…: %d %q %s", bad, resp.StatusCode, resp.Header.Get("Location"), body)
			}
		}
		resp, _ = e.get(t, "POST", "/t/c/"+tok, nil)
		if resp.StatusCode != 405 || resp.Header.Get("Allow") != "GET, HEAD" {
			t.Fatalf("POST: %d Allow %q", resp.StatusCode, resp.Header.Get("Allow"))
		}

		r, events := e.engagement(t)
		want := []mailroom.Engagement{
			{URL: url, UserAgent: trackingBrowser, IP: "127.0.0.0", Machine: false},
			{URL: url, UserAgent: trackingBrowser, IP: "127.0.0.0", Machine: true},
		}
		if r.Clicks != 2 || len(events) != 2 {
			t.Fatalf("%d clicks, %d events; want 2 of each", r.Clicks, len(events))
		}
		for i, ev := range events {
			if ev.Type != mailroom.EventEmailClicked || engagementOf(t, ev) != want[i] {
				t.Errorf("event %d: %s %s, want %+v", i, ev.Type, ev.Data, want[i])
			}
		}
	})
}

// The pixel answers a 1×1 GIF that nobody caches, whatever the token,
// and may be shown by a page of another origin (a webmail); a valid
// token's first open writes email.opened, a later one (an image proxy's)
// is counted.
func TestTrackingPixelAlwaysAnswers(t *testing.T) {
	storetest.Each(t, func(t *testing.T, eng storetest.Engine) {
		e := newTrackingEnv(t, eng)
		pixel, _ := e.tokens.SealPixel(tracking.Pixel{MessageID: e.messageID, Recipient: "ann@example.net"})
		click := e.clickToken(t, "https://shop.example/o/7")
		for _, c := range []struct{ token, ua string }{
			{pixel, trackingBrowser},
			{pixel, "Mozilla/5.0 (Windows NT 5.1; rv:11.0) Gecko Firefox/11.0 (via ggpht.com GoogleImageProxy)"},
			{"garbage", trackingBrowser},
			{click, trackingBrowser},
			{pixel[:len(pixel)-2], ""},
			{strings.Repeat("A", 7000), ""},
			{"", trackingBrowser},
			{pixel + "/x", trackingBrowser},
		} {
			for _, method := range []string{"GET", "HEAD"} {
				resp, body := e.get(t, method, "/t/o/"+c.token, map[string]string{"User-Agent": c.ua})
				h := resp.Header
				if resp.StatusCode != 200 || h.Get("Content-Type") != "image/gif" ||
					h.Get("Cache-Control") != "no-cache, no-store, must-revalidate, private" || h.Get("Pragma") != "no-cache" ||
					h.Get("Expires") != "0" || h.Get("Cross-Origin-Resource-Policy") != "cross-origin" {
					t.Fatalf("%s %.20s…: %d %v", method, c.token, resp.StatusCode, h)
				}
				if method == "HEAD" {
					continue
				}
				img, err := gif.Decode(bytes.NewReader(body))
				if err != nil || img.Bounds().Dx() != 1 || img.Bounds().Dy() != 1 {
					t.Fatalf("pixel: %v %v", err, img)
				}
				if _, _, _, a := img.At(0, 0).RGBA(); a != 0 {
					t.Errorf("the pixel is not transparent")
				}
			}
		}
		r, events := e.engagement(t)
		// The pixel's GET and HEAD, each by a browser and a proxy.
		if r.Opens != 4 || len(events) != 1 {
			t.Fatalf("%d opens, %d events; want 4 and 1", r.Opens, len(events))
		}
		if got := engagementOf(t, events[0]); events[0].Type != mailroom.EventEmailOpened ||
			got != (mailroom.Engagement{UserAgent: trackingBrowser, IP: "127.0.0.0"}) {
			t.Errorf("open event %s %+v", events[0].Type, got)
		}
	})
}

// Without a tracking service the pixel still answers and every click is a
// 404: no mail shows a broken image, no link redirects unchecked.
func TestTrackingRoutesWithoutService(t *testing.T) {
	srv := &mhttp.Server{Log: slog.New(slog.DiscardHandler)}
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(ts.Close)
	resp, err := http.Get(ts.URL + "/t/o/anything")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "image/gif" {
		t.Errorf("pixel: %d %q", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err = c.Get(ts.URL + "/t/c/anything")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 404 || resp.Header.Get("Location") != "" {
		t.Errorf("click: %d %q", resp.StatusCode, resp.Header.Get("Location"))
	}
}

// engagementOf reads what an engagement event read back from the store
// tells, as webhooks and /v1/events show it.
func engagementOf(t *testing.T, ev *mailroom.Event) mailroom.Engagement {
	t.Helper()
	var g mailroom.Engagement
	if err := json.Unmarshal(ev.Data, &g); err != nil {
		t.Fatalf("event %s data %s: %v", ev.Type, ev.Data, err)
	}
	return g
}
