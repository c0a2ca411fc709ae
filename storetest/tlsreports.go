package storetest

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/mailroom/mailroom"
)

func init() {
	extraSuites = append(extraSuites,
		suite{"TLSReportCountsAddUp", testTLSReportCountsAddUp},
		suite{"TLSReportClaims", testTLSReportClaims},
		suite{"TLSReportClaimedOnce", testTLSReportClaimedOnce},
	)
}

// tlsReports is s as a TLSReportStore: every engine's store is one.
func tlsReports(t *testing.T, s mailroom.Store) mailroom.TLSReportStore {
	t.Helper()
	r, ok := s.(mailroom.TLSReportStore)
	if !ok {
		t.Fatalf("%T does not keep TLS report counts", s)
	}
	return r
}

var tlsWindow = mailroom.TLSReportWindow{Start: t0.Truncate(24 * time.Hour), End: t0.Truncate(24 * time.Hour).Add(24 * time.Hour), Domain: "example.com"}

func stsCount(w mailroom.TLSReportWindow, d mailroom.TLSReportDetail) mailroom.TLSReportCount {
	return mailroom.TLSReportCount{Window: w, PolicyType: mailroom.TLSReportPolicySTS,
		PolicyString: []string{"version: STSv1", "mode: enforce", "mx: *.example.com", "max_age: 86400"},
		MXHost:       []string{"*.example.com"}, Detail: d}
}

// Two nodes' counts for the same rows add up (the additive upsert), each
// policy keeps its own totals, and the details come most frequent first,
// at most as many as asked for.
func testTLSReportCountsAddUp(t *testing.T, s mailroom.Store) {
	ctx := context.Background()
	r := tlsReports(t, s)
	mismatch := mailroom.TLSReportDetail{ResultType: mailroom.TLSFailCertificateHostMismatch, SendingIP: "192.0.2.1",
		ReceivingMX: "mx1.example.com", ReceivingIP: "198.51.100.7", FailureReason: "x509: certificate is valid for other.example", Count: 2}
	noTLS := mailroom.TLSReportDetail{ResultType: mailroom.TLSFailStartTLSNotSupported, SendingIP: "192.0.2.1",
		ReceivingMX: "mx2.example.com", ReceivingIP: "198.51.100.8", Count: 1}
	nodeA := []mailroom.TLSReportCount{
		stsCount(tlsWindow, mailroom.TLSReportDetail{Count: 5}),
		stsCount(tlsWindow, mismatch),
		{Window: tlsWindow, PolicyType: mailroom.TLSReportPolicyNotFound, Detail: mailroom.TLSReportDetail{Count: 7}},
	}
	nodeB := []mailroom.TLSReportCount{
		stsCount(tlsWindow, mailroom.TLSReportDetail{Count: 3}),
		stsCount(tlsWindow, mismatch),
		stsCount(tlsWindow, noTLS),
	}
	okTLS(t, r.AddTLSReportCounts(ctx, nodeA))
	okTLS(t, r.AddTLSReportCounts(ctx, nodeB))

	policies := Try(r.TLSReportPolicies(ctx, tlsWindow, 10)).Must(t)
	if len(policies) != 2 {
		t.Fatalf("got %d policies, want 2 (sts and no-policy-found): %+v", len(policies), policies)
	}
	byType := map[string]mailroom.TLSReportPolicy{}
	for _, p := range policies {
		byType[p.PolicyType] = p
	}
	sts := byType[mailroom.TLSReportPolicySTS]
	if sts.Successes != 8 || sts.Failures != 5 {
		t.Errorf("sts policy: %d successes, %d failures; want 8 and 5 (both nodes' counts)", sts.Successes, sts.Failures)
	}
	if len(sts.PolicyString) != 4 || sts.PolicyString[1] != "mode: enforce" || len(sts.MXHost) != 1 || sts.MXHost[0] != "*.example.com" {
		t.Errorf("sts policy's lines %q and mx %q not kept as given", sts.PolicyString, sts.MXHost)
	}
	want := mismatch
	want.Count = 4
	if len(sts.Details) != 2 || sts.Details[0] != want || sts.Details[1] != noTLS {
		t.Errorf("sts details = %+v, want the mismatch (4, both nodes') then starttls (1)", sts.Details)
	}
	none := byType[mailroom.TLSReportPolicyNotFound]
	if none.Successes != 7 || none.Failures != 0 || len(none.Details) != 0 || len(none.PolicyString) != 0 {
		t.Errorf("no-policy-found = %+v, want 7 successes and nothing else", none)
	}
	top := Try(r.TLSReportPolicies(ctx, tlsWindow, 1)).Must(t)
	for _, p := range top {
		if p.PolicyType == mailroom.TLSReportPolicySTS && (len(p.Details) != 1 || p.Details[0].Count != 4 || p.Failures != 5) {
			t.Errorf("limited to one detail: %+v, want the most frequent alone and the totals of all", p)
		}
	}
}

