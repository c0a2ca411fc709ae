package webhook

import (
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"net/url"
	"strings"
	"syscall"

	"github.com/mailroom/mailroom"
	"github.com/mailroom/mailroom/netguard"
)

// Outcomes of an attempt, the label of the attempts metric: coarse enough
// to graph, fine enough to tell a dead receiver from a slow one or a
// refused address.
const (
	OutcomeSucceeded = "succeeded"
	// OutcomeHTTPError is an answer other than 2xx, a redirect included.
	OutcomeHTTPError = "http_error"
	// OutcomeTimeout is no answer within mailroom.WebhookTimeout.
	OutcomeTimeout = "timeout"
	// OutcomeConnection is a failure to resolve, connect or shake hands,
	// or a connection that broke.
	OutcomeConnection = "connection_error"
	// OutcomeRefused is a URL or address the guard does not let the
	// service call.
	OutcomeRefused = "refused"
	// OutcomeNotSent is an attempt the service could not make on its own
	// side: the secret cannot be opened, or the event is gone.
	OutcomeNotSent = "not_sent"
)

// Outcomes lists every outcome, for metrics that start at zero.
var Outcomes = []string{OutcomeSucceeded, OutcomeHTTPError, OutcomeTimeout, OutcomeConnection, OutcomeRefused, OutcomeNotSent}

// describe classifies a failed request and says why it failed in words
// for the endpoint's owner, who reads them in the attempts log: what
// happened on the wire ("connection refused"), never the service's own
// network details (its resolver's address, say).
func describe(err error) (outcome, text string) {
	if why, ok := refusal(err); ok {
		return OutcomeRefused, "address not allowed: " + why
	}
	var timeout interface{ Timeout() bool }
	if errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &timeout) && timeout.Timeout()) {
		var dns *net.DNSError
		if errors.As(err, &dns) {
			return OutcomeConnection, "could not resolve " + dns.Name + ": the lookup timed out"
		}
		return OutcomeTimeout, "timed out after " + mailroom.WebhookTimeout.String()
	}
	var dns *net.DNSError
	if errors.As(err, &dns) {
		if dns.IsNotFound {
			return OutcomeConnection, "could not resolve " + dns.Name + ": no such host"
		}
		return OutcomeConnection, "could not resolve " + dns.Name
	}
	var cert *tls.CertificateVerificationError
	if errors.As(err, &cert) {
		return OutcomeConnection, "TLS certificate not accepted: " + strings.TrimPrefix(cert.Err.Error(), "x509: ")
	}
	var record tls.RecordHeaderError
	if errors.As(err, &record) {
		return OutcomeConnection, "TLS handshake failed: the server did not answer in TLS"
	}
	var alert tls.AlertError
	if errors.As(err, &alert) {
		return OutcomeConnection, "TLS handshake failed: " + alert.Error()
	}
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		return OutcomeConnection, "connection refused"
	case errors.Is(err, syscall.ECONNRESET):
		return OutcomeConnection, "connection reset"
	case errors.Is(err, syscall.EHOSTUNREACH):
		return OutcomeConnection, "host unreachable"
	case errors.Is(err, syscall.ENETUNREACH):
		return OutcomeConnection, "network unreachable"
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return OutcomeConnection, "connection closed before a response"
	}
	// The URL is the endpoint's own, and its owner knows it.
	var u *url.Error
	if errors.As(err, &u) {
		err = u.Err
	}
	return OutcomeConnection, "connection failed: " + err.Error()
}

// refusal finds the guard's refusal in err's chain and returns what it
// says about the address ("127.0.0.1 is a loopback address").
func refusal(err error) (string, bool) {
	if !errors.Is(err, netguard.ErrRefused) {
		return "", false
	}
	for e := err; e != nil; e = errors.Unwrap(e) {
		if errors.Unwrap(e) == netguard.ErrRefused {
			return strings.TrimSuffix(e.Error(), ": "+netguard.ErrRefused.Error()), true
		}
	}
	return "the address is not a public one", true
}
