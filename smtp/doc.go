// Package smtp sends Mailroom's mail (docs/design.md "How mail is delivered"). It holds the three
// mailroom.Transport implementations of docs/api.md "Command line"'s --delivery modes:
//
//   - Direct looks up each recipient domain's MX hosts and delivers to them
//     the way a mail server does: STARTTLS when offered, the certificate
//     checked for the MX host's name (RFC 8461 §4.2) after a handshake that
//     accepts any, and the message in clear on a new connection when the
//     server's TLS fails (RFC 7435) unless the delivery's TLS policy
//     requires verified TLS (tlsgate.go: an enforced MTA-STS policy, RFC
//     8461; a sending domain's tls "enforced"; REQUIRETLS, RFC 8689): then
//     only the hosts the policy allows, only over verified TLS, else the
//     recipients wait (tls_required) or, for REQUIRETLS, bounce with
//     5.7.30; every TLS decision is told to a mailroom.TLSObserver
//     (TLS-RPT, RFC 8460); pipelining, all the recipients of a domain in one transaction,
//     connections kept for the next message to the same host, and a cap on
//     connections per host and overall so that one slow receiver never
//     stalls the others. Each result says whether its session was
//     unencrypted, and under TLS which (mailroom.TLSInfo). With mailroom.Sites it delivers per site (docs/api.md
//     "How mail leaves"): connections capped and shared by every domain of
//     a provider, a place in the site's rate before each transaction,
//     throttling replies told to the site and waited out; with IP pools,
//     connections rotate among source addresses, each with its EHLO name
//     (conns.go keeps the caps, site.go and siterate.go the site's rules).
//   - Relay hands every message to one smarthost, with AUTH and TLS.
//   - Capture sends nothing (the --dev default).
//
// The SMTP client is this package's own, on net/textproto. The client of
// github.com/emersion/go-smtp (v0.25.1) was the first choice, but it always
// says "EHLO localhost" before STARTTLS whatever name it is given (its
// issue #297), which receivers that check the EHLO name reject, and it has
// no PIPELINING (RFC 2920), no context, and no reply code on success. Its
// server remains the test receiver, in package smtptest.
//
// Every outcome is per recipient, and what is not clearly a success or a
// permanent failure is deferred: an unknown result is temporary.
package smtp
