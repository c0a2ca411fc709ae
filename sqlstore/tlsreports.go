package sqlstore

import (
	"cmp"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/mailroom/mailroom"
)

var _ mailroom.TLSReportStore = (*Store)(nil)

// tlsReportMemory is how long a finished window's row is kept, so that a
// node's late counts for it are recognised and dropped rather than start
// a second report.
const tlsReportMemory = 7 * 24 * time.Hour

// AddTLSReportCounts adds counts (migration 00020) in one transaction. The
// rows are written in key order, and each window's row is locked before its
// counts are added, so that two nodes adding at once on PostgreSQL wait for
// each other rather than deadlock, and a report being finished meanwhile
// either sees the counts or drops them: none is left behind.
func (s *Store) AddTLSReportCounts(ctx context.Context, counts []mailroom.TLSReportCount) error {
	if len(counts) == 0 {
		return nil
	}
	type row struct {
		c                     mailroom.TLSReportCount
		policyKey, detailKey  string
		policyString, mxHosts string
	}
	rows := make([]row, 0, len(counts))
	for _, c := range counts {
		r := row{c: c, policyString: strings.Join(c.PolicyString, "\n"), mxHosts: strings.Join(c.MXHost, "\n")}
		r.policyKey = digest(c.PolicyType, r.policyString, r.mxHosts)
		if d := c.Detail; d.ResultType != "" {
			r.detailKey = digest(string(d.ResultType), d.SendingIP, d.ReceivingMX, d.ReceivingIP, d.FailureReason)
		}
		rows = append(rows, r)
	}
	slices.SortFunc(rows, func(a, b row) int {
		return cmp.Or(a.c.Window.Start.Compare(b.c.Window.Start), strings.Compare(a.c.Window.Domain, b.c.Window.Domain),
			strings.Compare(a.policyKey, b.policyKey), strings.Compare(a.detailKey, b.detailKey))
	})
	return s.inTx(ctx, func(tx *sql.Tx) error {
		finished := map[mailroom.TLSReportWindow]bool{}
		for _, r := range rows {
			w := mailroom.TLSReportWindow{Start: r.c.Window.Start.UTC(), End: r.c.Window.End.UTC(), Domain: r.c.Window.Domain}
			done, seen := finished[w]
			if !seen {
				if _, err := tx.ExecContext(ctx, `INSERT INTO tls_report_windows (window_start, domain, window_end) VALUES ($1, $2, $3)
					ON CONFLICT (window_start, domain) DO NOTHING`, micros(w.Start), w.Domain, micros(w.End)); err != nil {
					return s.wrap(err, "add tls report window")
				}
				var at sql.NullInt64
				if err := tx.QueryRowContext(ctx, `SELECT finished_at FROM tls_report_windows WHERE window_start = $1 AND domain = $2`+
					s.dialect.Locks.Rows, micros(w.Start), w.Domain).Scan(&at); err != nil {
					return s.wrap(err, "read tls report window")
				}
				done = at.Valid
				finished[w] = done
			}
			if done {
				continue
			}
			d := r.c.Detail
			if _, err := tx.ExecContext(ctx, `INSERT INTO tls_report_counts (window_start, domain, policy_key, detail_key,
				policy_type, policy_string, mx_host, result_type, sending_ip, receiving_mx, receiving_ip, failure_reason, count)
				VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)
				ON CONFLICT (window_start, domain, policy_key, detail_key) DO UPDATE SET count = tls_report_counts.count + excluded.count`,
				micros(w.Start), w.Domain, r.policyKey, r.detailKey, r.c.PolicyType, r.policyString, r.mxHosts,
				string(d.ResultType), d.SendingIP, d.ReceivingMX, d.ReceivingIP, d.FailureReason, d.Count); err != nil {
				return s.wrap(err, "add tls report counts")
			}
		}
		return nil
	})
}

// digest is the key of a policy or a detail: its parts, NUL-separated
// (no part holds a NUL), hashed.
func digest(parts ...string) string {
	sum := sha256.Sum256([]byte(strings.Join(parts, "\x00")))
	return hex.EncodeToString(sum[:16])
}

