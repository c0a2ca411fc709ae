package mtasts_test

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	mdns "github.com/miekg/dns"

	"github.com/mailroom/mailroom"
	"github.com/mailroom/mailroom/mtasts"
	"github.com/mailroom/mailroom/poll"
	"github.com/mailroom/mailroom/storetest"
)

// An enforce policy is fetched once, then served from the cache: the
// second Lookup makes no request. It is in the store as served.
func TestEnforcePolicyFetchedAndCached(t *testing.T) {
	w := newWorld(t)
	p := w.node()
	l := lookup(p, false)
	wantPolicy(t, l, "1", mailroom.MTASTSEnforce)
	if !slices.Equal(l.Policy.MX, []string{"mx1.example.test", "*.mx.example.test"}) || l.Policy.MaxAge != 86400*time.Second ||
		l.Policy.Text != enforcePolicy || l.Policy.Domain != domain || !l.Policy.FetchedAt.Equal(t0) {
		t.Fatalf("the policy is %+v", l.Policy)
	}
	if !l.Policy.MatchesMX("a.mx.example.test") || l.Policy.MatchesMX("mx2.example.test") {
		t.Fatal("the policy's mx patterns match the wrong hosts")
	}
	w.wantRequests(1)
	wantPolicy(t, lookup(p, false), "1", mailroom.MTASTSEnforce)
	w.wantRequests(1)
	if s := w.stored(); s == nil || s.ID != "1" || s.Text != enforcePolicy || !s.FetchedAt.Equal(t0) {
		t.Fatalf("the store holds %+v", s)
	}
	// A domain name as given in an address: any case, a trailing dot.
	wantPolicy(t, p.Lookup(context.Background(), "Example.TEST.", false), "1", mailroom.MTASTSEnforce)
	w.wantRequests(1)
}

// Within the hour the TXT record is not looked up: a new id is not seen.
// After it, the same id is not fetched again (only its check renewed, in
// the store), and a changed id is.
func TestTXTIDDecidesTheRefetch(t *testing.T) {
	w := newWorld(t)
	p := w.node()
	wantPolicy(t, lookup(p, false), "1", mailroom.MTASTSEnforce)

	w.advance(90 * time.Minute)
	wantPolicy(t, lookup(p, false), "1", mailroom.MTASTSEnforce)
	w.wantRequests(1)
	if s := w.stored(); !s.CheckedAt.Equal(t0.Add(90*time.Minute)) || !s.FetchedAt.Equal(t0) {
		t.Fatalf("after the same id was seen again the store has fetched %v, checked %v", s.FetchedAt, s.CheckedAt)
	}

	w.setID("2")
	w.setPolicy(strings.Replace(enforcePolicy, "mode: enforce", "mode: testing", 1))
	w.advance(59 * time.Minute)
	wantPolicy(t, lookup(p, false), "1", mailroom.MTASTSEnforce)
	w.wantRequests(1)

	w.advance(time.Minute)
	wantPolicy(t, lookup(p, false), "2", mailroom.MTASTSTesting)
	w.wantRequests(2)
	if s := w.stored(); s.ID != "2" || s.Mode != mailroom.MTASTSTesting {
		t.Fatalf("the store holds %+v", s)
	}
}

// A Lookup after a failed attempt looks the TXT record up at once.
func TestAfterFailureLooksUpTheTXTRecord(t *testing.T) {
	w := newWorld(t)
	p := w.node()
	wantPolicy(t, lookup(p, false), "1", mailroom.MTASTSEnforce)
	w.setID("2")
	w.setPolicy(strings.Replace(enforcePolicy, "mode: enforce", "mode: testing", 1))
	w.advance(time.Minute)
	wantPolicy(t, lookup(p, false), "1", mailroom.MTASTSEnforce)
	wantPolicy(t, lookup(p, true), "2", mailroom.MTASTSTesting)
	w.wantRequests(2)
}

