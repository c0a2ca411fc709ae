// Package compose renders an accepted message as the signed RFC 5322 bytes
// that are sent and stored.
//
// docs/design.md "How a message travels": the delivery worker composes and DKIM-signs a message once
// and stores the bytes; retries send exactly those bytes, so the Message-ID,
// the Date and the signature never change between attempts, and the email
// log's raw view (docs/api.md "The email log") shows what receivers got.
//
// Marketing mail carries a one-click unsubscribe link per recipient (RFC
// 8058), so it is composed once without it and stored unsigned; each
// recipient's copy adds its link and a signature over both (copies.go),
// the same bytes on every attempt.
package compose
