package smtp

import (
	"testing"

	"github.com/mailroom/mailroom"
)

func TestCaptureDeliversEveryRecipient(t *testing.T) {
	var tr mailroom.Transport = Capture{}
	res := deliver(t, tr, delivery("example.test", "a@example.test", "b@example.test"))
	for _, r := range res {
		want(t, r, mailroom.Delivered, 250, "2.0.0", "250 2.0.0 captured by mailroom (not sent)")
		if r.MX != "capture" {
			t.Errorf("MX %q, want capture", r.MX)
		}
		// Nothing was sent, so nothing went in clear.
		if r.Unencrypted {
			t.Errorf("%s: captured result reported unencrypted", r.Recipient)
		}
	}
}
