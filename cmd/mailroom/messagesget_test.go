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
