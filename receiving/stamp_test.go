package receiving

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/emersion/go-msgauth/authres"

	"github.com/mailroom/mailroom"
)

const authservID = "mx.mailroom.test"

// A message claiming this service's verdicts arrives with them forged:
// the forgeries (however they are spelt) are removed, another service's
// field is kept below, untouched, and the verdicts stated are the
// service's own, from its checks.
func TestStampReplacesForgedOwnAuthResults(t *testing.T) {
	_, r := testDNS(t)
	original := testMessage("ceo@sender.example")
	forged := "Authentication-Results: mx.mailroom.test; spf=pass smtp.mailfrom=sender.example;\r\n\tdkim=pass header.d=sender.example; dmarc=pass header.from=sender.example\r\n" +
		"Authentication-Results: (relayed) MX.Mailroom.Test 1; dmarc=pass\r\n" +
		"Authentication-Results: mx.mailroom.test; this does not parse ((\r\n" +
		"Authentication-Results: \"mx.mailroom.test\"; dmarc=pass\r\n" +
		"Authentication-Results: mx.mailroom.test.; dmarc=pass\r\n"
	other := "Authentication-Results: relay.other.example; spf=pass smtp.mailfrom=sender.example\r\n"
	data := append([]byte(forged+other), original...)

	in := inbound(attackerIP, "x@attacker.example", data)
	rc := &Receiver{Hostname: authservID}
	v := Authenticate(context.Background(), r, in, data)
	raw := rc.stamp(in, v)

	if n := bytes.Count(raw, []byte("mx.mailroom.test")) + bytes.Count(raw, []byte("MX.Mailroom.Test")); n != 2 {
		t.Errorf("the service's authserv-id appears %d times in the stored message, want once (its own field):\n%s", n, raw)
	}
	if !bytes.HasSuffix(raw, append([]byte(other), original...)) {
		t.Errorf("the stored message does not end with the other service's field and the message as received:\n%s", raw)
	}
	if !bytes.HasPrefix(raw, []byte("Authentication-Results: ")) {
		t.Fatalf("the stored message does not begin with the service's Authentication-Results:\n%s", raw)
	}
	fields, _, _ := splitHeader(raw, 10)
	id, results, err := authres.Parse(fields[0].value())
	if err != nil || id != authservID {
		t.Fatalf("own field %q: id %q, %v", fields[0].value(), id, err)
	}
	got := map[string]string{}
	for _, res := range results {
		switch res := res.(type) {
		case *authres.SPFResult:
			got["spf"] = string(res.Value) + " " + res.From
		case *authres.DKIMResult:
			got["dkim"] = string(res.Value)
		case *authres.DMARCResult:
			got["dmarc"] = string(res.Value) + " " + res.From
		}
	}
	want := map[string]string{"spf": "pass x@attacker.example", "dkim": "none", "dmarc": "fail sender.example"}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("own Authentication-Results %s = %q, want %q", k, got[k], w)
		}
	}
	if !strings.EqualFold(fields[1].Name, "Received") || !strings.Contains(fields[1].value(), "by "+authservID) ||
		!strings.Contains(fields[1].value(), "["+attackerIP+"]") || !strings.Contains(fields[1].value(), "for <support@inbox.example>") {
		t.Errorf("second field %q, want the service's Received", fields[1].Raw)
	}
}

// The Received field names the protocol as RFC 3848 does: ESMTPS when
// the transaction ran under STARTTLS, ESMTP when not.
func TestReceivedFieldNamesTLS(t *testing.T) {
	for _, tls := range []bool{false, true} {
		in := mailroom.InboundMessage{RemoteIP: "192.0.2.1:25", Helo: "mx.sender.example", Recipients: []string{"a@b.example"},
			ReceivedAt: time.Unix(0, 0), TLS: tls}
		want := map[bool]string{false: "with ESMTP\r\n", true: "with ESMTPS\r\n"}[tls]
		if f := receivedField(authservID, in); !strings.Contains(f, want) {
			t.Errorf("TLS %v: Received field %q, want %q", tls, f, want)
		}
	}
}

// A client's EHLO name cannot add a header field through the Received
// field.
func TestReceivedFieldSanitizesHelo(t *testing.T) {
	in := mailroom.InboundMessage{RemoteIP: "192.0.2.1:25", Helo: "evil\r\nBcc: x@y", Recipients: []string{"a@b.example", "c@b.example"}, ReceivedAt: time.Unix(0, 0)}
	f := receivedField(authservID, in)
	fields, rest, _ := splitHeader([]byte(f), 10)
	if len(fields) != 1 || len(rest) != 0 {
		t.Fatalf("Received field %q reads as %d fields", f, len(fields))
	}
	if strings.Contains(f, "for <") {
		t.Errorf("Received field %q names a recipient of two", f)
	}
}
