// Package submission is SMTP submission (docs/api.md "SMTP submission",
// RFC 6409, RFC 8314): a go-smtp server on the submission ports, in front of
// the same accept path as POST /v1/send, for applications that can only
// speak SMTP. Clients log in with AUTH PLAIN or LOGIN over TLS, the
// password being an API key with scope send. Service (service.go) is what
// a message may do: the API's key checks and rate limits, the message
// taken as written (submittedmessage.go), signed and accepted through the
// send path; the server (server*.go) is the skeleton of package
// smtpserver with AUTH in front.
package submission

import (
	"context"
	"io"

	"github.com/mailroom/mailroom"
)

// Handler is what the server asks: Service, or a test's stand-in.
type Handler interface {
	// Authenticate checks an AUTH password, an API key with scope send,
	// with the checks of the HTTP API; an error is an *mailroom.Error
	// (invalid_api_key, api_key_revoked, insufficient_scope,
	// service_unavailable).
	Authenticate(ctx context.Context, password string) (*mailroom.APIKey, error)
	// Allow says whether the key's account may make one more request now
	// (its rate limit); false is answered 451 4.7.0.
	Allow(key *mailroom.APIKey) bool
	// Submit accepts one message: its envelope (MAIL FROM with
	// REQUIRETLS, the RCPT TO addresses) and the message as the client
	// wrote it (bounded by the server). It returns the message id once the message is durable, or
	// an *mailroom.Error saying why not.
	Submit(ctx context.Context, key *mailroom.APIKey, env Envelope, raw io.Reader) (string, error)
}
