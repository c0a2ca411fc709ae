package receiving

import (
	"context"
	"net"
	"strings"

	"blitiri.com.ar/go/spf"

	"github.com/mailroom/mailroom"
)

// checkSPF evaluates the SPF policy of the envelope sender's domain for
// the client address (RFC 7208 §4), and says which domain that was: the
// MAIL FROM's, or for the null sender <> the EHLO name's, checked as
// postmaster@ it (RFC 7208 §2.4). DMARC aligns that domain with From.
func checkSPF(ctx context.Context, r Resolver, ip net.IP, helo, mailFrom string) (mailroom.AuthResult, string) {
	sender := mailFrom
	if sender == "" {
		sender = "postmaster@" + helo
	}
	domain := strings.ToLower(strings.TrimSuffix(sender[strings.LastIndexByte(sender, '@')+1:], "."))
	if ip == nil || domain == "" {
		return mailroom.AuthNone, domain
	}
	result, _ := spf.CheckHostWithSender(ip, helo, sender, spf.WithResolver(r), spf.WithContext(ctx))
	switch result {
	case spf.Pass:
		return mailroom.AuthPass, domain
	case spf.Fail:
		return mailroom.AuthFail, domain
	case spf.SoftFail:
		return mailroom.AuthSoftFail, domain
	case spf.Neutral:
		return mailroom.AuthNeutral, domain
	case spf.TempError:
		return mailroom.AuthTempError, domain
	case spf.PermError:
		return mailroom.AuthPermError, domain
	}
	return mailroom.AuthNone, domain
}
