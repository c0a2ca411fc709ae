package tlsrpt

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/mail"
	"net/url"
	"strings"
)

// recordVersion starts every TLS-RPT record (RFC 8460 §3: %s"v=TLSRPTv1",
// case-sensitive, first in the record).
const recordVersion = "v=TLSRPTv1"

// TXTResolver looks up TXT records; dns.Resolver (--dns-server) is one.
type TXTResolver interface {
	LookupTXT(ctx context.Context, name string) ([]string, error)
}

// Destinations are where a domain asks its reports to go.
type Destinations struct {
	// HTTPS are the https: URIs, posted to (§5.4).
	HTTPS []string
	// Mailto are the mail addresses of the mailto: URIs (§5.3).
	Mailto []string
}

// MaxDestinations is how many of a record's rua URIs get a report: a
// record is the receiving domain's to write, and each destination costs
// this node a POST or a message (from the operator's own domain) every
// window. The first ones, https before mailto, are kept.
const MaxDestinations = 10

// capped keeps the first n destinations, https before mailto.
func (d Destinations) capped(n int) Destinations {
	d.HTTPS = d.HTTPS[:min(len(d.HTTPS), n)]
	d.Mailto = d.Mailto[:min(len(d.Mailto), n-len(d.HTTPS))]
	return d
}

// errNoRecord says the domain wants no report: no record, several, or one
// that does not parse (§3).
var errNoRecord = errors.New("no valid TLS-RPT record")

// lookupDestinations finds domain's report destinations at
// `_smtp._tls.<domain>` (RFC 8460 §3). The domain not existing, or
// publishing no single valid record, is errNoRecord; a failing resolver
// is another error, so that the report is tried again later rather than
// dropped.
func lookupDestinations(ctx context.Context, r TXTResolver, domain string) (Destinations, error) {
	txts, err := r.LookupTXT(ctx, "_smtp._tls."+domain)
	var dnsErr *net.DNSError
	if errors.As(err, &dnsErr) && dnsErr.IsNotFound {
		return Destinations{}, errNoRecord
	} else if err != nil {
		return Destinations{}, err
	}
	// §3: records that do not begin with the version are discarded; if
	// the number left is not one, or the one left is invalid, the domain
	// does not implement TLS-RPT.
	var records []string
	for _, t := range txts {
		if isVersioned(t) {
			records = append(records, t)
		}
	}
	if len(records) != 1 {
		return Destinations{}, errNoRecord
	}
	d, err := ParseRecord(records[0])
	if err != nil {
		return Destinations{}, fmt.Errorf("%w: %v", errNoRecord, err)
	}
	return d, nil
}

// isVersioned says whether a TXT record begins with the version and a
// field delimiter (*WSP ";").
func isVersioned(t string) bool {
	rest, ok := strings.CutPrefix(t, recordVersion)
	return ok && strings.HasPrefix(strings.TrimLeft(rest, " \t"), ";")
}

// ParseRecord parses a TLS-RPT TXT record strictly (RFC 8460 §3):
//
//	tlsrpt-record = tlsrpt-version 1*(field-delim tlsrpt-field) [field-delim]
//	field-delim   = *WSP ";" *WSP
//	tlsrpt-field  = tlsrpt-rua / tlsrpt-extension
//	tlsrpt-rua    = %s"rua=" tlsrpt-uri *(*WSP "," *WSP tlsrpt-uri)
//	tlsrpt-extension = tlsrpt-ext-name "=" tlsrpt-ext-value
//
// Extensions are checked and ignored, as §3 says unknown fields are. A
// URI of another scheme than https and mailto is ignored (§3 defines
// those two); a record left with no destination is an error.
func ParseRecord(t string) (Destinations, error) {
	if !isVersioned(t) {
		return Destinations{}, errors.New("does not begin with v=TLSRPTv1;")
	}
	fields := strings.Split(t, ";")[1:]
	var d Destinations
	var rua bool
	for i, f := range fields {
		f = strings.Trim(f, " \t")
		if f == "" {
			if i == len(fields)-1 && i > 0 {
				break // the optional trailing field-delim
			}
			return Destinations{}, errors.New("has an empty field")
		}
		name, value, ok := strings.Cut(f, "=")
		if !ok {
			return Destinations{}, fmt.Errorf("has a field without '=': %q", f)
		}
		if name == "rua" {
			rua = true
			if err := d.add(value); err != nil {
				return Destinations{}, err
			}
			continue
		}
		if !validExtName(name) || !validExtValue(value) {
			return Destinations{}, fmt.Errorf("has an invalid field %q", f)
		}
	}
	if !rua {
		return Destinations{}, errors.New("has no rua")
	}
	if len(d.HTTPS)+len(d.Mailto) == 0 {
		return Destinations{}, errors.New("has no https: or mailto: rua")
	}
	return d, nil
}

// add parses a rua's comma-separated URIs (§3: a comma within a URI is
// percent-encoded, so every comma separates).
func (d *Destinations) add(value string) error {
	for raw := range strings.SplitSeq(value, ",") {
		raw = strings.Trim(raw, " \t")
		u, err := url.Parse(raw)
		if raw == "" || err != nil || u.Scheme == "" {
			return fmt.Errorf("has a rua that is not a URI: %q", raw)
		}
		switch strings.ToLower(u.Scheme) {
		case "https":
			if u.Host == "" {
				return fmt.Errorf("has an https rua without a host: %q", raw)
			}
			d.HTTPS = append(d.HTTPS, raw)
		case "mailto":
			addr, err := url.PathUnescape(u.Opaque)
			if err != nil {
				return fmt.Errorf("has a mailto rua that is not an address: %q", raw)
			}
			a, err := mail.ParseAddress(addr)
			if err != nil || a.Name != "" {
				return fmt.Errorf("has a mailto rua that is not an address: %q", raw)
			}
			d.Mailto = append(d.Mailto, a.Address)
		}
	}
	return nil
}

// validExtName: (ALPHA / DIGIT) *31(ALPHA / DIGIT / "_" / "-" / ".").
func validExtName(s string) bool {
	if s == "" || len(s) > 32 || !isAlnum(s[0]) {
		return false
	}
	for i := 1; i < len(s); i++ {
		if c := s[i]; !isAlnum(c) && c != '_' && c != '-' && c != '.' {
			return false
		}
	}
	return true
}

// validExtValue: 1*(%x21-3A / %x3C / %x3E-7E), no "=", ";" or space.
func validExtValue(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x21 || c > 0x7e || c == ';' || c == '=' {
			return false
		}
	}
	return true
}

func isAlnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}
