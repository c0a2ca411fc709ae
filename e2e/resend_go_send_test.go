package e2e

import (
	"bytes"
	"context"
	"fmt"
	"net/mail"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/resend/resend-go/v3"

	"github.com/mailroom/mailroom/apitest"
	"github.com/mailroom/mailroom/poll"
)

// resendGoSend: Emails.Send with every field of Resend's guide arrives at
// the MX as sent, the native log shows it, and Emails.Get reads it back
// with Resend's last_event.
func resendGoSend(t *testing.T, e *resendEnv) {
	c, _ := e.goSDK(t, e.key)
	const subject = "Your order 1001"
	sent, err := c.Emails.Send(&resend.SendEmailRequest{
		From:    "Shop <orders@shop.example>",
		To:      []string{"ann@example.net"},
		Cc:      []string{"cy@example.net"},
		Bcc:     []string{"bo@example.net"},
		ReplyTo: "help@shop.example",
		Subject: subject,
		Html:    "<p>Thanks for order <b>1001</b>.</p>",
		Text:    "Thanks for order 1001.",
		Headers: map[string]string{"X-Order-Id": "1001"},
		Tags:    []resend.Tag{{Name: "kind", Value: "receipt"}},
	})
	if err != nil || sent.Id == "" {
		t.Fatalf("Emails.Send: %v %+v", err, sent)
	}

	// The native log holds it exactly as sent.
	log := e.waitV1Status(t, sent.Id, "delivered")
	if log["subject"] != subject || log["from"] != "Shop <orders@shop.example>" ||
		fmt.Sprint(log["to"]) != "[ann@example.net]" || fmt.Sprint(log["cc"]) != "[cy@example.net]" ||
		fmt.Sprint(log["bcc"]) != "[bo@example.net]" || fmt.Sprint(log["replyTo"]) != "[help@shop.example]" ||
		fmt.Sprint(log["tags"]) != "map[kind:receipt]" {
		t.Errorf("the native log shows %v", log)
	}

	got := e.receivedWithSubject(subject)
	if len(got) == 0 {
		t.Fatal("delivered, but the MX has no mail with the subject")
	}
	m := got[0]
	for name, want := range map[string]string{"From": "Shop <orders@shop.example>", "To": "ann@example.net",
		"Cc": "cy@example.net", "Reply-To": "help@shop.example", "X-Order-Id": "1001", "Bcc": ""} {
		if h := m.Header.Get(name); !sameHeader(name, h, want) {
			t.Errorf("the received %s is %q, want %q", name, h, want)
		}
	}
	var rcpts []string
	for _, r := range got {
		rcpts = append(rcpts, r.Rcpts...)
	}
	slices.Sort(rcpts)
	if !slices.Equal(rcpts, []string{"ann@example.net", "bo@example.net", "cy@example.net"}) {
		t.Errorf("the MX got the mail for %v, want ann, bo (bcc) and cy, once each", rcpts)
	}
	if txt, html := m.text("text/plain"), m.text("text/html"); txt != "Thanks for order 1001." || html != "<p>Thanks for order <b>1001</b>.</p>" {
		t.Errorf("received text %q and html %q", txt, html)
	}

	// Emails.Get, as the SDK's Email type reads it.
	var got1 *resend.Email
	if !poll.Within(10*time.Second, func() bool {
		got1, err = c.Emails.Get(sent.Id)
		return err == nil && got1.LastEvent == "delivered"
	}) {
		t.Fatalf("Emails.Get of a delivered email: %v %+v, want last_event delivered", err, got1)
	}
	if got1.Object != "email" || got1.Id != sent.Id || got1.Subject != subject || got1.From != "Shop <orders@shop.example>" ||
		!slices.Equal(got1.To, []string{"ann@example.net"}) || !slices.Equal(got1.Cc, []string{"cy@example.net"}) ||
		!slices.Equal(got1.Bcc, []string{"bo@example.net"}) || !slices.Equal(got1.ReplyTo, []string{"help@shop.example"}) ||
		got1.Html != "<p>Thanks for order <b>1001</b>.</p>" || got1.Text != "Thanks for order 1001." {
		t.Errorf("Emails.Get = %+v", got1)
	}
	if got1.CreatedAt == "" {
		t.Error("Emails.Get has no created_at")
	}
}

