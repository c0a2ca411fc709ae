package mailroom

import (
	"context"
	"time"
)

// TLS-RPT policy types (RFC 8460 §4.3 "policy-type"): Mailroom validates no
// DANE, so it reports "sts" for a recipient domain with an MTA-STS policy
// and "no-policy-found" for every other.
const (
	TLSReportPolicySTS      = "sts"
	TLSReportPolicyNotFound = "no-policy-found"
)

// TLSReportWindow is one recipient domain's results in one report window
// (package tlsrpt: --tls-rpt-interval, aligned to the Unix epoch, so UTC
// days at the default 24h): the unit a report is sent for, and that one
// node claims.
type TLSReportWindow struct {
	Start, End time.Time
	// Domain is the recipient (policy) domain the report is about.
	Domain string
}

// TLSReportDetail is one kind of failed session (RFC 8460 §4.4
// "failure-details"), or the successes when ResultType is "".
type TLSReportDetail struct {
	ResultType  TLSFailure
	SendingIP   string
	ReceivingMX string
	ReceivingIP string
	// FailureReason is what failed, in words (RFC 8460 §4.4
	// "failure-reason-code": a text field for a TLS error code or
	// message; "additional-information" must be a URI, which Mailroom
	// has none of).
	FailureReason string
	// Count is how many sessions ended so.
	Count int64
}

// TLSReportCount adds Detail.Count sessions to a window's counts for one
// policy: what each node flushes, the store adding them up.
type TLSReportCount struct {
	Window TLSReportWindow
	// PolicyType is TLSReportPolicySTS or TLSReportPolicyNotFound;
	// PolicyString (the policy's lines) and MXHost (its mx patterns) are
	// empty for the latter.
	PolicyType   string
	PolicyString []string
	MXHost       []string
	Detail       TLSReportDetail
}

// TLSReportPolicy is one policy of a report (RFC 8460 §4.4 "policies"):
// its totals and its most frequent failure details.
type TLSReportPolicy struct {
	PolicyType   string
	PolicyString []string
	MXHost       []string
	Successes    int64
	Failures     int64
	Details      []TLSReportDetail
}

// TLSReportStore keeps the TLS-RPT counts of every node (migration
// 00020), so that a window's report adds up all nodes' sessions, and
// leases each window's report to one node.
type TLSReportStore interface {
	// AddTLSReportCounts adds counts to what is stored (an additive
	// upsert: two nodes' counts for one row add up). Counts for a window
	// whose report is finished are dropped: its report has gone.
	AddTLSReportCounts(ctx context.Context, counts []TLSReportCount) error
	// ClaimTLSReports leases up to limit windows that ended by endedBy,
	// whose report is not finished and that no live lease holds, until
	// now+lease: nodes sharing storage never build one report at once,
	// and a lease that expires (its node died, or every destination
	// failed) lets the report be claimed again.
	ClaimTLSReports(ctx context.Context, now, endedBy time.Time, lease time.Duration, limit int) ([]TLSReportWindow, error)
	// TLSReportPolicies is a window's policies with their totals, and at
	// most maxDetails failure details among them, the most frequent.
	TLSReportPolicies(ctx context.Context, w TLSReportWindow, maxDetails int) ([]TLSReportPolicy, error)
	// FinishTLSReport marks w's report done (sent, or not wanted: the
	// domain publishes no TLS-RPT record) and forgets its counts.
	FinishTLSReport(ctx context.Context, w TLSReportWindow) error
}
