package sites

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/mailroom/mailroom"
)

func TestDomainsOfOneProviderShareASite(t *testing.T) {
	c := newClock()
	tr := newTracker(t, c, Options{})
	for _, d := range []string{"gmail.com", "customer.example"} {
		p := tr.Site(d, []string{"alt1.aspmx.l.google.com.", "ASPMX.L.GOOGLE.COM"})
		if p.Name != "google" {
			t.Fatalf("%s's site = %q, want google", d, p.Name)
		}
		if site, ok := tr.SiteOf(strings.ToUpper(d)); !ok || site != "google" {
			t.Fatalf("SiteOf(%s) = %q, %v", d, site, ok)
		}
	}
	if p := tr.Site("small.example", []string{"mx2.small.example", "mx1.small.example"}); p.Name != "mx1.small.example,mx2.small.example" || p.MaxConnections != 10 {
		t.Fatalf("an unknown destination's profile = %+v, want the default named by its MX hosts", p)
	}
	if _, ok := tr.SiteOf("never.example"); ok {
		t.Fatal("SiteOf a domain never seen")
	}
	tr.Reserve(mailroom.SiteKey{Site: "google"}, c.Now())
	if s := state(t, tr, mailroom.SiteKey{Site: "google"}); !slices.Equal(s.MX, []string{"alt1.aspmx.l.google.com", "aspmx.l.google.com"}) {
		t.Fatalf("google's MX hosts in the snapshot = %v", s.MX)
	}
}

func TestReloadedPolicyKeepsWhatWasLearned(t *testing.T) {
	c := newClock()
	tr := newTracker(t, c, Options{})
	learned := mailroom.SiteKey{Site: "limited", Source: "192.0.2.1"}
	fresh := mailroom.SiteKey{Site: "limited", Source: "192.0.2.2"}
	event(tr, c, learned, mailroom.SiteConnected)
	event(tr, c, learned, mailroom.SiteConnected)
	throttle(tr, c, learned, true) // 2 connections, 300 a minute
	tr.MaxConnections(fresh)
	signalled(tr)

	p := testPolicy()
	p.Sites[0].MaxConnections, p.Sites[0].MaxRate = 3, 1200
	tr.SetPolicy(p)
	if !signalled(tr) {
		t.Fatal("a reload did not signal Changed")
	}
	if s := state(t, tr, learned); s.MaxConnections != 2 || s.Rate != 300 || s.MaxRate != 1200 {
		t.Fatalf("learned key after a reload: %d connections, rate %v of %v; want 2, 300 of 1200", s.MaxConnections, s.Rate, s.MaxRate)
	}
	if s := state(t, tr, fresh); s.MaxConnections != 3 || s.Rate != 1200 {
		t.Fatalf("key at the old limits after a reload: %d connections, rate %v; want 3, 1200", s.MaxConnections, s.Rate)
	}
	// Lower limits than what was learned: the new limits.
	p.Sites[0].MaxConnections, p.Sites[0].MaxRate = 1, 100
	tr.SetPolicy(p)
	if s := state(t, tr, learned); s.MaxConnections != 1 || s.Rate != 100 {
		t.Fatalf("learned key under lower limits: %d connections, rate %v; want 1, 100", s.MaxConnections, s.Rate)
	}
	// A domain moves to the operator's site for it.
	p.Sites = append([]mailroom.SiteProfile{{Name: "mine", Domains: []string{"open.test"}, MaxConnections: 2}}, p.Sites...)
	tr.SetPolicy(p)
	if site, _ := tr.SiteOf("open.test"); site != "mine" {
		t.Fatalf("open.test's site after the reload = %q, want mine", site)
	}
	if got := tr.Capacity("mine"); got != 2 {
		t.Fatalf("Capacity of the new site = %d, want 2", got)
	}
}

func TestSnapshotJSON(t *testing.T) {
	c := newClock()
	tr := newTracker(t, c, Options{})
	event(tr, c, limited, mailroom.SiteConnected)
	throttle(tr, c, limited, false)
	raw, err := json.Marshal(tr.Snapshot())
	if err != nil {
		t.Fatal(err)
	}
	var got []map[string]any
	if err := json.Unmarshal(raw, &got); err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 {
		t.Fatalf("snapshot %s", raw)
	}
	var keys []string
	for k := range got[0] {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	want := []string{"connections", "maxConnections", "maxRate", "mx", "rate", "recentReplies", "site", "source", "suspendedUntil"}
	if !slices.Equal(keys, want) {
		t.Fatalf("snapshot fields %v, want %v", keys, want)
	}
	replies := got[0]["recentReplies"].([]any)
	if r := replies[0].(map[string]any); r["code"] != 421.0 || r["enhanced"] != "4.7.0" || r["mx"] != "mx1.limited" || r["text"] != "Try again later" {
		t.Fatalf("reply %v", r)
	}
	if got[0]["suspendedUntil"] != nil {
		t.Fatalf("suspendedUntil = %v, want null", got[0]["suspendedUntil"])
	}
}

func TestMetricsPerSite(t *testing.T) {
	c := newClock()
	tr := newTracker(t, c, Options{})
	reg := prometheus.NewPedanticRegistry()
	tr.Metrics(reg)
	a := mailroom.SiteKey{Site: "limited", Source: "192.0.2.1"}
	b := mailroom.SiteKey{Site: "limited", Source: "192.0.2.2"}
	event(tr, c, a, mailroom.SiteConnected)
	event(tr, c, b, mailroom.SiteConnected)
	event(tr, c, b, mailroom.SiteConnected)
	suspend(tr, c, a)
	want := `
# HELP mailroom_site_connections SMTP connections this node has open to the site.
# TYPE mailroom_site_connections gauge
mailroom_site_connections{site="limited"} 3
# HELP mailroom_site_rate Messages a minute this node allows the site now, summed over its source addresses (0: no limit in force).
# TYPE mailroom_site_rate gauge
mailroom_site_rate{site="limited"} 675
# HELP mailroom_site_suspended 1 while the site (one of its source addresses) is suspended after repeated throttling.
# TYPE mailroom_site_suspended gauge
mailroom_site_suspended{site="limited"} 1
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want)); err != nil {
		t.Fatal(err)
	}
	// Idle for an hour, with nothing open: gone from the scrape.
	for _, k := range []mailroom.SiteKey{a, b, b} {
		event(tr, c, k, mailroom.SiteDisconnected)
	}
	c.Advance(2 * time.Hour)
	tr.sync(t.Context())
	if n, err := testutil.GatherAndCount(reg); err != nil || n != 0 {
		t.Fatalf("metrics of an idle site: %d series, %v", n, err)
	}
}
