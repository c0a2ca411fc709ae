package tlscert_test

import (
	"net"
	"slices"
	"testing"
)

func TestSelfSignedSubjectAltNames(t *testing.T) {
	loopbacks := []string{"127.0.0.1", "::1"}
	for _, tc := range []struct {
		hostname string
		wantDNS  []string
		wantIPs  []string
	}{
		{"", []string{"localhost"}, loopbacks},
		{"mail.example.com", []string{"localhost", "mail.example.com"}, loopbacks},
		{" Mail.Example.COM. ", []string{"localhost", "mail.example.com"}, loopbacks},
		{"localhost", []string{"localhost"}, loopbacks},
		{"LOCALHOST", []string{"localhost"}, loopbacks},
		{"192.0.2.10", []string{"localhost"}, []string{"127.0.0.1", "::1", "192.0.2.10"}},
		{"2001:db8::25", []string{"localhost"}, []string{"127.0.0.1", "::1", "2001:db8::25"}},
		{"[2001:db8::25]", []string{"localhost"}, []string{"127.0.0.1", "::1", "2001:db8::25"}},
		{"127.0.0.1", []string{"localhost"}, loopbacks},
		{"::1", []string{"localhost"}, loopbacks},
		{"0:0:0:0:0:0:0:1", []string{"localhost"}, loopbacks},
	} {
		t.Run(tc.hostname, func(t *testing.T) {
			leaf := leafOf(t, mustSelfSigned(t, t.TempDir(), tc.hostname, testNow, true))
			if !slices.Equal(leaf.DNSNames, tc.wantDNS) {
				t.Errorf("DNS SANs %v, want %v", leaf.DNSNames, tc.wantDNS)
			}
			var ips []string
			for _, ip := range leaf.IPAddresses {
				ips = append(ips, ip.String())
			}
			if !slices.Equal(ips, tc.wantIPs) {
				t.Errorf("IP SANs %v, want %v", ips, tc.wantIPs)
			}
			for _, ip := range leaf.IPAddresses {
				if ip.To4() != nil && len(ip) != net.IPv4len {
					t.Errorf("IPv4 SAN %v stored in 16-byte form", ip)
				}
			}
		})
	}
}