// A policy stays in force when its server has gone and the TXT record
// names a new id (RFC 8461 §5.1), until it expires; then the fetch's
// failure is what the Lookup reports, and the stored policy is gone.
func TestPolicyKeptWhenItsServerGoes(t *testing.T) {
	w := newWorld(t)
	p := w.node()
	wantPolicy(t, lookup(p, false), "1", mailroom.MTASTSEnforce)
	w.srv.Close()
	w.setID("2")
	w.advance(2 * time.Hour)
	wantPolicy(t, lookup(p, false), "1", mailroom.MTASTSEnforce)
	wantPolicy(t, lookup(p, true), "1", mailroom.MTASTSEnforce)
	// Another node, starting now, has it from the store.
	wantPolicy(t, lookup(w.node(), true), "1", mailroom.MTASTSEnforce)

	w.advance(22*time.Hour - time.Second)
	wantPolicy(t, lookup(p, true), "1", mailroom.MTASTSEnforce)
	w.advance(time.Second) // fetched at t0 with max_age 86400: expired
	wantFailure(t, lookup(p, false), mailroom.TLSFailSTSPolicyFetch)
	if s := w.stored(); s != nil {
		t.Fatalf("expired and not replaced, the store still holds %+v", s)
	}
}

// A policy stays in force when the TXT record disappears (it may be an
// attacker's doing, RFC 8461 §5.1) until it expires; then the domain has
// no policy, and the stored one is deleted.
func TestPolicyKeptWhenTheTXTRecordGoes(t *testing.T) {
	w := newWorld(t)
	p := w.node()
	wantPolicy(t, lookup(p, false), "1", mailroom.MTASTSEnforce)
	w.dns.Remove("_mta-sts." + domain)
	w.advance(2 * time.Hour)
	wantPolicy(t, lookup(p, false), "1", mailroom.MTASTSEnforce)
	wantPolicy(t, lookup(p, true), "1", mailroom.MTASTSEnforce)
	w.advance(22 * time.Hour)
	wantNone(t, lookup(p, false))
	if s := w.stored(); s != nil {
		t.Fatalf("expired, the store still holds %+v", s)
	}
	w.wantRequests(1)
}

// An expired policy is fetched again even when the id is the same.
func TestExpiredPolicyFetchedAgain(t *testing.T) {
	w := newWorld(t)
	p := w.node()
	w.setPolicy(strings.Replace(enforcePolicy, "max_age: 86400", "max_age: 600", 1))
	wantPolicy(t, lookup(p, false), "1", mailroom.MTASTSEnforce)
	w.advance(599 * time.Second)
	wantPolicy(t, lookup(p, false), "1", mailroom.MTASTSEnforce)
	w.wantRequests(1)
	w.advance(time.Second)
	l := lookup(p, false)
	wantPolicy(t, l, "1", mailroom.MTASTSEnforce)
	w.wantRequests(2)
	if !l.Policy.FetchedAt.Equal(t0.Add(600 * time.Second)) {
		t.Fatalf("refetched, the policy says fetched at %v", l.Policy.FetchedAt)
	}
}

// Mode none withdraws the policy: the cached one is deleted, the Lookup
// gives none, and the same id is not fetched again.
func TestModeNoneWithdrawsThePolicy(t *testing.T) {
	w := newWorld(t)
	p := w.node()
	wantPolicy(t, lookup(p, false), "1", mailroom.MTASTSEnforce)
	w.setID("2")
	w.setPolicy("version: STSv1\nmode: none\nmax_age: 86400\n")
	wantNone(t, lookup(p, true))
	if s := w.stored(); s != nil {
		t.Fatalf("withdrawn, the store still holds %+v", s)
	}
	w.wantRequests(2)
	w.advance(2 * time.Hour)
	wantNone(t, lookup(p, false))
	wantNone(t, lookup(p, true))
	w.wantRequests(2)
}

// A redirect is not followed (RFC 8461 §3.3), even to a valid policy on
// the same host: a fetch error.
func TestRedirectRefused(t *testing.T) {
	w := newWorld(t)
	var followed bool
	var mu sync.Mutex
	w.setHandler(func(rw http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/elsewhere.txt" {
			mu.Lock()
			followed = true
			mu.Unlock()
			rw.Header().Set("Content-Type", "text/plain")
			_, _ = rw.Write([]byte(enforcePolicy))
			return
		}
		http.Redirect(rw, r, "/elsewhere.txt", http.StatusMovedPermanently)
	})
	l := lookup(w.node(), false)
	wantFailure(t, l, mailroom.TLSFailSTSPolicyFetch)
	if !strings.Contains(l.Detail, "301") {
		t.Errorf("the detail %q does not say what was answered", l.Detail)
	}
	mu.Lock()
	defer mu.Unlock()
	if followed {
		t.Fatal("the redirect was followed")
	}
}

