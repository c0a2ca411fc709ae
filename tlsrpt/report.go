package tlsrpt

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/mailroom/mailroom"
)

// Report is the JSON report of RFC 8460 §4.4, its members named as §4.3
// names them.
type Report struct {
	OrganizationName string         `json:"organization-name"`
	DateRange        DateRange      `json:"date-range"`
	ContactInfo      string         `json:"contact-info"`
	ReportID         string         `json:"report-id"`
	Policies         []PolicyResult `json:"policies"`
}

// DateRange is the time the report covers (§4.3, RFC 3339 date-times in
// UTC). The end is the last second of the window, as §4.4's example's
// "2016-04-01T23:59:59Z" is.
type DateRange struct {
	Start time.Time `json:"start-datetime"`
	End   time.Time `json:"end-datetime"`
}

// PolicyResult is one policy's results (§4.4 "policies").
type PolicyResult struct {
	Policy         Policy          `json:"policy"`
	Summary        Summary         `json:"summary"`
	FailureDetails []FailureDetail `json:"failure-details,omitempty"`
}

// Policy is the policy a set of sessions was made under (§4.3). Its
// policy-string and mx-host are empty for "no-policy-found".
type Policy struct {
	PolicyType   string   `json:"policy-type"`
	PolicyString []string `json:"policy-string,omitempty"`
	PolicyDomain string   `json:"policy-domain"`
	MXHost       []string `json:"mx-host,omitempty"`
}

// Summary counts a policy's sessions (§4.3).
type Summary struct {
	TotalSuccessfulSessionCount int64 `json:"total-successful-session-count"`
	TotalFailureSessionCount    int64 `json:"total-failure-session-count"`
}

// FailureDetail is one kind of failed session (§4.3).
type FailureDetail struct {
	ResultType          string `json:"result-type"`
	SendingMTAIP        string `json:"sending-mta-ip,omitempty"`
	ReceivingMXHostname string `json:"receiving-mx-hostname,omitempty"`
	ReceivingIP         string `json:"receiving-ip,omitempty"`
	FailedSessionCount  int64  `json:"failed-session-count"`
	FailureReasonCode   string `json:"failure-reason-code,omitempty"`
}

// submitter names who sends the reports (§4.3 organization-name, §5.3
// TLS-Report-Submitter): the domain of the --tls-rpt-from address.
func submitter(from string) string {
	return strings.ToLower(from[strings.LastIndexByte(from, '@')+1:])
}

// reportID is unique per window, domain and submitter, and the same when
// a report is sent again (its lease ran out): a receiver can tell a
// repeat. It has the form of a msg-id's inside (RFC 5322 §3.6.4), so that
// it is the report message's Message-ID too (§5.3).
func reportID(w mailroom.TLSReportWindow, sub string) string {
	return fmt.Sprintf("%d.%s@%s", w.Start.Unix(), w.Domain, sub)
}

// buildReport is the report of window w from policies, by from.
func buildReport(w mailroom.TLSReportWindow, policies []mailroom.TLSReportPolicy, org, from string) Report {
	r := Report{
		OrganizationName: org,
		DateRange:        DateRange{Start: w.Start.UTC(), End: w.End.UTC().Add(-time.Second)},
		ContactInfo:      from,
		ReportID:         reportID(w, submitter(from)),
		Policies:         []PolicyResult{},
	}
	for _, p := range policies {
		pr := PolicyResult{
			Policy:  Policy{PolicyType: p.PolicyType, PolicyString: p.PolicyString, PolicyDomain: w.Domain, MXHost: p.MXHost},
			Summary: Summary{TotalSuccessfulSessionCount: p.Successes, TotalFailureSessionCount: p.Failures},
		}
		for _, d := range p.Details {
			pr.FailureDetails = append(pr.FailureDetails, FailureDetail{ResultType: string(d.ResultType),
				SendingMTAIP: d.SendingIP, ReceivingMXHostname: d.ReceivingMX, ReceivingIP: d.ReceivingIP,
				FailedSessionCount: d.Count, FailureReasonCode: d.FailureReason})
		}
		r.Policies = append(r.Policies, pr)
	}
	return r
}

// gzipped is the report as JSON, compressed (§5: reports are gzip
// compressed for transport).
func (r Report) gzipped() ([]byte, error) {
	var b bytes.Buffer
	z := gzip.NewWriter(&b)
	if err := json.NewEncoder(z).Encode(r); err != nil {
		return nil, err
	}
	if err := z.Close(); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// fileName is the report's file name (§5.1):
// sender "!" policy-domain "!" begin-timestamp "!" end-timestamp ".json.gz",
// the timestamps in seconds since the epoch.
func (r Report) fileName(sub, domain string) string {
	return fmt.Sprintf("%s!%s!%d!%d.json.gz", sub, domain, r.DateRange.Start.Unix(), r.DateRange.End.Unix())
}
