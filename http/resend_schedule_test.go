package http_test

import (
	"testing"
	"time"

	"github.com/mailroom/mailroom"
	"github.com/mailroom/mailroom/storetest"
)

// scheduled_at in each form is the time it says, by the server's clock;
// the service's own rules then apply (30 days at most).
func TestResendScheduledAt(t *testing.T) {
	storetest.Each(t, func(t *testing.T, eng storetest.Engine) {
		e := newResendEnv(t, eng)
		e.verifiedDomain(t, "shop.example")
		now := e.clock.Now()
		at := now.Add(48 * time.Hour).Truncate(time.Second)
		for in, want := range map[string]time.Time{
			"in 1 min":              now.Add(time.Minute),
			"in 5 minutes":          now.Add(5 * time.Minute),
			"in 2 hours":            now.Add(2 * time.Hour),
			"in 1 day":              now.Add(24 * time.Hour),
			at.Format(time.RFC3339): at,
			at.In(time.FixedZone("", 3600)).Format("2006-01-02T15:04:05-0700"): at,
		} {
			b := resendEmail("a@example.net")
			b["scheduled_at"] = in
			m := e.stored(t, resendID(t, e.resendPost(t, "/emails", b, nil)))
			if m.Status != mailroom.MessageScheduled || m.ScheduledAt == nil || m.ScheduledAt.Sub(want).Abs() > 2*time.Second {
				t.Errorf("scheduled_at %q: %v %v, want %v", in, m.Status, m.ScheduledAt, want)
			}
		}
		b := resendEmail("a@example.net")
		b["scheduled_at"] = "in 31 days"
		wantResendError(t, e.resendPost(t, "/emails", b, nil), 422, "validation_error", "scheduled_at", "30 days")
	})
}

// A template by name or id: from and subject, left empty as the Go SDK
// leaves them, come from the template.
func TestResendTemplate(t *testing.T) {
	storetest.Each(t, func(t *testing.T, eng storetest.Engine) {
		e := newResendEnv(t, eng)
		e.verifiedDomain(t, "shop.example")
		tpl := e.createTemplate(t, e.admin, receiptTemplate)
		for _, ref := range []any{"receipt", tpl["id"]} {
			id := resendID(t, e.resendPost(t, "/emails", map[string]any{"from": "", "subject": "", "to": []string{"ann@example.net"},
				"template": map[string]any{"id": ref, "variables": receiptVariables("Ann")}}, nil))
			m := e.stored(t, id)
			if m.From.Address != "orders@shop.example" || m.Subject != "Receipt for Ann – order 12345678901234567890" || m.Template == nil {
				t.Errorf("template %v: %+v", ref, m)
			}
		}
	})
}
