package mailroom

import (
	"slices"
	"strings"
	"time"
)

// SiteProfile is the limits one destination site is sent to within (docs/api.md
// "How mail leaves"). A site is a set of MX hosts: every recipient domain whose
// MX hosts match one profile's patterns shares that profile's limits, so that
// a provider's thousands of hosted domains are one receiver to the sender, as
// they are one receiver to the provider.
type SiteProfile struct {
	// Name names the site: the profile's own name, or, for a destination no
	// profile matches, its MX host names sorted and joined with commas.
	Name string
	// MX are the host patterns the profile matches (MatchMXPattern); Domains
	// the recipient domains it matches whatever their MX hosts.
	MX      []string
	Domains []string
	// MaxConnections is the most SMTP connections open to the site.
	MaxConnections int
	// MaxMessagesPerConnection is the most transactions one connection
	// carries before it is closed with QUIT.
	MaxMessagesPerConnection int
	// MaxRate is the most messages (transactions) a minute; 0 is no limit
	// until the site's replies set one (adaptive back-off).
	MaxRate float64
	// ConnectTimeout bounds one TCP connect and the greeting.
	ConnectTimeout time.Duration
}

// DefaultSiteProfile is the profile of a destination no other profile
// matches (docs/api.md "How mail leaves").
var DefaultSiteProfile = SiteProfile{
	MaxConnections:           10,
	MaxMessagesPerConnection: 100,
	MaxRate:                  0,
	ConnectTimeout:           30 * time.Second,
}

// BuiltInSiteProfiles are the big mailbox providers, matched by their MX
// host names. Their connection and per-connection limits are the ones large
// senders use for them (KumoMTA's community traffic-shaping rules, Postfix
// operators' per-transport limits), since the providers publish no numbers
// of their own beyond "throttle when we say so"; their rates are left to
// adaptive back-off, which learns each sender's allowance from the replies.
var BuiltInSiteProfiles = []SiteProfile{
	{Name: "google", MX: []string{"*.google.com", "*.googlemail.com"},
		MaxConnections: 5, MaxMessagesPerConnection: 50, ConnectTimeout: 30 * time.Second},
	// Outlook.com and Hotmail, every Microsoft 365 tenant's
	// <tenant>.mail.protection.outlook.com, and Exchange Online's DANE
	// hosts <tenant>.<x>.mx.microsoft. Large senders give the consumer
	// and the Microsoft 365 edge 5 connections each, 50 messages a
	// connection; one site here, so 10.
	{Name: "microsoft", MX: []string{"*.outlook.com", "*.hotmail.com", "*.olc.protection.outlook.com", "*.mail.protection.outlook.com", "*.mx.microsoft"},
		MaxConnections: 10, MaxMessagesPerConnection: 50, ConnectTimeout: 30 * time.Second},
	{Name: "yahoo", MX: []string{"*.yahoodns.net", "*.yahoo.com", "*.aol.com"},
		MaxConnections: 5, MaxMessagesPerConnection: 20, ConnectTimeout: 30 * time.Second},
	{Name: "apple", MX: []string{"*.mail.icloud.com", "*.me.com", "*.mac.com"},
		MaxConnections: 5, MaxMessagesPerConnection: 50, ConnectTimeout: 30 * time.Second},
}

// DeliveryPolicy is the set of site profiles in force: the operator's
// (--delivery-policy) first, then the built-in ones, then Default.
type DeliveryPolicy struct {
	Default SiteProfile
	Sites   []SiteProfile
}

// NewDeliveryPolicy is the built-in policy: BuiltInSiteProfiles and
// DefaultSiteProfile.
func NewDeliveryPolicy() DeliveryPolicy {
	return DeliveryPolicy{Default: DefaultSiteProfile, Sites: slices.Clone(BuiltInSiteProfiles)}
}

// Site returns the profile of recipient domain, whose MX hosts are mx: the
// first profile that names the domain, else the first whose patterns match
// one of the hosts, else Default named by the sorted MX hosts. Host names are
// compared in lower case without the root's trailing dot.
func (p DeliveryPolicy) Site(domain string, mx []string) SiteProfile {
	domain = canonicalHost(domain)
	for _, s := range p.Sites {
		for _, d := range s.Domains {
			if canonicalHost(d) == domain {
				return s
			}
		}
	}
	hosts := make([]string, 0, len(mx))
	for _, h := range mx {
		hosts = append(hosts, canonicalHost(h))
	}
	for _, s := range p.Sites {
		for _, pat := range s.MX {
			for _, h := range hosts {
				if MatchMXPattern(pat, h) {
					return s
				}
			}
		}
	}
	s := p.Default
	slices.Sort(hosts)
	s.Name = strings.Join(slices.Compact(hosts), ",")
	if s.Name == "" {
		s.Name = domain
	}
	return s
}

// MatchMXPattern reports whether host matches pattern: a name, or "*."
// followed by a name, which matches any host below that name at any depth
// ("*.google.com" matches "gmail-smtp-in.l.google.com", not "google.com").
// Both are compared in lower case without a trailing dot.
func MatchMXPattern(pattern, host string) bool {
	pattern, host = canonicalHost(pattern), canonicalHost(host)
	if suffix, ok := strings.CutPrefix(pattern, "*."); ok {
		return strings.HasSuffix(host, "."+suffix)
	}
	return pattern != "" && pattern == host
}

func canonicalHost(name string) string {
	return strings.TrimSuffix(strings.ToLower(strings.TrimSpace(name)), ".")
}
