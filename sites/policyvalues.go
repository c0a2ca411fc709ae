package sites

import (
	"math"
	"strings"
	"time"

	"github.com/mailroom/mailroom"
)

// The checks of a policy file's values, each adding a problem at its line.

func (r *policyReader) unknown(line int, key, table string) {
	if table == "site" {
		r.add(line, "unknown key %q in [[site]]; its keys are name, mx, domains, max_connections, max_messages_per_connection, max_rate and connect_timeout", key)
		return
	}
	r.add(line, "unknown key %q in [default]; its keys are max_connections, max_messages_per_connection, max_rate and connect_timeout", key)
}

func (r *policyReader) whole(line int, key string, v any, least, most int64) (int, bool) {
	n, ok := v.(int64)
	switch {
	case !ok:
		r.add(line, "%s must be a whole number", key)
	case n < least:
		r.add(line, "%s must be at least %d", key, least)
	case n > most:
		r.add(line, "%s must be at most %d", key, most)
	default:
		return int(n), true
	}
	return 0, false
}

// maxPolicyRate bounds max_rate: more than a million messages a minute to
// one site is a typo.
const maxPolicyRate = 1_000_000

func (r *policyReader) rate(line int, v any) (float64, bool) {
	var f float64
	switch n := v.(type) {
	case int64:
		f = float64(n)
	case float64:
		f = n
	default:
		r.add(line, "max_rate must be a number of messages a minute (0 for no limit)")
		return 0, false
	}
	switch {
	case math.IsNaN(f) || f < 0:
		r.add(line, "max_rate must not be negative (0 is no limit)")
	case f > maxPolicyRate:
		r.add(line, "max_rate must be at most %d messages a minute", maxPolicyRate)
	default:
		return f, true
	}
	return 0, false
}

// connect_timeout bounds: RFC 5321 §4.5.3.2.1 gives the greeting 5 minutes.
const (
	minConnectTimeout = time.Second
	maxConnectTimeout = 5 * time.Minute
)

func (r *policyReader) timeout(line int, v any) (time.Duration, bool) {
	s, ok := v.(string)
	d, err := time.ParseDuration(s)
	switch {
	case !ok || err != nil:
		r.add(line, `connect_timeout must be a duration such as "30s"`)
	case d < minConnectTimeout:
		r.add(line, "connect_timeout must be at least %v", minConnectTimeout)
	case d > maxConnectTimeout:
		r.add(line, "connect_timeout must be at most %v", maxConnectTimeout)
	default:
		return d, true
	}
	return 0, false
}

// names reads mx (host patterns: a host name, or "*." and a domain name)
// or domains (domain names), in their canonical form.
func (r *policyReader) names(line int, key string, v any) ([]string, bool) {
	list, ok := v.([]any)
	if !ok {
		r.add(line, "%s must be a list of strings", key)
		return nil, false
	}
	out := make([]string, 0, len(list))
	for _, item := range list {
		s, ok := item.(string)
		if !ok {
			r.add(line, "%s must be a list of strings", key)
			return nil, false
		}
		name, wild := strings.TrimSpace(s), ""
		if key == "mx" {
			if rest, ok := strings.CutPrefix(name, "*."); ok {
				name, wild = rest, "*."
			}
		}
		n, err := mailroom.NormalizeDomainName(name)
		if err != nil || strings.Contains(n, "*") {
			if key == "mx" {
				r.add(line, `mx pattern %q must be a host name, or "*." and a domain name`, s)
			} else {
				r.add(line, "domains: %q is not a domain name", s)
			}
			return nil, false
		}
		out = append(out, wild+n)
	}
	return out, true
}
