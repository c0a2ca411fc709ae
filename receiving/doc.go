// Package receiving takes mail for customers' receiving domains (docs/api.md
// "Receiving mail"). The inbound MX asks it, at RCPT, whether an address is
// at a verified receiving domain (Receiver.Accepts) and hands it, after
// DATA, each transaction's message (Receiver.Receive). Receive checks the
// message as a receiver does (SPF for the envelope sender, RFC 7208; DKIM,
// RFC 6376; DMARC for the From domain, RFC 7489), writes the verdicts into
// an Authentication-Results field (RFC 8601) above a Received field (RFC
// 5321 §4.4), parses what it can of the message (bounded: malformed mail is
// stored raw all the same) and stores it once per account, in one
// transaction with its email.received event.
//
// The checks (Authenticate) and the parse (Parse) are functions over the
// message's bytes and a DNS resolver, testable on their own.
package receiving
