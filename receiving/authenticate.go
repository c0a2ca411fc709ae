package receiving

import (
	"context"
	"net"

	"github.com/mailroom/mailroom"
)

// Resolver is what the checks look names up with: the project's
// *dns.Resolver, which also satisfies blitiri spf's DNSResolver.
type Resolver interface {
	LookupTXT(ctx context.Context, name string) ([]string, error)
	LookupMX(ctx context.Context, name string) ([]*net.MX, error)
	LookupIPAddr(ctx context.Context, host string) ([]net.IPAddr, error)
	LookupAddr(ctx context.Context, addr string) ([]string, error)
}

// Verdicts are the checks' results and the identities they were about,
// for the Authentication-Results field.
type Verdicts struct {
	Auth mailroom.ReceivedAuthentication
	// MailFrom and Helo are the identities SPF checked (RFC 7208 §2.3,
	// §2.4); FromDomain is the RFC5322.From domain DMARC checked ("" when
	// the message has none, or several).
	MailFrom, Helo string
	FromDomain     string
}

// Authenticate checks a message as a receiver does: SPF for the envelope
// sender and client address, each DKIM signature over data (the bytes as
// they arrived), and DMARC for the From domain, which passes when SPF or
// a DKIM signature passes for a domain aligned with it. No verdict
// refuses the message: DMARC fail is stored and reported (docs/api.md
// "Receiving mail"); what to do with it is the application's choice.
func Authenticate(ctx context.Context, r Resolver, in mailroom.InboundMessage, data []byte) Verdicts {
	v := Verdicts{MailFrom: in.MailFrom, Helo: in.Helo}
	spfResult, spfDomain := checkSPF(ctx, r, remoteIP(in.RemoteIP), in.Helo, in.MailFrom)
	v.Auth.SPF = spfResult
	v.Auth.DKIM, v.Auth.DKIMSignatures = checkDKIM(ctx, r, data)
	from, fromErr := fromDomain(data)
	v.FromDomain = from
	v.Auth.DMARC = checkDMARC(ctx, r, from, fromErr, spfResult, spfDomain, v.Auth.DKIMSignatures)
	return v
}
