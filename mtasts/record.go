package mtasts

import (
	"errors"
	"fmt"
	"strings"
)

// recordVersion opens every MTA-STS TXT record (RFC 8461 §3.1: sts-version,
// case-sensitive).
const recordVersion = "v=STSv1"

// maxIDLength is the longest policy id (RFC 8461 §3.1: 1*32(ALPHA / DIGIT)).
const maxIDLength = 32

// errNoRecord: no TXT record at _mta-sts.<domain> begins with v=STSv1, so
// the domain announces no policy.
var errNoRecord = errors.New("no MTA-STS TXT record")

// Record is a TXT record _mta-sts.<domain> (RFC 8461 §3.1): it says the
// domain has a policy, and its ID changes whenever the policy does.
type Record struct {
	ID string
}

// ParseRecord parses one TXT record strictly by RFC 8461 §3.1's ABNF:
//
//	sts-text-record = sts-version 1*(sts-field-delim sts-field) [sts-field-delim]
//	sts-field-delim = *WSP ";" *WSP
//	sts-field       = sts-id / sts-extension
//	sts-id          = %s"id=" 1*32(ALPHA / DIGIT)
//	sts-extension   = sts-ext-name "=" sts-ext-value
//	sts-ext-name    = (ALPHA / DIGIT) *31(ALPHA / DIGIT / "_" / "-" / ".")
//	sts-ext-value   = 1*(%x21-3A / %x3C / %x3E-7E)
//
// The id is required and may appear once (two would leave the policy's
// identity ambiguous); extensions are checked for syntax and otherwise
// ignored, as the RFC asks. Anything else is an error: the sender then
// acts as if the domain had no policy (§3.1), which is why strictness here
// can never make delivery stricter than the domain asked for.
func ParseRecord(txt string) (Record, error) {
	rest, ok := strings.CutPrefix(txt, recordVersion)
	if !ok {
		return Record{}, fmt.Errorf("does not begin with %q", recordVersion)
	}
	var rec Record
	fields := 0
	for rest != "" {
		rest = trimWSP(rest)
		if rest == "" || rest[0] != ';' {
			return Record{}, fmt.Errorf("expected \";\" before %q", clip(rest))
		}
		rest = trimWSP(rest[1:])
		if rest == "" {
			break // the optional delimiter at the end
		}
		end := strings.IndexAny(rest, " \t;")
		if end < 0 {
			end = len(rest)
		}
		field := rest[:end]
		rest = rest[end:]
		name, value, ok := strings.Cut(field, "=")
		if !ok {
			return Record{}, fmt.Errorf("field %q has no \"=\"", clip(field))
		}
		fields++
		if name == "id" {
			if rec.ID != "" {
				return Record{}, errors.New("more than one id")
			}
			if !validID(value) {
				return Record{}, fmt.Errorf("id %q is not 1 to %d letters and digits", clip(value), maxIDLength)
			}
			rec.ID = value
			continue
		}
		if !validExtName(name) {
			return Record{}, fmt.Errorf("field name %q is not valid", clip(name))
		}
		if !validRecordExtValue(value) {
			return Record{}, fmt.Errorf("field %s has an invalid value", name)
		}
	}
	if fields == 0 {
		return Record{}, errors.New("has no field after the version")
	}
	if rec.ID == "" {
		return Record{}, errors.New("has no id")
	}
	return rec, nil
}

// pickRecord finds the domain's record among the TXT records at
// _mta-sts.<domain> (RFC 8461 §3.1): those that do not begin with the
// version are other records and discarded; of the rest there must be
// exactly one, and valid, else the domain has no usable policy. A record
// whose version is followed by something other than a delimiter
// ("v=STSv1x") counts as an invalid STS record, not as another record.
func pickRecord(txts []string) (Record, error) {
	var sts []string
	for _, t := range txts {
		if strings.HasPrefix(t, recordVersion) {
			sts = append(sts, t)
		}
	}
	switch len(sts) {
	case 0:
		return Record{}, errNoRecord
	case 1:
		rec, err := ParseRecord(sts[0])
		if err != nil {
			return Record{}, fmt.Errorf("the MTA-STS TXT record %s", err)
		}
		return rec, nil
	default:
		return Record{}, fmt.Errorf("%d MTA-STS TXT records, where there must be one", len(sts))
	}
}

func validID(s string) bool {
	if s == "" || len(s) > maxIDLength {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isAlnum(s[i]) {
			return false
		}
	}
	return true
}

// validExtName is sts-ext-name of the TXT record and sts-policy-ext-name of
// the policy (RFC 8461 §3.1, §3.2): the same production.
func validExtName(s string) bool {
	if s == "" || len(s) > 32 || !isAlnum(s[0]) {
		return false
	}
	for i := 1; i < len(s); i++ {
		c := s[i]
		if !isAlnum(c) && c != '_' && c != '-' && c != '.' {
			return false
		}
	}
	return true
}

// validRecordExtValue: printable ASCII but "=", ";" and space.
func validRecordExtValue(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x21 || c > 0x7e || c == '=' || c == ';' {
			return false
		}
	}
	return true
}

func isAlnum(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}

func trimWSP(s string) string { return strings.TrimLeft(s, " \t") }

// clip shortens what an error quotes of hostile input.
func clip(s string) string {
	const max = 40
	if len(s) > max {
		return s[:max] + "…"
	}
	return s
}