// ClaimTLSReports leases due windows as ClaimDueDomains leases domains:
// SKIP LOCKED on PostgreSQL, the single writer on SQLite.
func (s *Store) ClaimTLSReports(ctx context.Context, now, endedBy time.Time, lease time.Duration, limit int) ([]mailroom.TLSReportWindow, error) {
	rows, err := s.write.QueryContext(ctx, fmt.Sprintf(`UPDATE tls_report_windows SET lease_until = $3
		WHERE (window_start, domain) IN (SELECT window_start, domain FROM tls_report_windows
			WHERE finished_at IS NULL AND window_end <= $2 AND (lease_until IS NULL OR lease_until <= $1)
			ORDER BY window_end, domain LIMIT $4 %s)
		RETURNING window_start, window_end, domain`, s.dialect.Locks.SkipLocked),
		micros(now), micros(endedBy), micros(now.Add(lease)), limit)
	if err != nil {
		return nil, s.wrap(err, "claim tls reports")
	}
	out, err := collect(rows, func(r scanner) (mailroom.TLSReportWindow, error) {
		var w mailroom.TLSReportWindow
		var start, end int64
		err := r.Scan(&start, &end, &w.Domain)
		w.Start, w.End = fromMicros(start), fromMicros(end)
		return w, err
	})
	return out, s.wrap(err, "claim tls reports")
}

// TLSReportPolicies reads a window's policies in two queries: the totals
// over every row, then the most frequent failure details.
func (s *Store) TLSReportPolicies(ctx context.Context, w mailroom.TLSReportWindow, maxDetails int) ([]mailroom.TLSReportPolicy, error) {
	rows, err := s.write.QueryContext(ctx, `SELECT policy_key, MIN(policy_type), MIN(policy_string), MIN(mx_host),
			CAST(SUM(CASE WHEN detail_key = '' THEN count ELSE 0 END) AS BIGINT),
			CAST(SUM(CASE WHEN detail_key = '' THEN 0 ELSE count END) AS BIGINT)
		FROM tls_report_counts WHERE window_start = $1 AND domain = $2 GROUP BY policy_key ORDER BY policy_key`,
		micros(w.Start), w.Domain)
	if err != nil {
		return nil, s.wrap(err, "tls report policies")
	}
	var keys []string
	policies, err := collect(rows, func(r scanner) (mailroom.TLSReportPolicy, error) {
		var p mailroom.TLSReportPolicy
		var key, lines, mx string
		err := r.Scan(&key, &p.PolicyType, &lines, &mx, &p.Successes, &p.Failures)
		keys = append(keys, key)
		p.PolicyString, p.MXHost = splitLines(lines), splitLines(mx)
		return p, err
	})
	if err != nil {
		return nil, s.wrap(err, "tls report policies")
	}
	rows, err = s.write.QueryContext(ctx, `SELECT policy_key, result_type, sending_ip, receiving_mx, receiving_ip, failure_reason, count
		FROM tls_report_counts WHERE window_start = $1 AND domain = $2 AND detail_key <> ''
		ORDER BY count DESC, policy_key, detail_key LIMIT $3`, micros(w.Start), w.Domain, maxDetails)
	if err != nil {
		return nil, s.wrap(err, "tls report details")
	}
	type keyed struct {
		key string
		d   mailroom.TLSReportDetail
	}
	details, err := collect(rows, func(r scanner) (keyed, error) {
		var k keyed
		var result string
		err := r.Scan(&k.key, &result, &k.d.SendingIP, &k.d.ReceivingMX, &k.d.ReceivingIP, &k.d.FailureReason, &k.d.Count)
		k.d.ResultType = mailroom.TLSFailure(result)
		return k, err
	})
	if err != nil {
		return nil, s.wrap(err, "tls report details")
	}
	for _, k := range details {
		if i := slices.Index(keys, k.key); i >= 0 {
			policies[i].Details = append(policies[i].Details, k.d)
		}
	}
	return policies, nil
}

func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

// FinishTLSReport marks the window finished, forgets its counts, and
// forgets the windows finished more than tlsReportMemory ago (in the
// database's clock, as leases are).
func (s *Store) FinishTLSReport(ctx context.Context, w mailroom.TLSReportWindow) error {
	return s.inTx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `UPDATE tls_report_windows SET finished_at = `+s.dialect.SQL.NowMicros+`, lease_until = NULL
			WHERE window_start = $1 AND domain = $2`, micros(w.Start), w.Domain); err != nil {
			return s.wrap(err, "finish tls report")
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM tls_report_counts WHERE window_start = $1 AND domain = $2`,
			micros(w.Start), w.Domain); err != nil {
			return s.wrap(err, "finish tls report")
		}
		_, err := tx.ExecContext(ctx, `DELETE FROM tls_report_windows WHERE finished_at IS NOT NULL AND finished_at < `+
			s.dialect.SQL.NowMicros+` - $1`, tlsReportMemory.Microseconds())
		return s.wrap(err, "forget tls reports")
	})
}
