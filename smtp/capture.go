package smtp

import (
	"context"

	"github.com/mailroom/mailroom"
)

// Capture is the transport of --dev (--delivery capture): it sends nothing,
// and reports every recipient delivered so that the email log reads as it
// would in production. The message itself is already stored, signed, by
// the delivery worker, which is where a developer looks at it. The zero
// value is ready, and it is safe for concurrent use: it has no state.
type Capture struct{}

var _ mailroom.Transport = Capture{}

// CaptureMX is the MX of captured results.
const CaptureMX = "capture"

// captured is the reply every captured recipient gets.
var captured = reply{Code: 250, Enhanced: "2.0.0", Text: "captured by mailroom (not sent)"}.status()

// Deliver reports every recipient of d delivered without sending anything.
func (Capture) Deliver(_ context.Context, d *mailroom.Delivery) []mailroom.RecipientResult {
	return results(d.Recipients, CaptureMX, captured)
}

// Close does nothing.
func (Capture) Close() error { return nil }
