package tlsrpt_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/mailroom/mailroom"
	"github.com/mailroom/mailroom/tlsrpt"
)

// mailroom_delivery_tls_total has every policy and result from the start,
// and counts each session by its policy and outcome, with reports off.
func TestMetricCountsSessions(t *testing.T) {
	c := tlsrpt.NewCollector(tlsrpt.Options{Log: quiet})
	reg := prometheus.NewPedanticRegistry()
	c.Register(reg)
	if n := testutil.CollectAndCount(reg, "mailroom_delivery_tls_total"); n != len(mailroom.TLSPolicies)*len(mailroom.TLSOutcomes) {
		t.Fatalf("%d series before any session, want every policy and result (%d)", n, len(mailroom.TLSPolicies)*len(mailroom.TLSOutcomes))
	}
	c.ObserveTLS(success("example.com", day0))
	c.ObserveTLS(success("example.com", day0))
	c.ObserveTLS(mismatch("example.com", day0))
	c.ObserveTLS(mailroom.TLSSessionResult{Domain: "example.net", Policy: mailroom.TLSPolicyOpportunistic, Outcome: mailroom.TLSPlaintext})
	want := `
# HELP mailroom_delivery_tls_total TLS sessions with MX hosts by the policy they were made under and how TLS went (verified, unverified, plaintext, refused).
# TYPE mailroom_delivery_tls_total counter
`
	for _, p := range mailroom.TLSPolicies {
		for _, o := range mailroom.TLSOutcomes {
			n := 0
			switch {
			case p == mailroom.TLSPolicyMTASTS && o == mailroom.TLSVerified:
				n = 2
			case p == mailroom.TLSPolicyMTASTS && o == mailroom.TLSRefused,
				p == mailroom.TLSPolicyOpportunistic && o == mailroom.TLSPlaintext:
				n = 1
			}
			want += fmt.Sprintf("mailroom_delivery_tls_total{policy=%q,result=%q} %d\n", p, o, n)
		}
	}
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "mailroom_delivery_tls_total"); err != nil {
		t.Error(err)
	}
}

// Past its bounds a collector keeps its totals exact and its memory
// bounded: a new domain past MaxDomains is left out of reports (and
// counted by the metric), a new detail past MaxDetails is counted under
// its result type alone.
func TestCollectorBounds(t *testing.T) {
	w := newWorld(t)
	c := tlsrpt.NewCollector(tlsrpt.Options{Store: w.store, Now: w.clock.Now, Log: quiet, MaxDomains: 2, MaxDetails: 2})
	reg := prometheus.NewRegistry()
	c.Register(reg)
	for _, d := range []string{"a.example", "b.example", "c.example"} {
		w.dns.SetTXT("_smtp._tls."+d, "v=TLSRPTv1; rua="+w.rua)
		c.ObserveTLS(success(d, day0.Add(time.Hour)))
	}
	for i := range 5 {
		r := mismatch("a.example", day0.Add(time.Hour))
		r.ReceivingIP = fmt.Sprintf("198.51.100.%d", i+1)
		c.ObserveTLS(r)
	}
	flush(t, c)
	w.clock.Set(day0.Add(25 * time.Hour))
	reportDue(t, w.reporter())
	got := map[string]tlsrpt.PolicyResult{}
	for _, p := range w.received() {
		pr := decodeReport(t, p.body).Policies[0]
		got[pr.Policy.PolicyDomain] = pr
	}
	if _, ok := got["c.example"]; ok || len(got) != 2 {
		t.Errorf("reports for %v, want a.example and b.example alone (MaxDomains 2)", got)
	}
	a := got["a.example"]
	if a.Summary.TotalFailureSessionCount != 5 || len(a.FailureDetails) != 3 {
		t.Fatalf("a.example %+v, want 5 failures in 3 details (2 kept whole, the rest by result type)", a)
	}
	var coarse int64
	for _, d := range a.FailureDetails {
		if d.ReceivingIP == "" {
			coarse = d.FailedSessionCount
		}
	}
	if coarse != 3 {
		t.Errorf("details %+v, want the 3 past the bound under the result type alone", a.FailureDetails)
	}
	if v := metricValue(t, reg, "mta-sts", "verified"); v != 3 {
		t.Errorf("metric counted %v verified sessions, want 3 (c.example's too)", v)
	}
}

// metricValue is mailroom_delivery_tls_total{policy,result} as reg gathers it.
func metricValue(t *testing.T, reg prometheus.Gatherer, policy, result string) float64 {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != "mailroom_delivery_tls_total" {
			continue
		}
		for _, m := range f.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			if labels["policy"] == policy && labels["result"] == result {
				return m.GetCounter().GetValue()
			}
		}
	}
	t.Fatalf("no series policy=%s result=%s", policy, result)
	return 0
}