// resendGoAttachments: the Go SDK sends an attachment's content as a JSON
// array of byte values, or names it by path (an https URL Mailroom
// fetches); each arrives byte for byte, with its filename, its content
// type, and an inline one's Content-ID.
func resendGoAttachments(t *testing.T, e *resendEnv) {
	c, _ := e.goSDK(t, e.key)
	binary := make([]byte, 256*3)
	for i := range binary {
		binary[i] = byte(i)
	}
	pdf := append([]byte("%PDF-1.4\n"), bytes.Repeat([]byte{0, 0xff, 0x80, '\n'}, 300)...)
	pdfURL := e.outside.file("/files/invoice-1002.pdf", pdf)
	logo := []byte("\x89PNG\r\n\x1a\n" + strings.Repeat("\x00logo", 50))
	const subject = "Your invoice 1002"
	sent, err := c.Emails.Send(&resend.SendEmailRequest{
		From:    "orders@shop.example",
		To:      []string{"ann@example.net"},
		Subject: subject,
		Html:    `<p>Invoice attached.</p><img src="cid:logo-1002"><img src="cid:banner-1002">`,
		Attachments: []*resend.Attachment{
			{Filename: "bytes.bin", Content: binary},
			{Filename: "notes.txt", Content: []byte("Plain notes\nline 2\n"), ContentType: "text/plain"},
			{Filename: "invoice.pdf", Path: pdfURL},
			{Filename: "logo.png", Content: logo, ContentType: "image/png", ContentId: "logo-1002"},
			{Filename: "banner.png", Content: logo, ContentType: "image/png", InlineContentId: "banner-1002"},
		},
	})
	if err != nil {
		t.Fatalf("Emails.Send with attachments: %v", err)
	}
	m := e.waitReceived(t, subject, 1)[0]
	for _, a := range []struct {
		name, mediaType string
		data            []byte
	}{
		{"bytes.bin", "", binary},
		{"notes.txt", "text/plain", []byte("Plain notes\nline 2\n")},
		{"invoice.pdf", "application/pdf", pdf},
		{"logo.png", "image/png", logo},
		{"banner.png", "image/png", logo},
	} {
		p, ok := m.part("", a.name)
		switch {
		case !ok:
			t.Errorf("attachment %s did not arrive; the parts are %v", a.name, partNames(m))
		case !bytes.Equal(p.Body, a.data):
			t.Errorf("attachment %s arrived as %d bytes that differ from the %d sent", a.name, len(p.Body), len(a.data))
		case a.mediaType != "" && p.MediaType != a.mediaType:
			t.Errorf("attachment %s arrived as %s, want %s", a.name, p.MediaType, a.mediaType)
		}
	}
	if p, _ := m.part("", "logo.png"); strings.Trim(p.ContentID, "<>") != "logo-1002" {
		t.Errorf("the inline logo's Content-ID is %q, want <logo-1002>", p.ContentID)
	}
	if p, _ := m.part("", "banner.png"); strings.Trim(p.ContentID, "<>") != "banner-1002" {
		t.Errorf("the banner's Content-ID (from inline_content_id) is %q, want <banner-1002>", p.ContentID)
	}
	if n := e.outside.fetched("/files/invoice-1002.pdf"); n < 1 {
		t.Errorf("the path URL was fetched %d times", n)
	}
	e.waitV1Status(t, sent.Id, "delivered")
}

// sameHeader compares a received header field with what was sent: an
// address field by its addresses and display names (RFC 5322 lets a name
// be quoted or not), any other by its text.
func sameHeader(name, got, want string) bool {
	switch name {
	case "From", "To", "Cc", "Bcc", "Reply-To":
		if got == "" || want == "" {
			return got == want
		}
		g, err1 := mail.ParseAddressList(got)
		w, err2 := mail.ParseAddressList(want)
		if err1 != nil || err2 != nil || len(g) != len(w) {
			return false
		}
		for i := range g {
			if g[i].Name != w[i].Name || g[i].Address != w[i].Address {
				return false
			}
		}
		return true
	}
	return got == want
}

func partNames(m receivedMail) []string {
	var out []string
	for _, p := range m.Parts {
		out = append(out, p.MediaType+" "+p.Filename)
	}
	return out
}

