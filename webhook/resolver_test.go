package webhook

import (
	"strings"
	"testing"
	"time"

	"github.com/mailroom/mailroom"
	"github.com/mailroom/mailroom/dns"
	"github.com/mailroom/mailroom/dns/dnstest"
	"github.com/mailroom/mailroom/storetest"
)

// With a resolver of its own (serve --dns-server), the dispatcher finds an
// endpoint's host where the URL check found it, and the guard still checks
// the address it answers: a name that now points at loopback (DNS
// rebinding) is refused at the connection.
func TestDeliveryResolvesThroughItsResolver(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		names := dnstest.Start(t)
		// The receivers' certificate names example.com (httptest's).
		names.SetA("example.com", "127.0.0.1")
		resolver := &dns.Resolver{Server: names.Addr(), Timeout: 2 * time.Second}

		w := newWorld(t, e)
		rc := w.receiver(nil)
		_, port, _ := strings.Cut(strings.TrimPrefix(rc.srv.URL, "https://"), ":")
		ep, _ := w.endpoint("https://example.com:" + port + "/hooks/mailroom")
		d := w.dispatcher()
		d.Resolver = resolver
		w.start(d)
		w.testEvent(ep)
		if a := w.waitAttempts(ep, 1)[0]; a.Status != mailroom.WebhookAttemptSucceeded {
			t.Fatalf("through the resolver: %+v", a)
		}

		guarded := newWorld(t, e)
		rc2 := guarded.receiver(nil)
		_, port2, _ := strings.Cut(strings.TrimPrefix(rc2.srv.URL, "https://"), ":")
		ep2, _ := guarded.endpoint("https://example.com:" + port2 + "/hooks/mailroom")
		d2 := guarded.dispatcher()
		d2.Resolver, d2.AllowPrivate = resolver, false
		guarded.start(d2)
		guarded.testEvent(ep2)
		a := guarded.waitAttempts(ep2, 1)[0]
		if a.Status != mailroom.WebhookAttemptFailed || !strings.Contains(a.Error, "127.0.0.1 is a loopback address") {
			t.Fatalf("a name resolving to loopback: %+v", a)
		}
		if n := len(rc2.requests()); n != 0 {
			t.Fatalf("the receiver behind the rebound name got %d requests", n)
		}
	})
}
