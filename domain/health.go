package domain

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"time"

	"github.com/mailroom/mailroom"
	"github.com/mailroom/mailroom/dns"
)

// DefaultHealthTimeout bounds each health check when Health.Timeout is zero:
// a check is a few lookups, each bounded by the resolver's own timeout.
const DefaultHealthTimeout = 15 * time.Second

// Health runs a domain's health checks (docs/api.md "Domain health"): the
// advice beside the required records about what stands between the
// domain's mail and the inbox. The checks run side by side, each bounded by
// Timeout, through the service's resolver; a lookup that does not answer
// makes its check warn "could not check", so that a DNS outage neither
// fails a check nor holds up the verification it is part of.
type Health struct {
	Resolver *dns.Resolver
	// Sending says which addresses a domain's mail leaves from.
	Sending SendingAddresses
	// Hostname is --hostname: EHLO's name, whose reverse DNS receivers
	// check as they check the addresses'.
	Hostname string
	// MXHost is the host that receives bounces, which the return-path MX
	// must name (RecordSettings.MXHost).
	MXHost string
	// DNSBLZones are the blocklists (--dnsbl) each sending address is
	// looked up in; without any, the dnsbl check is left out.
	DNSBLZones []string
	Timeout    time.Duration
}

var _ mailroom.DomainHealthChecker = (*Health)(nil)

// Health runs every check on d, in the order of mailroom.HealthCheckNames.
func (h *Health) Health(ctx context.Context, d *mailroom.Domain) []mailroom.HealthCheck {
	checks := []struct {
		name mailroom.HealthCheckName
		run  func(ctx context.Context, d *mailroom.Domain, addrs sendingAddrs) finding
	}{
		{mailroom.HealthDMARC, h.checkDMARC},
		{mailroom.HealthSPFCoversSending, h.checkSPF},
		{mailroom.HealthFCrDNS, h.checkFCrDNS},
		{mailroom.HealthReturnPathMX, h.checkReturnPathMX},
		{mailroom.HealthMTASTS, h.checkMTASTS},
		{mailroom.HealthTLSRPT, h.checkTLSRPT},
	}
	if len(h.DNSBLZones) > 0 {
		checks = append(checks, struct {
			name mailroom.HealthCheckName
			run  func(ctx context.Context, d *mailroom.Domain, addrs sendingAddrs) finding
		}{mailroom.HealthDNSBL, h.checkDNSBL})
	}

	timeout := h.Timeout
	if timeout <= 0 {
		timeout = DefaultHealthTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	addrs := h.Sending.lookup(ctx, h.Resolver)

	out := make([]mailroom.HealthCheck, len(checks))
	var wg sync.WaitGroup
	for i, c := range checks {
		wg.Go(func() {
			f := c.run(ctx, d, addrs)
			out[i] = mailroom.HealthCheck{Name: c.name, Status: f.status, Detail: f.detail()}
		})
	}
	wg.Wait()
	return out
}

// finding is what one check found: its status, what it saw, and (unless
// it passed) what to fix.
type finding struct {
	status mailroom.HealthStatus
	parts  []string
}

func pass(format string, args ...any) finding {
	return finding{status: mailroom.HealthPass, parts: []string{fmt.Sprintf(format, args...)}}
}

func warn(format string, args ...any) finding {
	return finding{status: mailroom.HealthWarn, parts: []string{fmt.Sprintf(format, args...)}}
}

func fail(format string, args ...any) finding {
	return finding{status: mailroom.HealthFail, parts: []string{fmt.Sprintf(format, args...)}}
}

// couldNotCheck is a check that DNS did not let finish: advice to look
// again, not a failure (the record may well be there).
func couldNotCheck(err error) finding {
	return warn("Could not check: %s. It is checked again with the domain's next check.", describeLookupError(err))
}

// add folds the finding of one address or lookup into f: the worst status
// wins, and every part that is not a pass is kept (passes are kept only
// while nothing worse was found).
func (f *finding) add(g finding) {
	switch {
	case f.status == "" || f.status == mailroom.HealthPass && g.status == mailroom.HealthPass:
		f.parts = append(f.parts, g.parts...)
	case g.status == mailroom.HealthPass:
		return
	case f.status == mailroom.HealthPass:
		f.parts = g.parts
	default:
		f.parts = append(f.parts, g.parts...)
	}
	if f.status == "" {
		f.status = g.status
	}
	f.status = mailroom.WorstHealthStatus(f.status, g.status)
}

func (f finding) detail() string { return strings.Join(f.parts, " ") }

// describeLookupError says in words why a lookup gave no answer.
func describeLookupError(err error) string {
	var derr *net.DNSError
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return "the lookups took too long"
	case !errors.As(err, &derr):
		return err.Error()
	case derr.IsTimeout:
		return fmt.Sprintf("the DNS lookup of %s timed out", derr.Name)
	}
	return fmt.Sprintf("the DNS lookup of %s failed (%s)", derr.Name, derr.Err)
}

// isNotFound reports an answer that the name or record does not exist, as
// opposed to no answer.
func isNotFound(err error) bool {
	var derr *net.DNSError
	return errors.As(err, &derr) && derr.IsNotFound
}

// recordValue is the value d's records ask to publish for purpose, or "".
func recordValue(d *mailroom.Domain, purpose mailroom.RecordPurpose) (mailroom.DNSRecord, bool) {
	for _, r := range d.Records {
		if r.Purpose == purpose {
			return r, true
		}
	}
	return mailroom.DNSRecord{}, false
}
