package receiving

import (
	"net"
	"strings"
	"time"

	"github.com/mailroom/mailroom"
)

// receivedField is the Received field (RFC 5321 §4.4) the service adds
// as it takes a message: the client's EHLO name and address, this host,
// the protocol (ESMTP, or ESMTPS under STARTTLS: RFC 3848 §2; an MX
// takes no authenticated mail, so never ESMTPA), the recipient when there
// is one, and the time (RFC 5322 §3.6.7 date-time), with its CRLF.
func receivedField(hostname string, in mailroom.InboundMessage) string {
	var b strings.Builder
	b.WriteString("Received: from ")
	helo := sanitizeToken(in.Helo)
	if helo == "" {
		helo = "unknown"
	}
	b.WriteString(helo)
	if ip := remoteIP(in.RemoteIP); ip != nil {
		b.WriteString(" ([" + ip.String() + "])")
	}
	protocol := "ESMTP"
	if in.TLS {
		protocol = "ESMTPS"
	}
	b.WriteString("\r\n\tby " + hostname + " with " + protocol)
	// RFC 5321 §4.4: "for" names one recipient; more would tell each
	// of them about the others.
	if len(in.Recipients) == 1 {
		if rcpt := sanitizeToken(in.Recipients[0]); rcpt != "" {
			b.WriteString("\r\n\tfor <" + rcpt + ">")
		}
	}
	b.WriteString("; " + in.ReceivedAt.UTC().Format(time.RFC1123Z) + "\r\n")
	return b.String()
}

// remoteIP is the client's address from "ip" or "ip:port".
func remoteIP(s string) net.IP {
	if host, _, err := net.SplitHostPort(s); err == nil {
		s = host
	}
	return net.ParseIP(strings.Trim(s, "[]"))
}

// sanitizeToken keeps what a client said fit for a header field: no line
// breaks, no controls, no comment or angle delimiters, bounded.
func sanitizeToken(s string) string {
	s = strings.Map(func(r rune) rune {
		if r < 33 || r == 127 || strings.ContainsRune("()<>;\\\"", r) {
			return -1
		}
		return r
	}, s)
	if len(s) > 255 {
		s = s[:255]
	}
	return s
}
