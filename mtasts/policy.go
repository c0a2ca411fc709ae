package mtasts

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/mailroom/mailroom"
)

// MaxMaxAge is the longest a policy may be cached: max_age is at most
// 31557600 seconds, a year (RFC 8461 §3.2).
const MaxMaxAge = 31557600 * time.Second

// Policy is a parsed policy file (RFC 8461 §3.2).
type Policy struct {
	Mode mailroom.MTASTSMode
	// MX holds the mx patterns in the file's order; empty when Mode is
	// none.
	MX     []string
	MaxAge time.Duration
}

// ParsePolicy parses a policy file strictly by RFC 8461 §3.2's ABNF:
//
//	sts-policy-record      = sts-policy-field *WSP *(sts-policy-term sts-policy-field *WSP) [sts-policy-term]
//	sts-policy-term        = LF / CRLF
//	sts-policy-field-delim = ":" *WSP
//	version: STSv1 | mode: testing / enforce / none | max_age: 1*10(DIGIT) | mx: ["*."] Domain
//	sts-policy-extension   = sts-policy-ext-name ":" *WSP sts-policy-ext-value
//
// Lines end with CRLF or LF (a last terminator is optional; a blank line
// is an error). The first field is "version: STSv1"; mode and max_age
// (capped at 31557600) are required and may appear once; mx is required,
// and may repeat, unless the mode is none; names and keywords are
// case-sensitive (%s); unknown fields are ignored when they are
// syntactically valid. A policy that does not parse is not applied, and
// reported as sts-policy-invalid (RFC 8460 §4.3.2.1).
func ParsePolicy(text string) (Policy, error) {
	if !utf8.ValidString(text) {
		return Policy{}, errors.New("the policy is not UTF-8")
	}
	body := text
	if b, ok := strings.CutSuffix(body, "\n"); ok {
		body = strings.TrimSuffix(b, "\r")
	}
	if body == "" {
		return Policy{}, errors.New("the policy is empty")
	}
	var p Policy
	var haveMode, haveMaxAge bool
	for i, line := range strings.Split(body, "\n") {
		n := i + 1
		line = strings.TrimSuffix(line, "\r")
		line = strings.TrimRight(line, " \t")
		if line == "" {
			return Policy{}, fmt.Errorf("line %d is blank", n)
		}
		name, value, ok := strings.Cut(line, ":")
		if !ok {
			return Policy{}, fmt.Errorf("line %d has no \":\"", n)
		}
		if !validExtName(name) {
			return Policy{}, fmt.Errorf("line %d: %q is not a field name", n, clip(name))
		}
		value = trimWSP(value)
		if n == 1 && name != "version" {
			return Policy{}, errors.New("the first field is not version")
		}
		switch name {
		case "version":
			if n != 1 {
				return Policy{}, fmt.Errorf("line %d: version again", n)
			}
			if value != "STSv1" {
				return Policy{}, fmt.Errorf("version %q is not STSv1", clip(value))
			}
		case "mode":
			if haveMode {
				return Policy{}, fmt.Errorf("line %d: mode again", n)
			}
			haveMode = true
			switch m := mailroom.MTASTSMode(value); m {
			case mailroom.MTASTSEnforce, mailroom.MTASTSTesting, mailroom.MTASTSNone:
				p.Mode = m
			default:
				return Policy{}, fmt.Errorf("mode %q is not enforce, testing or none", clip(value))
			}
		case "max_age":
			if haveMaxAge {
				return Policy{}, fmt.Errorf("line %d: max_age again", n)
			}
			haveMaxAge = true
			age, err := parseMaxAge(value)
			if err != nil {
				return Policy{}, err
			}
			p.MaxAge = age
		case "mx":
			if !validMXPattern(value) {
				return Policy{}, fmt.Errorf("line %d: mx %q is not a host name, nor *. and one", n, clip(value))
			}
			p.MX = append(p.MX, value)
		default:
			if !validPolicyExtValue(value) {
				return Policy{}, fmt.Errorf("line %d: field %s has an invalid value", n, name)
			}
		}
	}
	switch {
	case !haveMode:
		return Policy{}, errors.New("the policy has no mode")
	case !haveMaxAge:
		return Policy{}, errors.New("the policy has no max_age")
	case p.Mode != mailroom.MTASTSNone && len(p.MX) == 0:
		return Policy{}, fmt.Errorf("the policy's mode is %s and it has no mx", p.Mode)
	case p.Mode == mailroom.MTASTSNone:
		p.MX = nil
	}
	return p, nil
}

// parseMaxAge reads 1*10(DIGIT) seconds, capped at MaxMaxAge. A policy
// that asks for longer than the RFC's maximum is kept for the maximum
// rather than refused: refusing it would leave its domain without a
// policy, and an enforce policy's mail free to go in clear, for a mistake
// that only concerns how long to cache it.
func parseMaxAge(v string) (time.Duration, error) {
	if v == "" || len(v) > 10 || strings.TrimLeft(v, "0123456789") != "" {
		return 0, fmt.Errorf("max_age %q is not 1 to 10 digits", clip(v))
	}
	secs, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("max_age %q: %v", clip(v), err)
	}
	// Compared in seconds: 10 digits of seconds overflow a Duration.
	if secs > int64(MaxMaxAge/time.Second) {
		return MaxMaxAge, nil
	}
	return time.Duration(secs) * time.Second, nil
}

// validMXPattern is sts-policy-mx-value: ["*."] Domain, where Domain is RFC
// 5321 §4.1.2's: labels of letters, digits and inner hyphens, each 1 to 63
// octets, 253 in all. A trailing dot is not part of it.
func validMXPattern(v string) bool {
	v = strings.TrimPrefix(v, "*.")
	if v == "" || len(v) > 253 {
		return false
	}
	for label := range strings.SplitSeq(v, ".") {
		if label == "" || len(label) > 63 || !isAlnum(label[0]) || !isAlnum(label[len(label)-1]) {
			return false
		}
		for i := 0; i < len(label); i++ {
			if !isAlnum(label[i]) && label[i] != '-' {
				return false
			}
		}
	}
	return true
}

// validPolicyExtValue is sts-policy-ext-value: printable ASCII or UTF-8
// beyond it, spaces only inside, no ASCII control characters (CTL). The line's
// trailing and leading blanks are already gone, so only what is inside is
// left to check.
func validPolicyExtValue(v string) bool {
	if v == "" {
		return false
	}
	for _, r := range v {
		if r < 0x20 || r == 0x7f {
			return false
		}
	}
	return true
}
