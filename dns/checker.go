package dns

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"

	"github.com/mailroom/mailroom"
)

// Checker looks up the records a customer was asked to publish for a domain
// and says, per record, whether DNS now holds them (docs/api.md "Domains").
type Checker struct {
	// Resolver asks the DNS; nil means the system's first nameserver.
	Resolver *Resolver
	// SendingIPs are the addresses this service sends mail from, which the
	// bounce subdomain's SPF record must authorise. When empty, they are
	// the addresses of SendingHost, looked up on each check.
	SendingIPs  []net.IP
	SendingHost string
	// MXHost is the host that receives bounces, which the return-path MX
	// must name. When empty, the record's own value is expected.
	MXHost string
}

// CheckResult is the outcome of checking a domain's records; see
// mailroom.DomainCheck.
type CheckResult = mailroom.DomainCheck

// outcome is the verdict on one record.
type outcome struct {
	status  mailroom.RecordStatus
	found   []string
	problem string
	// indeterminate: DNS did not give an answer; keep the old status.
	indeterminate bool
}

// Check looks up every record of d and returns them updated; d is not
// modified. Lookups run in parallel so that a domain whose nameservers do
// not answer costs one timeout, not one per record. The error is non-nil
// only when the checker is misconfigured or ctx ended before the check did:
// the result then says nothing and must not be saved.
func (c *Checker) Check(ctx context.Context, d *mailroom.Domain) (CheckResult, error) {
	if len(c.SendingIPs) == 0 && c.SendingHost == "" {
		return CheckResult{}, errors.New("dns: Checker needs SendingIPs or SendingHost to check SPF")
	}
	outcomes := make([]outcome, len(d.Records))
	var wg sync.WaitGroup
	for i, rec := range d.Records {
		wg.Go(func() { outcomes[i] = c.checkRecord(ctx, d, rec) })
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return CheckResult{}, err
	}

	res := CheckResult{Records: make([]mailroom.DNSRecord, len(d.Records))}
	for i, rec := range d.Records {
		o := outcomes[i]
		rec.Problem = o.problem
		if o.indeterminate {
			res.Indeterminate = true
			rec.Found = append([]string(nil), rec.Found...)
		} else {
			rec.Status = o.status
			rec.Found = o.found
			if rec.Found == nil {
				rec.Found = []string{}
			}
		}
		res.Records[i] = rec
	}
	return res, nil
}

func (c *Checker) checkRecord(ctx context.Context, d *mailroom.Domain, rec mailroom.DNSRecord) outcome {
	switch rec.Purpose {
	case mailroom.PurposeDKIM:
		return c.checkDKIM(ctx, d, rec)
	case mailroom.PurposeSPF:
		return c.checkSPF(ctx, rec)
	case mailroom.PurposeReturnPath:
		return c.checkReturnPath(ctx, rec)
	case mailroom.PurposeReceiving:
		return c.checkReceiving(ctx, rec)
	case mailroom.PurposeDMARC:
		return c.checkDMARC(ctx, rec)
	}
	return outcome{status: rec.Status, found: rec.Found, problem: rec.Problem}
}

func (c *Checker) resolver() *Resolver {
	if c.Resolver != nil {
		return c.Resolver
	}
	return &Resolver{}
}

// lookupFailed sorts a lookup error: not found is an answer (the record is
// missing), anything else leaves the question open.
func lookupFailed(err error) (notFound bool, o outcome) {
	var derr *net.DNSError
	if errors.As(err, &derr) && derr.IsNotFound {
		return true, outcome{}
	}
	return false, indeterminate(err)
}

// indeterminate is the outcome of a check that DNS did not let finish.
func indeterminate(err error) outcome {
	if err == nil {
		err = errors.New("DNS gave no usable answer")
	}
	return outcome{
		indeterminate: true,
		problem:       "The check could not be completed: " + describeDNSError(err) + "; the record keeps its previous state.",
	}
}

// describeDNSError says in words why a lookup gave no answer.
func describeDNSError(err error) string {
	var derr *net.DNSError
	if !errors.As(err, &derr) {
		return err.Error()
	}
	switch {
	case derr.IsTimeout:
		return fmt.Sprintf("the DNS lookup of %s timed out", derr.Name)
	case derr.IsNotFound:
		return fmt.Sprintf("%s does not exist in DNS", derr.Name)
	}
	return fmt.Sprintf("the DNS lookup of %s failed (%s)", derr.Name, derr.Err)
}

// sameHost compares host names as DNS does: without regard to case
// (RFC 4343 §3) or the root's trailing dot.
func sameHost(a, b string) bool {
	return strings.EqualFold(strings.TrimSuffix(a, "."), strings.TrimSuffix(b, "."))
}