// Only a 200 is a policy.
func TestNotFoundIsAFetchError(t *testing.T) {
	w := newWorld(t)
	w.setHandler(http.NotFound)
	wantFailure(t, lookup(w.node(), false), mailroom.TLSFailSTSPolicyFetch)
}

// A policy of up to 64 KiB is read; a larger one is refused, whether its
// length is announced or not (chunked).
func TestPolicySizeLimit(t *testing.T) {
	pad := func(size int) string {
		// Unknown fields are ignored: pad with one, to exactly size bytes.
		head := enforcePolicy + "x: "
		return head + strings.Repeat("a", size-len(head)-1) + "\n"
	}
	for _, tc := range []struct {
		name    string
		size    int
		chunked bool
		ok      bool
	}{
		{"64 KiB", mtasts.MaxPolicySize, false, true},
		{"64 KiB chunked", mtasts.MaxPolicySize, true, true},
		{"a byte more", mtasts.MaxPolicySize + 1, false, false},
		{"a byte more chunked", mtasts.MaxPolicySize + 1, true, false},
		{"a megabyte chunked", 1 << 20, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t)
			text := pad(tc.size)
			w.setHandler(func(rw http.ResponseWriter, r *http.Request) {
				rw.Header().Set("Content-Type", "text/plain")
				if tc.chunked {
					_, _ = rw.Write([]byte(text[:100]))
					rw.(http.Flusher).Flush()
					_, _ = rw.Write([]byte(text[100:]))
					return
				}
				_, _ = rw.Write([]byte(text))
			})
			l := lookup(w.node(), false)
			if tc.ok {
				wantPolicy(t, l, "1", mailroom.MTASTSEnforce)
				if len(l.Policy.Text) != tc.size {
					t.Fatalf("the policy's text is %d bytes, want %d", len(l.Policy.Text), tc.size)
				}
				return
			}
			wantFailure(t, l, mailroom.TLSFailSTSPolicyInvalid)
		})
	}
}

// A policy host that sends without end is read only to the bound: the
// fetch fails at once as an invalid policy, not at the timeout.
func TestEndlessPolicyReadOnlyToTheBound(t *testing.T) {
	w := newWorld(t)
	w.setHandler(func(rw http.ResponseWriter, r *http.Request) {
		rw.Header().Set("Content-Type", "text/plain")
		chunk := []byte(strings.Repeat("x: endless\n", 1000))
		for r.Context().Err() == nil {
			if _, err := rw.Write(chunk); err != nil {
				return
			}
		}
	})
	start := time.Now()
	l := lookup(w.node(func(o *mtasts.Options) { o.Timeout = 5 * time.Second }), false)
	wantFailure(t, l, mailroom.TLSFailSTSPolicyInvalid)
	if took := time.Since(start); took > 4*time.Second {
		t.Fatalf("the fetch took %v: it read on", took)
	}
}

// The policy host's certificate must be valid for mta-sts.<domain> and
// chain to a trusted root: else sts-webpki-invalid, and no policy.
func TestPolicyHostCertificateVerified(t *testing.T) {
	t.Run("another name", func(t *testing.T) {
		w := newWorld(t, "mta-sts.other.test", "example.test")
		l := lookup(w.node(), false)
		wantFailure(t, l, mailroom.TLSFailSTSWebPKIInvalid)
		if w.stored() != nil {
			t.Fatal("a policy from an unverified host was stored")
		}
	})
	t.Run("another CA", func(t *testing.T) {
		w := newWorld(t)
		other := newWorld(t)
		wantFailure(t, lookup(w.node(func(o *mtasts.Options) { o.RootCAs = other.ca.Pool() }), false),
			mailroom.TLSFailSTSWebPKIInvalid)
	})
	t.Run("the right name", func(t *testing.T) {
		w := newWorld(t, "mta-sts.example.test")
		wantPolicy(t, lookup(w.node(), false), "1", mailroom.MTASTSEnforce)
	})
}

