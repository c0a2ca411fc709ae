package e2e

import (
	"context"
	"strings"
	"testing"

	"github.com/resend/resend-go/v3"

	"github.com/mailroom/mailroom/apitest"
)

// resendGoBatch: Batch.Send (no header: strict) and SendWithOptions in
// each of Resend's x-batch-validation modes. Strict is all or nothing: an
// invalid item refuses the whole batch with 422, and none of it is sent.
// Permissive sends the valid items and names the others by index.
func resendGoBatch(t *testing.T, e *resendEnv) {
	c, log := e.goSDK(t, e.key)
	ctx := context.Background()
	item := func(to, subject string) *resend.SendEmailRequest {
		return &resend.SendEmailRequest{From: "orders@shop.example", To: []string{to}, Subject: subject, Text: "Batch."}
	}

	plain, err := c.Batch.Send([]*resend.SendEmailRequest{item("ann@example.net", "Batch 2001 a"), item("bob@example.net", "Batch 2001 b")})
	if err != nil || len(plain.Data) != 2 || plain.Data[0].Id == "" || plain.Data[0].Id == plain.Data[1].Id || len(plain.Errors) != 0 {
		t.Fatalf("Batch.Send: %v %+v", err, plain)
	}
	e.waitReceived(t, "Batch 2001 a", 1)
	e.waitReceived(t, "Batch 2001 b", 1)

	strict := &resend.BatchSendEmailOptions{BatchValidation: resend.BatchValidationStrict}
	ok, err := c.Batch.SendWithOptions(ctx, []*resend.SendEmailRequest{item("ann@example.net", "Batch 2002")}, strict)
	if err != nil || len(ok.Data) != 1 {
		t.Fatalf("strict, all valid: %v %+v", err, ok)
	}
	_, err = c.Batch.SendWithOptions(ctx, []*resend.SendEmailRequest{
		item("strict-a@example.net", "Batch 2003 a"), item("not an address", "Batch 2003 b"), item("strict-c@example.net", "Batch 2003 c"),
	}, strict)
	wantResendError(t, "strict with an invalid item", err, log, 422, "validation_error")
	if err != nil && !strings.Contains(err.Error(), "1") {
		t.Errorf("strict: the message %q does not name the item (index 1)", err)
	}

	permissive := &resend.BatchSendEmailOptions{BatchValidation: resend.BatchValidationPermissive}
	mixed, err := c.Batch.SendWithOptions(ctx, []*resend.SendEmailRequest{
		item("ann@example.net", "Batch 2004 a"), item("not an address", "Batch 2004 b"), item("cy@example.net", "Batch 2004 c"),
	}, permissive)
	if err != nil {
		t.Fatalf("permissive: %v", err)
	}
	if len(mixed.Data) != 2 || mixed.Data[0].Id == "" || mixed.Data[1].Id == "" ||
		len(mixed.Errors) != 1 || mixed.Errors[0].Index != 1 || mixed.Errors[0].Message == "" {
		t.Errorf("permissive with item 1 invalid: %+v, want two ids and the error of index 1", mixed)
	}
	e.waitReceived(t, "Batch 2004 a", 1)
	e.waitReceived(t, "Batch 2004 c", 1)
	e.waitReceived(t, "Batch 2002", 1)
	// The strict batch's valid items were not accepted: the log has nothing
	// for their recipients.
	for _, to := range []string{"strict-a@example.net", "strict-c@example.net"} {
		r := e.node.client.Do(apitest.Request{Method: "GET", Path: "/v1/messages?to=" + to, Key: e.key})
		if data, _ := r.Map()["data"].([]any); r.Status != 200 || len(data) != 0 {
			t.Errorf("a valid item of the refused strict batch is in the log: %d %s", r.Status, r.Body)
		}
	}
}
