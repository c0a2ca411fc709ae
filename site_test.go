package mailroom

import "testing"

func TestMatchMXPattern(t *testing.T) {
	for _, tc := range []struct {
		pattern, host string
		want          bool
	}{
		{"*.google.com", "gmail-smtp-in.l.google.com", true},
		{"*.google.com", "aspmx.l.google.com.", true},
		{"*.google.com", "ASPMX.L.GOOGLE.COM", true},
		{"*.google.com", "google.com", false},
		{"*.google.com", "evilgoogle.com", false},
		{"*.google.com", "google.com.evil.example", false},
		{"mx.example.net", "mx.example.net.", true},
		{"mx.example.net", "mx2.example.net", false},
		{"", "", false},
	} {
		if got := MatchMXPattern(tc.pattern, tc.host); got != tc.want {
			t.Errorf("MatchMXPattern(%q, %q) = %v, want %v", tc.pattern, tc.host, got, tc.want)
		}
	}
}

// Sites by MX: a provider's domains are its site whatever their names;
// Microsoft 365 tenants are Microsoft's; an operator's site naming a
// domain wins over every pattern; anything else is a site of its own
// named by its sorted MX hosts, with the default profile's limits.
func TestDeliveryPolicySite(t *testing.T) {
	p := NewDeliveryPolicy()
	for _, tc := range []struct {
		domain string
		mx     []string
		want   string
	}{
		{"gmail.com", []string{"gmail-smtp-in.l.google.com.", "alt1.gmail-smtp-in.l.google.com."}, "google"},
		{"startup.example", []string{"aspmx.l.google.com", "alt1.aspmx.l.google.com"}, "google"},
		{"contoso.example", []string{"contoso-example.mail.protection.outlook.com"}, "microsoft"},
		{"hotmail.com", []string{"hotmail-com.olc.protection.outlook.com"}, "microsoft"},
		{"yahoo.com", []string{"mta5.am0.yahoodns.net"}, "yahoo"},
		{"icloud.com", []string{"mx01.mail.icloud.com"}, "apple"},
		{"small.example", []string{"mx2.small.example.", "MX1.small.example"}, "mx1.small.example,mx2.small.example"},
	} {
		s := p.Site(tc.domain, tc.mx)
		if s.Name != tc.want {
			t.Errorf("Site(%s, %v) = %q, want %q", tc.domain, tc.mx, s.Name, tc.want)
		}
	}
	if s := p.Site("small.example", []string{"mx1.small.example"}); s.MaxConnections != DefaultSiteProfile.MaxConnections ||
		s.MaxMessagesPerConnection != DefaultSiteProfile.MaxMessagesPerConnection || s.MaxRate != 0 {
		t.Errorf("an unmatched destination's profile %+v, want the default's limits", s)
	}

	op := SiteProfile{Name: "partner", Domains: []string{"Partner.Example."}, MaxConnections: 2}
	p.Sites = append([]SiteProfile{op}, p.Sites...)
	if s := p.Site("partner.example", []string{"aspmx.l.google.com"}); s.Name != "partner" || s.MaxConnections != 2 {
		t.Errorf("a domain the operator names, hosted at Google: site %+v, want the operator's", s)
	}
}
