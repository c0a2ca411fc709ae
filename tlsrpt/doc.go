// Package tlsrpt is SMTP TLS Reporting (RFC 8460) and the TLS metric.
//
// Its Collector is told of every TLS session delivery makes with an MX
// host (mailroom.TLSObserver): it counts mailroom_delivery_tls_total by
// policy and result, and, when reports are on (--tls-rpt-from), adds each
// session to the counts of its report window, recipient domain and policy
// in memory, flushed to the store every few seconds so that the counts of
// every node add up there (mailroom.TLSReportStore).
//
// Its Reporter, once a window has ended, claims the window's reports one
// domain at a time (one node builds and sends each), looks up the domain's
// TXT record `_smtp._tls.<domain>` (RFC 8460 §3), and sends the report
// (JSON, §4; gzip, §5) to each of its `rua` destinations: `https:` by POST
// (§5.4) through the SSRF guard of webhooks (package netguard), `mailto:`
// as a message (§5.3) handed to a ReportMailer, which Mailroom's wiring
// gives its own accept path so that the report is DKIM-signed and retried
// as any mail.
//
// Windows are --tls-rpt-interval long, aligned to the Unix epoch: UTC days
// at the default 24h (RFC 8460 §4.1 asks for daily reports by default).
package tlsrpt