// resendGoIdempotency: SendWithOptions with an IdempotencyKey, twice, is
// one email (the same id) delivered once; the key with another body is
// Resend's 409 invalid_idempotent_request; a batch's key gives the same ids
// again.
func resendGoIdempotency(t *testing.T, e *resendEnv) {
	c, log := e.goSDK(t, e.key)
	ctx := context.Background()
	req := &resend.SendEmailRequest{From: "orders@shop.example", To: []string{"ann@example.net"},
		Subject: "Your order 1003", Text: "Once."}
	opts := &resend.SendEmailOptions{IdempotencyKey: "order-1003"}
	first, err := c.Emails.SendWithOptions(ctx, req, opts)
	if err != nil {
		t.Fatalf("first send: %v", err)
	}
	again, err := c.Emails.SendWithOptions(ctx, req, opts)
	if err != nil || again.Id != first.Id {
		t.Fatalf("the same key again: %v %+v, want id %s", err, again, first.Id)
	}
	e.waitV1Status(t, first.Id, "delivered")
	if n := len(e.receivedWithSubject("Your order 1003")); n != 1 {
		t.Errorf("the MX got %d copies, want 1", n)
	}
	other := *req
	other.Text = "Something else."
	_, err = c.Emails.SendWithOptions(ctx, &other, opts)
	wantResendError(t, "the key with another body", err, log, 409, "invalid_idempotent_request")

	batch := []*resend.SendEmailRequest{
		{From: "orders@shop.example", To: []string{"ann@example.net"}, Subject: "Batch 1004 a", Text: "a"},
		{From: "orders@shop.example", To: []string{"bob@example.net"}, Subject: "Batch 1004 b", Text: "b"},
	}
	bopts := &resend.BatchSendEmailOptions{IdempotencyKey: "batch-1004"}
	b1, err := c.Batch.SendWithOptions(ctx, batch, bopts)
	if err != nil || len(b1.Data) != 2 {
		t.Fatalf("batch with a key: %v %+v", err, b1)
	}
	b2, err := c.Batch.SendWithOptions(ctx, batch, bopts)
	if err != nil || len(b2.Data) != 2 || b2.Data[0].Id != b1.Data[0].Id || b2.Data[1].Id != b1.Data[1].Id {
		t.Fatalf("the batch's key again: %v %+v, want the ids %+v", err, b2, b1)
	}
	for _, s := range []string{"Batch 1004 a", "Batch 1004 b"} {
		e.waitReceived(t, s, 1)
	}
	for i, d := range b1.Data {
		e.waitV1Status(t, d.Id, "delivered")
		if n := len(e.receivedWithSubject(batch[i].Subject)); n != 1 {
			t.Errorf("batch item %d arrived %d times, want once", i, n)
		}
	}
}

// resendGoTemplate: Template{Id, Variables} by the template's name, with
// From and Subject left empty as the Go SDK then sends them ("from": "",
// "subject": ""): both come from the template, which is rendered with the
// variables.
func resendGoTemplate(t *testing.T, e *resendEnv) {
	r := e.node.client.Do(apitest.Request{Method: "POST", Path: "/v1/templates", Key: e.key, Body: map[string]any{
		"name": "receipt", "from": "Shop <orders@shop.example>", "subject": "Receipt {{order}}",
		"text": "Thanks, {{name}}, for order {{order}}."}})
	if r.Status != 201 {
		t.Fatalf("create the template: %d %s", r.Status, r.Body)
	}
	c, _ := e.goSDK(t, e.key)
	sent, err := c.Emails.Send(&resend.SendEmailRequest{To: []string{"ann@example.net"},
		Template: &resend.EmailTemplate{Id: "receipt", Variables: map[string]any{"name": "Ann", "order": 9001}}})
	if err != nil {
		t.Fatalf("Emails.Send with a template: %v", err)
	}
	m := e.waitReceived(t, "Receipt 9001", 1)[0]
	if !sameHeader("From", m.Header.Get("From"), "Shop <orders@shop.example>") || m.text("text/plain") != "Thanks, Ann, for order 9001." {
		t.Errorf("the template's email arrived from %q saying %q", m.Header.Get("From"), m.text("text/plain"))
	}
	if v1 := e.waitV1Status(t, sent.Id, "delivered"); v1["template"] == nil {
		t.Errorf("the native log does not name the template: %v", v1)
	}
}
