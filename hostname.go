package mailroom

import (
	"net/netip"
	"strings"
)

// HostnameProblem says why name will not do as the service's own host name
// on the Internet, or "" when it will. The name is the EHLO argument, which
// RFC 5321 §4.1.1.1 wants to be a fully qualified domain name that resolves
// to the client, and by default also what the records customers publish
// point at (SPF "a:NAME", the return-path MX): with a bare "vm" or
// "localhost" receivers find nothing, so every domain's SPF fails.
// This is a warning at start, not a refusal: development needs no DNS.
func HostnameProblem(name string) string {
	h := strings.TrimSuffix(strings.ToLower(strings.TrimSpace(name)), ".")
	switch {
	case h == "":
		return "is empty"
	case h == "localhost" || strings.HasSuffix(h, ".localhost"):
		// RFC 6761 §6.3: localhost names this machine, for every machine.
		return "names every machine's loopback, not this host"
	case isIPLiteral(h):
		return "is an IP address, not a domain name"
	case !strings.Contains(h, "."):
		return "is not a fully qualified domain name (it has no dot)"
	case strings.HasSuffix(h, ".local"):
		// RFC 6762 §3: .local names exist only on the local link.
		return "is a multicast DNS name, known only on the local link"
	case strings.HasSuffix(h, ".localdomain"):
		return "is an /etc/hosts name, unknown to DNS"
	}
	return ""
}

func isIPLiteral(h string) bool {
	_, err := netip.ParseAddr(strings.Trim(h, "[]"))
	return err == nil
}
