package domain

import (
	"context"
	"log/slog"
	"time"

	"github.com/mailroom/mailroom"
)

// Service is the service behind sending domains (docs/api.md "Domains"): adding one
// with a fresh DKIM key, checking its records now or on schedule, and
// answering whether an account may send from it.
type Service struct {
	Store   mailroom.DomainStore
	Checker mailroom.DomainChecker
	// Health runs the health checks that each check refreshes (docs/api.md
	// "Domain health"); nil leaves a domain's checks as they are.
	Health   mailroom.DomainHealthChecker
	Sealer   mailroom.Sealer
	Settings mailroom.RecordSettings
	Now      func() time.Time
	Log      *slog.Logger
	// Max is how many domains an account may have; 0 means
	// mailroom.DefaultMaxDomains.
	Max int
	// Sandbox names the `--dev` sandbox domain (AddSandbox), if any. Verify
	// answers it as it stands: it has no public records to find, and a
	// check would turn it from verified to temporary_failure.
	Sandbox string

	// statuses are the sending-domain check's recent answers
	// (SendingDomainCacheTTL).
	statuses domainStatusCache
}

// Add creates a pending domain with its own DKIM key and the records to
// publish. The RSA key generation (tens of milliseconds) happens here, once,
// not on the send path, and only for an account below its limit: a full
// account is refused by a count before any key is made, and the store
// counts again under the account's lock when it inserts.
func (s *Service) Add(ctx context.Context, accountID, rawName string) (*mailroom.Domain, error) {
	return s.AddWithSettings(ctx, accountID, rawName, mailroom.DomainUpdate{})
}

// AddWithSettings is Add of a domain that starts with the settings of u
// (its tls, its IP pool), checked as Update checks them, so that a
// create that sets them (Resend's POST /domains {name, tls}) is one
// write that stores all or nothing.
func (s *Service) AddWithSettings(ctx context.Context, accountID, rawName string, u mailroom.DomainUpdate) (*mailroom.Domain, error) {
	if err := checkUpdate(u); err != nil {
		return nil, err
	}
	if err := s.checkRoom(ctx, accountID); err != nil {
		return nil, err
	}
	d, err := s.newDomain(accountID, rawName)
	if err != nil {
		return nil, err
	}
	if u.TLS != nil {
		d.TLS = *u.TLS
	}
	if u.IPPool != nil {
		d.IPPool = *u.IPPool
	}
	if u.OpenTracking != nil {
		d.Tracking.Opens = *u.OpenTracking
	}
	if u.ClickTracking != nil {
		d.Tracking.Clicks = *u.ClickTracking
	}
	d.NextCheckAt = mailroom.NextDomainCheck(d, d.CreatedAt)
	if err := s.Store.CreateDomain(ctx, d, s.max()); err != nil {
		return nil, err
	}
	return d, nil
}

// AddSandbox creates a domain that is verified from the start and never
// checked: the `--dev` sandbox (mailroom.test is reserved by RFC 2606 and
// can have no public records). Adding it again returns the existing one.
func (s *Service) AddSandbox(ctx context.Context, accountID, name string) (*mailroom.Domain, error) {
	if d, err := s.Store.Domain(ctx, accountID, name); err == nil || !mailroom.IsCode(err, mailroom.ECodeNotFound) {
		return d, err
	}
	d, err := s.newDomain(accountID, name)
	if err != nil {
		return nil, err
	}
	d.Status = mailroom.DomainVerified
	d.VerifiedAt = &d.CreatedAt
	for i := range d.Records {
		d.Records[i].Status = mailroom.RecordVerified
		d.Records[i].Problem = "sandbox domain: not looked up in DNS"
	}
	return d, s.Store.CreateDomain(ctx, d, s.max())
}

func (s *Service) max() int {
	if s.Max <= 0 {
		return mailroom.DefaultMaxDomains
	}
	return s.Max
}

