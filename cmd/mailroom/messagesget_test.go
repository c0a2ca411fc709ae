package main

import (
	"regexp"
	"testing"
)

// messages get shows why each recipient waits and until when: its next
// attempt, the site its last attempt went to and its last deferral's
// reason, beside its last reply; a delivered recipient keeps the reason of
// its last deferral, and the timeline names each deferral's reason. A
// message sent with requireTls says so.
func TestMessagesGetShowsSiteAndDeferral(t *testing.T) {
	base := fakeAPI(t, 200, `{"id":"msg_1","status":"deferred","from":"orders@shop.example","to":["ann@example.net","bob@example.org","cy@example.com"],
		"cc":[],"bcc":[],"replyTo":[],"subject":"Hi","category":"transactional","tags":{},"template":null,"idempotencyKey":null,
		"createdAt":"2026-11-22T10:00:00Z","scheduledAt":null,"requireTls":true,"recipients":[
		{"address":"ann@example.net","status":"deferred","attempts":1,"lastAttemptAt":"2026-11-22T10:00:01Z","nextAttemptAt":"2026-11-22T10:05:01Z",
		 "smtpCode":451,"smtpResponse":"451 4.7.1 Greylisted","mx":"mx1.example.net","unencrypted":false,"site":"google","lastDeferralReason":"greylisted",
		 "tls":{"version":"TLS1.3","cipher":"TLS_AES_128_GCM_SHA256","verified":true,"policy":"mta-sts"}},
		{"address":"bob@example.org","status":"delivered","attempts":2,"lastAttemptAt":"2026-11-22T10:01:00Z","nextAttemptAt":null,
		 "smtpCode":250,"smtpResponse":"250 ok","mx":"mx.example.org","unencrypted":true,"site":"mx.example.org","lastDeferralReason":"throttled","tls":null},
		{"address":"cy@example.com","status":"queued","attempts":0,"lastAttemptAt":null,"nextAttemptAt":null,
		 "smtpCode":null,"smtpResponse":null,"mx":null,"unencrypted":false,"site":null,"lastDeferralReason":null}],
		"events":[{"id":"evt_1","type":"email.deferred","createdAt":"2026-11-22T10:00:01Z","recipient":"ann@example.net",
		 "detail":{"messageId":"msg_1","recipient":"ann@example.net","from":"orders@shop.example","subject":"Hi","tags":{},
		 "smtpCode":451,"smtpResponse":"451 4.7.1 Greylisted","site":"google","reason":"greylisted","attempt":1}}]}`)
	code, out, errOut := runCLI("messages", "get", "msg_1", "--url", base, "--key", "k", "--retries", "0")
	if code != 0 {
		t.Fatalf("exit %d, stderr %s", code, errOut)
	}
	for _, want := range []string{
		`(?m)^Require TLS\s+yes \(REQUIRETLS`,
		`(?m)^  ADDRESS\s+STATUS\s+ATTEMPTS\s+LAST ATTEMPT\s+NEXT ATTEMPT\s+SITE\s+LAST DEFERRAL\s+TLS\s+LAST REPLY$`,
		`(?m)^  ann@example\.net\s+deferred\s+1\s+2026-11-22T10:00:01Z\s+2026-11-22T10:05:01Z\s+google\s+greylisted\s+TLS1\.3 verified mta-sts\s+451 4\.7\.1 Greylisted \(mx1\.example\.net\)$`,
		`(?m)^  bob@example\.org\s+delivered\s+2\s+2026-11-22T10:01:00Z\s+-\s+mx\.example\.org\s+throttled\s+none\s+250 ok \(mx\.example\.org\) unencrypted$`,
		`(?m)^  cy@example\.com\s+queued\s+0\s+-\s+-\s+-\s+-\s+-\s*$`,
		`(?m)^  2026-11-22T10:00:01Z\s+email\.deferred\s+ann@example\.net\s+451 4\.7\.1 Greylisted \(greylisted\)$`,
	} {
		if !regexp.MustCompile(want).MatchString(out) {
			t.Errorf("messages get lacks %s:\n%s", want, out)
		}
	}
}

// messages get shows a tracked message's engagement: what it is tracked
// for, each recipient's opens and clicks, the links with their clicks, and
// on the timeline each click's link, whether it looked automated, and the
// client; messages list takes --event.
func TestMessagesGetShowsEngagement(t *testing.T) {
	base := fakeAPI(t, 200, `{"id":"msg_1","status":"delivered","from":"orders@shop.example","to":["ann@example.net"],
		"cc":[],"bcc":[],"replyTo":[],"subject":"Hi","category":"transactional","tags":{},"template":null,"idempotencyKey":null,
		"createdAt":"2026-11-22T10:00:00Z","scheduledAt":null,"requireTls":false,"tracking":{"opens":true,"clicks":true},
		"links":[{"url":"https://shop.example/orders/42?ref=mail#top","clicks":2},{"url":"https://shop.example/help","clicks":0}],
		"recipients":[{"address":"ann@example.net","status":"delivered","attempts":1,"lastAttemptAt":"2026-11-22T10:00:01Z","nextAttemptAt":null,
		 "smtpCode":250,"smtpResponse":"250 ok","mx":"mx.example.net","unencrypted":false,"site":"mx.example.net","lastDeferralReason":null,
		 "tls":null,"opens":3,"clicks":2}],
		"events":[{"id":"evt_1","type":"email.clicked","createdAt":"2026-11-22T10:00:05Z","recipient":"ann@example.net",
		 "detail":{"messageId":"msg_1","recipient":"ann@example.net","from":"orders@shop.example","subject":"Hi","tags":{},"attempt":1,
		 "url":"https://shop.example/orders/42?ref=mail#top","userAgent":"Mozilla/5.0 (compatible; BingPreview)","ip":"203.0.113.0","machine":true}}]}`)
	code, out, errOut := runCLI("messages", "get", "msg_1", "--url", base, "--key", "k", "--retries", "0")
	if code != 0 {
		t.Fatalf("exit %d, stderr %s", code, errOut)
	}
	for _, want := range []string{
		`(?m)^Tracking\s+opens, clicks$`,
		`(?m)^  ADDRESS\s+STATUS\s+ATTEMPTS\s+LAST ATTEMPT\s+NEXT ATTEMPT\s+SITE\s+LAST DEFERRAL\s+TLS\s+OPENS\s+CLICKS\s+LAST REPLY$`,
		`(?m)^  ann@example\.net\s+delivered\s+1\s+\S+\s+-\s+mx\.example\.net\s+-\s+-\s+3\s+2\s+250 ok \(mx\.example\.net\)$`,
		`(?m)^Links:\n  CLICKS\s+URL\n  2\s+https://shop\.example/orders/42\?ref=mail#top\n  0\s+https://shop\.example/help$`,
		`(?m)^  2026-11-22T10:00:05Z\s+email\.clicked\s+ann@example\.net\s+https://shop\.example/orders/42\?ref=mail#top machine \(203\.0\.113\.0 Mozilla/5\.0 \(compatible; BingPreview\)\)$`,
	} {
		if !regexp.MustCompile(want).MatchString(out) {
			t.Errorf("messages get lacks %s:\n%s", want, out)
		}
	}

	if code, _, errOut := runCLI("messages", "list", "--event", "bounced", "--url", base, "--key", "k"); code != 2 || !regexp.MustCompile(`--event is opened or clicked`).MatchString(errOut) {
		t.Errorf("--event bounced: exit %d, stderr %s", code, errOut)
	}
}