// A window is claimed once it has ended, by one lease at a time; a lease
// that runs out lets it be claimed again; a finished window is claimed
// never again, its counts forgotten, and counts arriving late for it
// dropped.
func testTLSReportClaims(t *testing.T, s mailroom.Store) {
	ctx := context.Background()
	r := tlsReports(t, s)
	okTLS(t, r.AddTLSReportCounts(ctx, []mailroom.TLSReportCount{stsCount(tlsWindow, mailroom.TLSReportDetail{Count: 1})}))
	other := tlsWindow
	other.Domain = "example.net"
	okTLS(t, r.AddTLSReportCounts(ctx, []mailroom.TLSReportCount{stsCount(other, mailroom.TLSReportDetail{Count: 1})}))

	if got := Try(r.ClaimTLSReports(ctx, tlsWindow.End, tlsWindow.End.Add(-time.Second), time.Minute, 10)).Must(t); len(got) != 0 {
		t.Fatalf("claimed %v before the window ended", got)
	}
	now := tlsWindow.End.Add(time.Minute)
	got := Try(r.ClaimTLSReports(ctx, now, now, time.Minute, 1)).Must(t)
	if len(got) != 1 || !got[0].Start.Equal(tlsWindow.Start) || !got[0].End.Equal(tlsWindow.End) {
		t.Fatalf("claimed %v, want one of the ended windows", got)
	}
	first := got[0]
	rest := Try(r.ClaimTLSReports(ctx, now, now, time.Minute, 10)).Must(t)
	if len(rest) != 1 || rest[0].Domain == first.Domain {
		t.Fatalf("second claim got %v, want the other domain alone (the first is leased)", rest)
	}
	later := now.Add(2 * time.Minute)
	again := Try(r.ClaimTLSReports(ctx, later, later, time.Minute, 10)).Must(t)
	if len(again) != 2 {
		t.Fatalf("after the leases ran out, claimed %v, want both again", again)
	}
	okTLS(t, r.FinishTLSReport(ctx, first))
	policies := Try(r.TLSReportPolicies(ctx, first, 10)).Must(t)
	if len(policies) != 0 {
		t.Errorf("a finished window still has counts: %+v", policies)
	}
	okTLS(t, r.AddTLSReportCounts(ctx, []mailroom.TLSReportCount{stsCount(first, mailroom.TLSReportDetail{Count: 9})}))
	if policies := Try(r.TLSReportPolicies(ctx, first, 10)).Must(t); len(policies) != 0 {
		t.Errorf("late counts for a finished window were kept: %+v", policies)
	}
	end := later.Add(time.Hour)
	final := Try(r.ClaimTLSReports(ctx, end, end, time.Minute, 10)).Must(t)
	if len(final) != 1 || final[0].Domain == first.Domain {
		t.Errorf("after finishing %s, claimed %v; want the other domain alone", first.Domain, final)
	}
}

// Nodes claiming at once never get the same window (SKIP LOCKED on
// PostgreSQL, the single writer on SQLite).
func testTLSReportClaimedOnce(t *testing.T, s mailroom.Store) {
	ctx := context.Background()
	r := tlsReports(t, s)
	var counts []mailroom.TLSReportCount
	for _, d := range []string{"a.example", "b.example", "c.example", "d.example", "e.example", "f.example"} {
		w := tlsWindow
		w.Domain = d
		counts = append(counts, stsCount(w, mailroom.TLSReportDetail{Count: 1}))
	}
	okTLS(t, r.AddTLSReportCounts(ctx, counts))
	now := tlsWindow.End.Add(time.Minute)
	var mu sync.Mutex
	seen := map[string]int{}
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for {
				got, err := r.ClaimTLSReports(ctx, now, now, time.Hour, 1)
				if err != nil {
					t.Error(err)
					return
				}
				if len(got) == 0 {
					return
				}
				mu.Lock()
				seen[got[0].Domain]++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if len(seen) != len(counts) {
		t.Errorf("claimed %v, want each of %d domains", seen, len(counts))
	}
	for d, n := range seen {
		if n != 1 {
			t.Errorf("%s claimed %d times, want once", d, n)
		}
	}
}

func okTLS(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