// checkRoom refuses an account that already has its most domains.
func (s *Service) checkRoom(ctx context.Context, accountID string) error {
	n, err := s.Store.CountDomains(ctx, accountID)
	if err != nil {
		return err
	}
	if max := s.max(); n >= max {
		return mailroom.DomainLimit.Err(n, max)
	}
	return nil
}

func (s *Service) newDomain(accountID, rawName string) (*mailroom.Domain, error) {
	name, err := mailroom.NormalizeDomainName(rawName)
	if err != nil {
		return nil, err
	}
	now := s.Now().UTC()
	selector, private, public, err := mailroom.NewDKIMKey(now)
	if err != nil {
		return nil, err
	}
	d := &mailroom.Domain{
		ID:               mailroom.NewID(mailroom.PrefixDomain, now),
		AccountID:        accountID,
		Name:             name,
		Status:           mailroom.DomainPending,
		DKIMSelector:     selector,
		DKIMPublicKey:    public,
		ReturnPathDomain: s.Settings.ReturnPathDomain(name),
		CreatedAt:        now,
	}
	d.DKIMPrivateKeySealed = s.Sealer.Seal(private, []byte(d.ID))
	d.Records = mailroom.BuildDomainRecords(d, s.Settings)
	return d, nil
}

// SendingDomain reads the account's domain.
func (s *Service) SendingDomain(ctx context.Context, accountID, name string) (*mailroom.Domain, error) {
	return s.Store.Domain(ctx, accountID, name)
}

// ReturnPathDomain is the bounce subdomain of a sending domain.
func (s *Service) ReturnPathDomain(name string) string { return s.Settings.ReturnPathDomain(name) }

// Verify checks an account's domain against DNS now and stores the outcome.
func (s *Service) Verify(ctx context.Context, accountID, name string) (*mailroom.Domain, error) {
	name, err := mailroom.NormalizeDomainName(name)
	if err != nil {
		return nil, mailroom.Errorf(mailroom.ECodeNotFound, "No domain %q in this account.", name)
	}
	d, err := s.Store.Domain(ctx, accountID, name)
	if err != nil || (s.Sandbox != "" && name == s.Sandbox) {
		return d, err
	}
	return d, s.check(ctx, d)
}

// check looks d up in DNS, moves it through its states and saves it, with
// the event of a status change in the same transaction.
func (s *Service) check(ctx context.Context, d *mailroom.Domain) error {
	// The health checks run beside the records' check, so that a verify
	// waits for the slower of the two, not both; they are advice and
	// never move the status.
	var checks []mailroom.HealthCheck
	healthDone := make(chan struct{})
	go func() {
		defer close(healthDone)
		if s.Health != nil {
			checks = s.Health.Health(ctx, d)
		}
	}()
	result, err := s.Checker.Check(ctx, d)
	<-healthDone
	if err != nil {
		return mailroom.Unavailable(err)
	}
	if s.Health != nil {
		d.Checks = checks
	}
	now := s.Now().UTC()
	var event *mailroom.Event
	if typ := mailroom.ApplyDomainCheck(d, result.Records, result.Indeterminate, now); typ != "" {
		event, err = mailroom.NewEvent(d.AccountID, typ, newDomainEventData(d), now)
		if err != nil {
			return err
		}
	}
	err = s.Store.SaveDomainCheck(ctx, d, event)
	s.statuses.forget(d.AccountID, d.Name)
	return err
}

// domainEventData is the "data" of a domain.* event: the domain's status
// and each record's, without the values (GET /v1/domains/{domain} has
// them): a webhook tells what changed, not the whole configuration.
type domainEventData struct {
	Domain  string                `json:"domain"`
	Status  mailroom.DomainStatus `json:"status"`
	Records []recordEventData     `json:"records"`
}

type recordEventData struct {
	Purpose mailroom.RecordPurpose `json:"purpose"`
	Type    string                 `json:"type"`
	Name    string                 `json:"name"`
	Status  mailroom.RecordStatus  `json:"status"`
	Problem string                 `json:"problem,omitempty"`
}