// A policy that does not parse, or is not served as text/plain, is
// sts-policy-invalid.
func TestMalformedPolicy(t *testing.T) {
	t.Run("no mx, no max_age", func(t *testing.T) {
		w := newWorld(t)
		w.setPolicy("version: STSv1\nmode: enforce\n")
		wantFailure(t, lookup(w.node(), false), mailroom.TLSFailSTSPolicyInvalid)
	})
	t.Run("served as HTML", func(t *testing.T) {
		w := newWorld(t)
		w.setHandler(func(rw http.ResponseWriter, r *http.Request) {
			rw.Header().Set("Content-Type", "text/html")
			_, _ = rw.Write([]byte(enforcePolicy))
		})
		wantFailure(t, lookup(w.node(), false), mailroom.TLSFailSTSPolicyInvalid)
	})
	t.Run("a bad new policy keeps the cached one", func(t *testing.T) {
		w := newWorld(t)
		p := w.node()
		wantPolicy(t, lookup(p, false), "1", mailroom.MTASTSEnforce)
		w.setID("2")
		w.setPolicy("version: STSv1\nmode: enforce\nmax_age: 86400\n")
		wantPolicy(t, lookup(p, true), "1", mailroom.MTASTSEnforce)
		w.wantRequests(2)
	})
}

// A failed fetch is remembered for RetryInterval, so that a broken policy
// host is not asked per delivery, but an attempt after a failure asks.
func TestFailedFetchRetriedLater(t *testing.T) {
	w := newWorld(t)
	w.setHandler(http.NotFound)
	p := w.node()
	wantFailure(t, lookup(p, false), mailroom.TLSFailSTSPolicyFetch)
	wantFailure(t, lookup(p, false), mailroom.TLSFailSTSPolicyFetch)
	w.wantRequests(1)
	wantFailure(t, lookup(p, true), mailroom.TLSFailSTSPolicyFetch)
	w.wantRequests(2)
	w.setHandler(nil)
	w.advance(mtasts.RetryInterval)
	wantPolicy(t, lookup(p, false), "1", mailroom.MTASTSEnforce)
	w.wantRequests(3)
}

// A domain without the TXT record has no policy, and that is remembered
// for an hour: a record published meanwhile is seen after it (or at once
// after a failed attempt).
func TestNoRecordRememberedForAnHour(t *testing.T) {
	w := newWorld(t)
	w.dns.Remove("_mta-sts." + domain)
	p := w.node()
	wantNone(t, lookup(p, false))
	w.setID("1")
	w.advance(59 * time.Minute)
	wantNone(t, lookup(p, false))
	w.wantRequests(0)
	w.advance(time.Minute)
	wantPolicy(t, lookup(p, false), "1", mailroom.MTASTSEnforce)

	w2 := newWorld(t)
	w2.dns.Remove("_mta-sts." + domain)
	p2 := w2.node()
	wantNone(t, lookup(p2, false))
	w2.setID("1")
	wantPolicy(t, lookup(p2, true), "1", mailroom.MTASTSEnforce)
}

// Several STS records, or an invalid one, are no policy (RFC 8461 §3.1):
// nothing is fetched and nothing is reported.
func TestUnusableTXTRecords(t *testing.T) {
	for name, txts := range map[string][]string{
		"two records":       {"v=STSv1; id=1", "v=STSv1; id=2"},
		"an invalid record": {"v=STSv1; id=not-alphanumeric"},
	} {
		t.Run(name, func(t *testing.T) {
			w := newWorld(t)
			w.dns.SetTXT("_mta-sts."+domain, txts...)
			wantNone(t, lookup(w.node(), false))
			w.wantRequests(0)
		})
	}
	t.Run("other records beside it", func(t *testing.T) {
		w := newWorld(t)
		w.dns.SetTXT("_mta-sts."+domain, "v=spf1 -all", "v=STSv1; id=7")
		wantPolicy(t, lookup(w.node(), false), "7", mailroom.MTASTSEnforce)
	})
}

// When the DNS cannot answer, what is cached stays in force; with nothing
// cached there is no policy and nothing to report.
func TestDNSFailureKeepsWhatIsCached(t *testing.T) {
	w := newWorld(t)
	p := w.node()
	wantPolicy(t, lookup(p, false), "1", mailroom.MTASTSEnforce)
	w.dns.Fail("_mta-sts."+domain, mdns.RcodeServerFailure)
	w.advance(2 * time.Hour)
	wantPolicy(t, lookup(p, true), "1", mailroom.MTASTSEnforce)
	if s := w.stored(); s == nil || !s.CheckedAt.Equal(t0) {
		t.Fatalf("after a DNS failure the store holds %+v", s)
	}

	w2 := newWorld(t)
	w2.dns.Fail("_mta-sts."+domain, mdns.RcodeServerFailure)
	wantNone(t, lookup(w2.node(), false))
	w2.wantRequests(0)
}

