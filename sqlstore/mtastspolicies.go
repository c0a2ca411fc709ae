package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"strings"
	"time"

	"github.com/mailroom/mailroom"
)

var _ mailroom.MTASTSPolicyStore = (*Store)(nil)

// MTASTSPolicy returns domain's cached MTA-STS policy (migration 00018), or
// nil when none is cached. Expired policies are returned too: whether one
// is still in force is package mtasts's rule (RFC 8461 §5.1), not storage's.
func (s *Store) MTASTSPolicy(ctx context.Context, domain string) (*mailroom.MTASTSPolicy, error) {
	var p mailroom.MTASTSPolicy
	var mode, mx string
	var maxAge, fetched, checked int64
	err := s.readRow(ctx, `SELECT domain, id, mode, mx, max_age, text, fetched_at, checked_at
		FROM mta_sts_policies WHERE domain = $1`, domain).
		Scan(&p.Domain, &p.ID, &mode, &mx, &maxAge, &p.Text, &fetched, &checked)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, s.wrap(err, "mta-sts policy")
	}
	p.Mode = mailroom.MTASTSMode(mode)
	if mx != "" {
		p.MX = strings.Split(mx, "\n")
	}
	p.MaxAge = time.Duration(maxAge) * time.Second
	p.FetchedAt, p.CheckedAt = fromMicros(fetched), fromMicros(checked)
	return &p, nil
}

// PutMTASTSPolicy caches p, replacing domain's earlier policy: the last
// written wins, since every writer has just looked up the TXT record (and
// fetched the policy it names) or confirmed the cached one. The mx patterns
// are stored one per line; a pattern holds no line break (RFC 8461 §3.2:
// it is a domain name).
func (s *Store) PutMTASTSPolicy(ctx context.Context, p *mailroom.MTASTSPolicy) error {
	_, err := s.write.ExecContext(ctx, `INSERT INTO mta_sts_policies
		(domain, id, mode, mx, max_age, text, fetched_at, checked_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
		ON CONFLICT (domain) DO UPDATE SET id = excluded.id, mode = excluded.mode, mx = excluded.mx,
		max_age = excluded.max_age, text = excluded.text, fetched_at = excluded.fetched_at, checked_at = excluded.checked_at`,
		p.Domain, p.ID, string(p.Mode), strings.Join(p.MX, "\n"), int64(p.MaxAge/time.Second), p.Text,
		micros(p.FetchedAt), micros(p.CheckedAt))
	return s.wrap(err, "put mta-sts policy")
}

// DeleteMTASTSPolicy forgets domain's policy; forgetting none is no error.
func (s *Store) DeleteMTASTSPolicy(ctx context.Context, domain string) error {
	_, err := s.write.ExecContext(ctx, `DELETE FROM mta_sts_policies WHERE domain = $1`, domain)
	return s.wrap(err, "delete mta-sts policy")
}