func newDomainEventData(d *mailroom.Domain) domainEventData {
	out := domainEventData{Domain: d.Name, Status: d.Status, Records: make([]recordEventData, len(d.Records))}
	for i, r := range d.Records {
		out.Records[i] = recordEventData{Purpose: r.Purpose, Type: r.Type, Name: r.Name, Status: r.Status, Problem: r.Problem}
	}
	return out
}

// Re-check batching: a node claims this many due domains at a time and
// holds each for at most recheckLease (a check that hangs longer lets
// another node take the domain over).
const (
	recheckBatch  = 16
	recheckLease  = 2 * time.Minute
	recheckBudget = 60 * time.Second
)

// RecheckDue checks the domains whose next check is due, until none is, and
// returns how many it checked.
func (s *Service) RecheckDue(ctx context.Context) (int, error) {
	checked := 0
	for {
		due, err := s.Store.ClaimDueDomains(ctx, s.Now().UTC(), recheckLease, recheckBatch)
		if err != nil {
			return checked, err
		}
		for _, d := range due {
			dctx, cancel := context.WithTimeout(ctx, recheckBudget)
			err := s.check(dctx, d)
			cancel()
			if err != nil && !mailroom.IsCode(err, mailroom.ECodeNotFound) {
				s.Log.Warn("domain re-check failed; it will be tried again when its lease ends", "domain", d.Name, "err", err)
			}
			checked++
		}
		if len(due) < recheckBatch || ctx.Err() != nil {
			return checked, ctx.Err()
		}
	}
}

// RunRechecks calls RecheckDue every interval until ctx ends.
func (s *Service) RunRechecks(ctx context.Context, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		if _, err := s.RecheckDue(ctx); err != nil && ctx.Err() == nil {
			s.Log.Warn("domain re-checks", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// CheckSendingDomain returns ECodeDomainNotVerified unless the account may
// send from name now (verified, or in the grace period of a temporary
// failure). It reads one indexed row, or reuses the answer read within
// SendingDomainCacheTTL, and does no DNS, so it can sit on the send path.
// With a nil answer comes the domain's tracking, which the send's own is
// resolved from (docs/api.md "Engagement tracking").
func (s *Service) CheckSendingDomain(ctx context.Context, accountID, name string) (mailroom.Tracking, error) {
	now := s.now()
	cached, ok := s.statuses.get(accountID, name, now)
	if !ok {
		status, tracking, err := s.Store.DomainStatus(ctx, accountID, name)
		switch {
		case err == nil:
			cached = cachedDomainStatus{status: status, tracking: tracking, found: true}
		case !mailroom.IsCode(err, mailroom.ECodeNotFound):
			return mailroom.Tracking{}, err
		}
		s.statuses.put(accountID, name, cached, now)
	}
	switch {
	case !cached.found:
		return mailroom.Tracking{}, mailroom.Errorf(mailroom.ECodeDomainNotVerified, "The domain %s is not a domain of this account; add and verify it first.", name)
	case !cached.status.CanSend():
		return mailroom.Tracking{}, mailroom.Errorf(mailroom.ECodeDomainNotVerified, "The domain %s is %s, not verified; publish its records and verify it.", name, cached.status)
	}
	return cached.tracking, nil
}

// SetIPPool sets the pool of source addresses an account's domain sends
// from (docs/api.md "How mail leaves"); "" clears it, for the default pool.
// It is Update with the pool alone: which pools exist is each node's
// --ip-pool, which this service does not know, so the name is checked for
// its form alone.
func (s *Service) SetIPPool(ctx context.Context, accountID, rawName, pool string) (*mailroom.Domain, error) {
	return s.Update(ctx, accountID, rawName, mailroom.DomainUpdate{IPPool: &pool})
}

// Delete removes an account's domain; sends from it are refused from the
// next one on this node (other nodes: within SendingDomainCacheTTL).
func (s *Service) Delete(ctx context.Context, accountID, name string) error {
	err := s.Store.DeleteDomain(ctx, accountID, name)
	s.statuses.forget(accountID, name)
	return err
}

func (s *Service) now() time.Time {
	if s.Now == nil {
		return time.Now()
	}
	return s.Now()
}