// The policy host's addresses come from the configured DNS server too:
// without its A record the fetch fails, though the server is up.
func TestPolicyHostResolvedThroughTheResolver(t *testing.T) {
	w := newWorld(t)
	w.dns.Remove("mta-sts." + domain)
	wantFailure(t, lookup(w.node(), false), mailroom.TLSFailSTSPolicyFetch)
	w.wantRequests(0)
}

// Two nodes share the store: the second has the first's policy without
// fetching it, on both engines.
func TestTwoNodesShareThePolicy(t *testing.T) {
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		w := newWorld(t)
		w.store = e.Open(t)
		a, b := w.node(), w.node()
		wantPolicy(t, lookup(a, false), "1", mailroom.MTASTSEnforce)
		wantPolicy(t, lookup(b, false), "1", mailroom.MTASTSEnforce)
		w.wantRequests(1)

		// A renews the check after an hour; B, reading it, makes no DNS
		// query either: its id change is not seen until the next hour.
		w.advance(time.Hour)
		wantPolicy(t, lookup(a, false), "1", mailroom.MTASTSEnforce)
		w.setID("2")
		w.setPolicy(strings.Replace(enforcePolicy, "mode: enforce", "mode: testing", 1))
		wantPolicy(t, lookup(b, false), "1", mailroom.MTASTSEnforce)
		// A fetches the new id; B, told of a failure, finds it in the
		// store under the id the TXT record names, and fetches nothing.
		wantPolicy(t, lookup(a, true), "2", mailroom.MTASTSTesting)
		wantPolicy(t, lookup(b, true), "2", mailroom.MTASTSTesting)
		w.wantRequests(2)
	})
}

// holdPolicy makes the policy server hold each request until the function
// it returns is called (at the latest when t ends, before the server's
// Close, which waits for the handler); then it serves enforcePolicy.
func (w *world) holdPolicy(t *testing.T) (free func()) {
	release := make(chan struct{})
	free = sync.OnceFunc(func() { close(release) })
	t.Cleanup(free)
	w.setHandler(func(rw http.ResponseWriter, r *http.Request) {
		<-release
		rw.Header().Set("Content-Type", "text/plain")
		_, _ = rw.Write([]byte(enforcePolicy))
	})
	return free
}

// Concurrent Lookups of one domain make one fetch: all wait for it.
func TestConcurrentLookupsShareOneFetch(t *testing.T) {
	w := newWorld(t)
	free := w.holdPolicy(t)
	p := w.node()
	const n = 20
	var started sync.WaitGroup
	started.Add(n)
	results := make(chan mailroom.MTASTSLookup, n)
	for range n {
		go func() {
			started.Done()
			results <- lookup(p, false)
		}()
	}
	started.Wait()
	// The first request has arrived and is held; the others are started
	// and, without a shared flight, would each send their own.
	poll.Until(t, 10*time.Second, "a request at the policy server", func() bool { return w.requests.Load() > 0 })
	free()
	for range n {
		wantPolicy(t, <-results, "1", mailroom.MTASTSEnforce)
	}
	w.wantRequests(1)
}

// A caller that gives up waiting does not cancel the fetch the others
// share: it gets no policy, and the fetch completes and is cached.
func TestGivingUpLeavesTheFetchRunning(t *testing.T) {
	w := newWorld(t)
	free := w.holdPolicy(t)
	p := w.node()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan mailroom.MTASTSLookup, 1)
	go func() { done <- p.Lookup(ctx, domain, false) }()
	poll.Until(t, 10*time.Second, "a request at the policy server", func() bool { return w.requests.Load() > 0 })
	cancel()
	wantNone(t, <-done)
	free()
	poll.Until(t, 10*time.Second, "the policy stored", func() bool { return w.stored() != nil })
	wantPolicy(t, lookup(p, false), "1", mailroom.MTASTSEnforce)
	w.wantRequests(1)
}
