package inbound

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/mailroom/mailroom"
)

func fixture(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "reports", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// crlf is b with CRLF line ends, as SMTP carries it (the fixtures are
// written with LF, as mail stores keep them).
func crlf(b []byte) []byte {
	return bytes.ReplaceAll(b, []byte("\n"), []byte("\r\n"))
}

func TestParseReportFixtures(t *testing.T) {
	tests := []struct {
		file string
		want mailroom.Report // Text is checked by text
		text []string        // substrings of Text
	}{
		{
			file: "postfix-user-unknown.eml",
			want: mailroom.Report{
				Kind: mailroom.ReportDSN,
				Recipients: []mailroom.ReportRecipient{{
					FinalRecipient: "ann@example.net", OriginalRecipient: "ann@example.net",
					Action: "failed", Status: "5.1.1",
					DiagnosticCode: "550 5.1.1 <ann@example.net>: Recipient address rejected: User unknown in virtual mailbox table",
					RemoteMTA:      "mailstore.example.net",
				}},
				OriginalMessageID: "01jc9x8q2k7m3n4p5r6s7t8v9w@example.com",
			},
			text: []string{"This is the mail system at host mx.example.net.", "User unknown in virtual\n    mailbox table"},
		},
		{
			file: "exchange-recipient-not-found.eml",
			want: mailroom.Report{
				Kind: mailroom.ReportDSN,
				Recipients: []mailroom.ReportRecipient{{
					FinalRecipient: "ann@contoso.com", OriginalRecipient: "ann@contoso.com",
					Action: "failed", Status: "5.1.10",
					DiagnosticCode: "550 5.1.10 RESOLVER.ADR.RecipientNotFound; Recipient not found by SMTP address lookup",
				}},
				OriginalMessageID: "01jc9y3d5f7h9k1m3p5r7t9v1x@example.com",
			},
			// Quoted-printable soft breaks joined; =A0 in a us-ascii part
			// read as the no-break space Exchange meant.
			text: []string{"Your message to ann@contoso.com couldn't be delivered.", "Try one or more of the following:",
				"Recipient not found by SMTP address lookup", "receipts\u00a0\u00a0"},
		},
		{
			file: "gmail-no-such-user.eml",
			want: mailroom.Report{
				Kind: mailroom.ReportDSN,
				Recipients: []mailroom.ReportRecipient{{
					FinalRecipient: "ann.nonexistent@gmail.com",
					Action:         "failed", Status: "5.1.1",
					DiagnosticCode: "550-5.1.1 The email account that you tried to reach does not exist. Please try " +
						"550-5.1.1 double-checking the recipient's email address for typos or " +
						"550-5.1.1 unnecessary spaces. For more information, go to " +
						"550 5.1.1  https://support.google.com/mail/?p=NoSuchUser a640c23a62f3a-a9e6b1a2c3dsi123456ejc.257 - gsmtp",
					RemoteMTA: "gmail-smtp-in.l.google.com. (142.250.102.27, the server for the domain gmail.com.)",
				}},
				OriginalMessageID: "01jc9z4e6g8j0l2n4q6s8u0w2y@example.com",
			},
			text: []string{"** Address not found **", "The email account that you tried to reach does not exist."},
		},
		{
			file: "exchange-delayed.eml",
			want: mailroom.Report{
				Kind: mailroom.ReportDSN,
				Recipients: []mailroom.ReportRecipient{{
					FinalRecipient: "bob@fabrikam.com",
					Action:         "delayed", Status: "4.4.7",
					DiagnosticCode: "400 4.4.7 Message delayed",
				}},
				OriginalMessageID: "01jca05f7h9k1m3p5r7t9v1x3z@example.com",
			},
			text: []string{"Delivery is delayed to these recipients or groups:"},
		},
		{
			file: "yahoo-arf-abuse.eml",
			want: mailroom.Report{
				Kind:              mailroom.ReportComplaint,
				FeedbackType:      "abuse",
				OriginalMessageID: "01jcb1a2b3c4d5e6f7g8h9j0k1@example.com",
				OriginalRecipient: "carol@yahoo.com",
			},
			text: []string{"This is an email abuse report for an email message received from IP 198.51.100.7"},
		},
		{
			file: "arf-headers-only.eml",
			want: mailroom.Report{
				Kind:              mailroom.ReportComplaint,
				FeedbackType:      "abuse",
				OriginalMessageID: "01jcb2c3d4e5f6g7h8j9k0m1n2@example.com",
				// No Original-Rcpt-To: the reported message's one To.
				OriginalRecipient: "dave@example.org",
			},
			text: []string{"marked “spam” by its recipient."},
		},
		{
			file: "vacation-auto-replied.eml",
			want: mailroom.Report{Kind: mailroom.ReportAutoReply},
			text: []string{"I am away until 16 November"},
		},
		{
			file: "outlook-automatic-reply.eml",
			want: mailroom.Report{Kind: mailroom.ReportAutoReply},
			text: []string{"out of the office until Monday and will reply on my return. Grüße, Frank"},
		},
		{
			file: "qmail-failure-notice.eml",
			want: mailroom.Report{
				Kind: mailroom.ReportDSN,
				// Not ivan@, whose line is in the returned copy.
				Recipients: []mailroom.ReportRecipient{
					{
						FinalRecipient: "gina@example.org", Action: "failed", Status: "5.1.1",
						DiagnosticCode: "550 5.1.1 <gina@example.org>: Recipient address rejected: User unknown in local recipient table",
					},
					{
						FinalRecipient: "hank@example.org", Action: "failed", Status: "5.1.1",
						DiagnosticCode: "Sorry, no mailbox here by that name. (#5.1.1)",
					},
				},
			},
			text: []string{"This is the qmail-send program"},
		},
		{
			// Auto-Submitted: auto-replied, as Exim marks its bounces.
			file: "exim-mail-delivery-failed.eml",
			want: mailroom.Report{
				Kind: mailroom.ReportDSN,
				Recipients: []mailroom.ReportRecipient{{
					FinalRecipient: "judy@example.org", Action: "failed", Status: "5.1.1",
					DiagnosticCode: "550-5.1.1 <judy@example.org>: Recipient address rejected:",
				}},
			},
			text: []string{"This message was created automatically by mail delivery software."},
		},
		{
			// Cut inside the second recipient's Status: the partial line
			// is dropped, the rest of the block kept; the returned
			// headers never came.
			file: "malformed-truncated.eml",
			want: mailroom.Report{
				Kind: mailroom.ReportDSN,
				Recipients: []mailroom.ReportRecipient{
					{
						FinalRecipient: "ann@example.net", OriginalRecipient: "ann@example.net",
						Action: "failed", Status: "5.1.1",
						DiagnosticCode: "550 5.1.1 <ann@example.net>: Recipient address rejected: User unknown in virtual mailbox table",
						RemoteMTA:      "mailstore.example.net",
					},
					{FinalRecipient: "bob@example.net", OriginalRecipient: "bob@example.net", Action: "failed"},
				},
			},
			text: []string{"This is the mail system at host mx.example.net."},
		},
		{
			file: "malformed-no-closing-boundary.eml",
			want: mailroom.Report{
				Kind: mailroom.ReportDSN,
				Recipients: []mailroom.ReportRecipient{{
					FinalRecipient: "ann@example.net", OriginalRecipient: "ann@example.net",
					Action: "failed", Status: "5.1.1",
					DiagnosticCode: "550 5.1.1 <ann@example.net>: Recipient address rejected: User unknown in virtual mailbox table",
					RemoteMTA:      "mailstore.example.net",
				}},
				OriginalMessageID: "01jc9x8q2k7m3n4p5r6s7t8v9w@example.com",
			},
			text: []string{"This is the mail system at host mx.example.net."},
		},
		{
			// A report, so not an automatic reply despite its
			// Auto-Submitted; without a boundary its parts cannot be
			// found.
			file: "malformed-no-boundary.eml",
			want: mailroom.Report{Kind: mailroom.ReportUnknown},
		},
	}
	for _, tt := range tests {
		for _, lineEnd := range []string{"LF", "CRLF"} {
			t.Run(tt.file+"/"+lineEnd, func(t *testing.T) {
				b := fixture(t, tt.file)
				if lineEnd == "CRLF" {
					b = crlf(b)
				}
				got, err := ParseReport(bytes.NewReader(b))
				if err != nil {
					t.Fatalf("ParseReport: %v", err)
				}
				checkInvariants(t, got)
				text := got.Text
				got.Text = ""
				if !reflect.DeepEqual(*got, tt.want) {
					t.Errorf("got  %+v\nwant %+v", *got, tt.want)
				}
				for _, s := range tt.text {
					if !strings.Contains(text, s) {
						t.Errorf("Text lacks %q:\n%s", s, text)
					}
				}
				if len(tt.text) == 0 && text != "" {
					t.Errorf("Text = %q, want none", text)
				}
			})
		}
	}
}

// checkInvariants checks what holds of every report, whatever came in.
func checkInvariants(t testing.TB, r *mailroom.Report) {
	t.Helper()
	switch r.Kind {
	case mailroom.ReportDSN, mailroom.ReportComplaint, mailroom.ReportAutoReply, mailroom.ReportUnknown:
	default:
		t.Errorf("Kind = %q", r.Kind)
	}
	if len(r.Text) > mailroom.MaxReportText {
		t.Errorf("Text has %d bytes, more than %d", len(r.Text), mailroom.MaxReportText)
	}
	if r.Kind == mailroom.ReportDSN && len(r.Recipients) == 0 {
		t.Error("a DSN without recipients")
	}
	if len(r.Recipients) > maxRecipients {
		t.Errorf("%d recipients", len(r.Recipients))
	}
	strs := []string{r.Text, r.FeedbackType, r.OriginalMessageID, r.OriginalRecipient}
	for _, rr := range r.Recipients {
		strs = append(strs, rr.FinalRecipient, rr.OriginalRecipient, rr.Action, rr.Status, rr.DiagnosticCode, rr.RemoteMTA)
		if len(rr.DiagnosticCode) > maxFieldValue {
			t.Errorf("DiagnosticCode has %d bytes", len(rr.DiagnosticCode))
		}
	}
	for _, s := range strs {
		if !utf8.ValidString(s) || strings.ContainsRune(s, 0) {
			t.Errorf("%q is not clean UTF-8", s)
		}
	}
}

func TestParseReportNotAMessage(t *testing.T) {
	for name, in := range map[string][]byte{
		"empty":          nil,
		"binary garbage": fixture(t, "malformed-garbage.bin"),
		"blank line":     []byte("\r\nno header at all\r\n"),
		"indented start": []byte(" Subject: x\r\n\r\nbody"),
	} {
		t.Run(name, func(t *testing.T) {
			r, err := ParseReport(bytes.NewReader(in))
			if err == nil {
				t.Fatalf("ParseReport = %+v, want an error", r)
			}
			if r != nil {
				t.Errorf("report %+v with the error", r)
			}
		})
	}
}

// TestParseReportKinds covers variations built from the fixtures and
// small messages.
func TestParseReportKinds(t *testing.T) {
	arf := string(fixture(t, "arf-headers-only.eml"))
	postfix := string(fixture(t, "postfix-user-unknown.eml"))
	exim := string(fixture(t, "exim-mail-delivery-failed.eml"))
	tests := []struct {
		name string
		msg  string
		kind mailroom.ReportKind
		// check, when set, checks more.
		check func(t *testing.T, r *mailroom.Report)
	}{
		{
			name: "ARF not-spam is read but no complaint",
			msg:  strings.Replace(arf, "Feedback-Type: abuse", "Feedback-Type: Not-Spam", 1),
			kind: mailroom.ReportUnknown,
			check: func(t *testing.T, r *mailroom.Report) {
				if r.FeedbackType != "not-spam" || r.OriginalRecipient != "dave@example.org" ||
					r.OriginalMessageID != "01jcb2c3d4e5f6g7h8j9k0m1n2@example.com" {
					t.Errorf("%+v", r)
				}
			},
		},
		{
			name: "ARF fraud is a complaint",
			msg:  strings.Replace(arf, "Feedback-Type: abuse", "Feedback-Type: fraud", 1),
			kind: mailroom.ReportComplaint,
		},
		{
			name: "ARF whose reported message has two recipients names none",
			msg:  strings.Replace(arf, `To: "Dave Example" <dave@example.org>`, "To: dave@example.org, erin@example.org", 1),
			kind: mailroom.ReportComplaint,
			check: func(t *testing.T, r *mailroom.Report) {
				if r.OriginalRecipient != "" {
					t.Errorf("OriginalRecipient = %q", r.OriginalRecipient)
				}
			},
		},
		{
			name: "ARF without report-type, read by its part",
			msg:  strings.Replace(arf, `report-type="feedback-report";`, "", 1),
			kind: mailroom.ReportComplaint,
		},
		{
			name: "DSN without report-type, read by its part",
			msg:  strings.Replace(postfix, "report-type=delivery-status;", "", 1),
			kind: mailroom.ReportDSN,
		},
		{
			name: "disposition notification (read receipt) is unknown, not an auto-reply",
			msg: "From: a@example.org\r\nAuto-Submitted: auto-replied\r\nContent-Type: multipart/report; report-type=disposition-notification; boundary=b\r\n\r\n" +
				"--b\r\nContent-Type: text/plain\r\n\r\nYour message was displayed.\r\n--b\r\nContent-Type: message/disposition-notification\r\n\r\nFinal-Recipient: rfc822; a@example.org\r\nDisposition: manual-action/MDN-sent-manually; displayed\r\n--b--\r\n",
			kind: mailroom.ReportUnknown,
		},
		{
			name: "delivery-status report with no recipient block is unknown",
			msg: "From: MAILER-DAEMON@example.org\r\nContent-Type: multipart/report; report-type=delivery-status; boundary=b\r\n\r\n" +
				"--b\r\nContent-Type: message/delivery-status\r\n\r\nReporting-MTA: dns; mx.example.org\r\n--b--\r\n",
			kind: mailroom.ReportUnknown,
		},
		{
			name: "global DSN (RFC 6533), base64, utf-8 address with an escape",
			msg: "From: MAILER-DAEMON@example.org\r\nContent-Type: multipart/report; report-type=global-delivery-status; boundary=b\r\n\r\n" +
				"--b\r\nContent-Type: text/plain; charset=utf-8\r\n\r\nZustellung fehlgeschlagen.\r\n" +
				"--b\r\nContent-Type: message/global-delivery-status\r\nContent-Transfer-Encoding: base64\r\n\r\n" +
				"UmVwb3J0aW5nLU1UQTogZG5zOyBteC5leGFtcGxlLm9yZw0KDQpGaW5hbC1SZWNpcGllbnQ6IHV0\r\n" +
				"Zi04OyBqw7xyZ2VuQGV4YW1wbGUub3JnDQpPcmlnaW5hbC1SZWNpcGllbnQ6IHV0Zi04OyBqXHh7\r\n" +
				"RkN9cmdlbkBleGFtcGxlLm9yZw0KQWN0aW9uOiBGYWlsZWQgKHJlamVjdGVkKQ0KU3RhdHVzOiA1\r\n" +
				"LjEuMSAodXNlciB1bmtub3duKQ0K\r\n" +
				"--b\r\nContent-Type: message/global-headers\r\n\r\nMessage-ID: <x1@example.com> (comment)\r\nSubject: hi\r\n\r\n--b--\r\n",
			kind: mailroom.ReportDSN,
			check: func(t *testing.T, r *mailroom.Report) {
				want := []mailroom.ReportRecipient{{FinalRecipient: "jürgen@example.org", OriginalRecipient: "jürgen@example.org", Action: "failed", Status: "5.1.1"}}
				if !reflect.DeepEqual(r.Recipients, want) || r.OriginalMessageID != "x1@example.com" || r.Text != "Zustellung fehlgeschlagen." {
					t.Errorf("%+v", r)
				}
			},
		},
		{
			name: "status from the Diagnostic-Code when the Status field has none",
			msg: "From: MAILER-DAEMON@example.org\r\nContent-Type: multipart/report; report-type=delivery-status; boundary=b\r\n\r\n" +
				"--b\r\nContent-Type: message/delivery-status\r\n\r\nReporting-MTA: dns; mx.example.org\r\n\r\n\r\n" +
				"Final-Recipient: RFC822; <Kim@Example.org>\r\nAction: failed\r\nStatus: failed\r\nDiagnostic-Code: smtp; 554 transaction failed\r\n\r\n" +
				"Final-Recipient: rfc822; lee@example.org\r\nAction: failed\r\nDiagnostic-Code: smtp; 550 5.7.1 blocked\r\n--b--\r\n",
			kind: mailroom.ReportDSN,
			check: func(t *testing.T, r *mailroom.Report) {
				want := []mailroom.ReportRecipient{
					{FinalRecipient: "Kim@Example.org", Action: "failed", Status: "5.0.0", DiagnosticCode: "554 transaction failed"},
					{FinalRecipient: "lee@example.org", Action: "failed", Status: "5.7.1", DiagnosticCode: "550 5.7.1 blocked"},
				}
				if !reflect.DeepEqual(r.Recipients, want) {
					t.Errorf("%+v", r.Recipients)
				}
			},
		},
		{
			name: "Auto-Submitted: no is no auto-reply",
			msg:  "From: a@example.org\r\nAuto-Submitted: no\r\nSubject: hello\r\n\r\nhi\r\n",
			kind: mailroom.ReportUnknown,
		},
		{
			name: "Auto-Submitted: auto-generated",
			msg:  "From: a@example.org\r\nAuto-Submitted: auto-generated\r\nSubject: ticket 42 opened\r\n\r\nhi\r\n",
			kind: mailroom.ReportAutoReply,
		},
		{
			name: "X-Autoreply",
			msg:  "From: a@example.org\r\nX-Autoreply: yes\r\nSubject: Re: hello\r\n\r\nhi\r\n",
			kind: mailroom.ReportAutoReply,
		},
		{
			name: "X-Autorespond",
			msg:  "From: a@example.org\r\nX-Autorespond: Re: hello\r\nSubject: Re: hello\r\n\r\nhi\r\n",
			kind: mailroom.ReportAutoReply,
		},
		{
			name: "Precedence: auto_reply",
			msg:  "From: a@example.org\r\nPrecedence: auto_reply\r\nSubject: Re: hello\r\n\r\nhi\r\n",
			kind: mailroom.ReportAutoReply,
		},
		{
			name: "Out of Office subject",
			msg:  "From: a@example.org\r\nSubject: Out of Office: hello\r\n\r\nhi\r\n",
			kind: mailroom.ReportAutoReply,
		},
		{
			name: "Auto: subject, encoded",
			msg:  "From: a@example.org\r\nSubject: =?utf-8?q?Auto=3A_Gr=C3=BC=C3=9Fe?=\r\n\r\nhi\r\n",
			kind: mailroom.ReportAutoReply,
		},
		{
			name: "vacation reply quoting a bounce's subject is an auto-reply",
			msg:  "From: a@example.org\r\nSubject: Automatic reply: Undeliverable: hello\r\n\r\n<b@example.org>:\r\nRemote host said: 550 5.1.1 no\r\n",
			kind: mailroom.ReportAutoReply,
		},
		{
			name: "plain-text bounce without a status is unknown",
			msg: strings.Replace(exim, "    550-5.1.1 <judy@example.org>: Recipient address rejected:\n    550 5.1.1 User unknown in virtual mailbox table\n",
				"    retry timeout exceeded\n", 1),
			// Exim's Auto-Submitted then makes it an automatic reply
			// (RFC 3834 §5): dropped either way.
			kind: mailroom.ReportAutoReply,
		},
		{
			name: "a person's message quoting a reply is unknown",
			msg:  "From: a@example.org\r\nSubject: question\r\n\r\n<b@example.org>:\r\nRemote host said: 550 5.1.1 no\r\n",
			kind: mailroom.ReportUnknown,
		},
		{
			name: "Postfix bounce without DSN, recipient and reply on one line; bare 5xx",
			msg: "From: MAILER-DAEMON@mx.example.org (Mail Delivery System)\r\nSubject: Undelivered Mail Returned to Sender\r\n\r\n" +
				"This is the mail system at host mx.example.org.\r\n\r\n" +
				"<kim@example.org>: host mx2.example.org[192.0.2.9] said: 554 Transaction failed\r\n    (in reply to RCPT TO command)\r\n",
			kind: mailroom.ReportDSN,
			check: func(t *testing.T, r *mailroom.Report) {
				want := []mailroom.ReportRecipient{{FinalRecipient: "kim@example.org", Action: "failed", Status: "5.0.0", DiagnosticCode: "554 Transaction failed"}}
				if !reflect.DeepEqual(r.Recipients, want) {
					t.Errorf("%+v", r.Recipients)
				}
			},
		},
		{
			name: "sendmail bounce, null Return-Path, windows-1252 text",
			msg: "Return-Path: <>\r\nFrom: Mail Delivery Subsystem <MAILER-DAEMON@mx.example.org>\r\nSubject: Returned mail: see transcript for details\r\n" +
				"Content-Type: text/plain; charset=windows-1252\r\nContent-Transfer-Encoding: 8bit\r\n\r\n" +
				"The original message was received \x93today\x94.\r\n\r\n   ----- The following addresses had permanent fatal errors -----\r\n<lee@example.org>\r\n" +
				"    (reason: 550 5.1.1 <lee@example.org>... User unknown)\r\n",
			kind: mailroom.ReportDSN,
			check: func(t *testing.T, r *mailroom.Report) {
				want := []mailroom.ReportRecipient{{FinalRecipient: "lee@example.org", Action: "failed", Status: "5.1.1", DiagnosticCode: "550 5.1.1 <lee@example.org>... User unknown)"}}
				if !reflect.DeepEqual(r.Recipients, want) {
					t.Errorf("%+v", r.Recipients)
				}
				if !strings.HasPrefix(r.Text, "The original message was received “today”.") {
					t.Errorf("Text = %q", r.Text)
				}
			},
		},
		{
			name: "unquoted boundary with specials, duplicate parameter",
			msg: "From: MAILER-DAEMON@example.org\r\nContent-Type: multipart/report; report-type=delivery-status; boundary=----=_Part_1; boundary=----=_Part_1\r\n\r\n" +
				"------=_Part_1\r\nContent-Type: message/delivery-status\r\n\r\nFinal-Recipient: rfc822; kim@example.org\r\nAction: failed\r\nStatus: 5.1.1\r\n------=_Part_1--\r\n",
			kind: mailroom.ReportDSN,
		},
		{
			name: "a NUL and controls in values",
			msg: "From: MAILER-DAEMON@example.org\r\nContent-Type: multipart/report; report-type=delivery-status; boundary=b\r\n\r\n" +
				"--b\r\nContent-Type: text/plain\r\n\r\nbad\x00text\x1b[31m \xff\r\n--b\r\nContent-Type: message/delivery-status\r\n\r\n" +
				"Final-Recipient: rfc822; kim@example.org\x00\r\nAction: failed\r\nStatus: 5.1.1\r\nDiagnostic-Code: smtp; 550\x01 5.1.1 \xfe\r\n--b--\r\n",
			kind: mailroom.ReportDSN,
			check: func(t *testing.T, r *mailroom.Report) {
				if r.Text != "badtext[31m \u00ff" || r.Recipients[0].FinalRecipient != "kim@example.org" || r.Recipients[0].DiagnosticCode != "550  5.1.1 \ufffd" {
					t.Errorf("%+v", r)
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := ParseReport(strings.NewReader(tt.msg))
			if err != nil {
				t.Fatal(err)
			}
			checkInvariants(t, r)
			if r.Kind != tt.kind {
				t.Fatalf("Kind = %q, want %q (%+v)", r.Kind, tt.kind, r)
			}
			if tt.check != nil {
				tt.check(t, r)
			}
		})
	}
}

func TestParseReportTextCut(t *testing.T) {
	// 3-byte characters, so that MaxReportText falls inside one.
	body := strings.Repeat("€", 3*mailroom.MaxReportText)
	msg := "From: MAILER-DAEMON@example.org\r\nContent-Type: multipart/report; report-type=delivery-status; boundary=b\r\n\r\n" +
		"--b\r\nContent-Type: text/plain; charset=utf-8\r\n\r\n" + body + "\r\n--b\r\nContent-Type: message/delivery-status\r\n\r\nFinal-Recipient: rfc822; kim@example.org\r\nAction: failed\r\nStatus: 5.1.1\r\n--b--\r\n"
	r, err := ParseReport(strings.NewReader(msg))
	if err != nil {
		t.Fatal(err)
	}
	checkInvariants(t, r)
	if want := mailroom.MaxReportText / 3 * 3; len(r.Text) != want || !utf8.ValidString(r.Text) {
		t.Errorf("Text has %d bytes (valid %v), want %d", len(r.Text), utf8.ValidString(r.Text), want)
	}
	if r.Kind != mailroom.ReportDSN {
		t.Errorf("Kind = %q", r.Kind)
	}
}

// TestParseReportPrefixes parses every prefix of the fixtures: a message
// cut anywhere is read as far as it goes, never a panic.
func TestParseReportPrefixes(t *testing.T) {
	for _, name := range []string{"postfix-user-unknown.eml", "exchange-recipient-not-found.eml", "gmail-no-such-user.eml", "yahoo-arf-abuse.eml", "qmail-failure-notice.eml"} {
		b := crlf(fixture(t, name))
		for n := 0; n <= len(b); n++ {
			r, err := ParseReport(bytes.NewReader(b[:n]))
			if err != nil {
				if r != nil {
					t.Fatalf("%s[:%d]: a report with the error", name, n)
				}
				continue
			}
			checkInvariants(t, r)
		}
	}
}

// nestedMultiparts is a message of n multiparts, each the only part of
// the one around it.
func nestedMultiparts(n int, mediaType string) []byte {
	var b bytes.Buffer
	b.WriteString("From: MAILER-DAEMON@example.org\r\nSubject: nested\r\n")
	for i := range n {
		b.WriteString("Content-Type: " + mediaType + "; report-type=delivery-status; boundary=\"b" + strconv.Itoa(i) + "\"\r\n\r\n--b" + strconv.Itoa(i) + "\r\n")
	}
	b.WriteString("Content-Type: message/delivery-status\r\n\r\nFinal-Recipient: rfc822; kim@example.org\r\nAction: failed\r\nStatus: 5.1.1\r\n")
	for i := n - 1; i >= 0; i-- {
		b.WriteString("--b" + strconv.Itoa(i) + "--\r\n")
	}
	return b.Bytes()
}

func TestParseReportHostile(t *testing.T) {
	manyParts := func() []byte {
		var b bytes.Buffer
		b.WriteString("From: MAILER-DAEMON@example.org\r\nContent-Type: multipart/report; report-type=delivery-status; boundary=b\r\n\r\n")
		for range 10000 {
			b.WriteString("--b\r\nContent-Type: image/gif\r\n\r\nGIF89a\r\n")
		}
		// Beyond maxParts: not read.
		b.WriteString("--b\r\nContent-Type: message/delivery-status\r\n\r\nFinal-Recipient: rfc822; kim@example.org\r\nAction: failed\r\nStatus: 5.1.1\r\n--b--\r\n")
		return b.Bytes()
	}
	many := func(prefix, unit string, size int) []byte {
		return []byte(prefix + strings.Repeat(unit, size/len(unit)))
	}
	tests := []struct {
		name string
		msg  []byte
		kind mailroom.ReportKind
	}{
		{"10,000 nested multiparts", nestedMultiparts(10000, "multipart/mixed"), mailroom.ReportUnknown},
		{"10,000 nested reports", nestedMultiparts(10000, "multipart/report"), mailroom.ReportUnknown},
		{"nesting within the bound", nestedMultiparts(maxDepth, "multipart/report"), mailroom.ReportDSN},
		{"10,000 parts", manyParts(), mailroom.ReportUnknown},
		{"10 MiB header line", many("From: MAILER-DAEMON@example.org\r\nSubject: ", "x", 10<<20), mailroom.ReportUnknown},
		{"a million header fields", many("From: MAILER-DAEMON@example.org\r\n", "X-A: b\r\n", 8<<20), mailroom.ReportUnknown},
		{"10 MiB part header", many("Content-Type: multipart/report; report-type=delivery-status; boundary=b\r\n\r\n--b\r\n", "X-A: b\r\n", 10<<20), mailroom.ReportUnknown},
		{"10 MiB preamble", many("Content-Type: multipart/report; report-type=delivery-status; boundary=b\r\n\r\n", "preamble\r\n", 10<<20), mailroom.ReportUnknown},
		{"10 MiB line in a part", many("Content-Type: multipart/mixed; boundary=b\r\n\r\n--b\r\n\r\n", "x", 10<<20), mailroom.ReportUnknown},
		{"10 MiB of continuation lines in a delivery-status", many("Content-Type: multipart/report; report-type=delivery-status; boundary=b\r\n\r\n--b\r\nContent-Type: message/delivery-status\r\n\r\nFinal-Recipient: rfc822; kim@example.org\r\nDiagnostic-Code: smtp; 550\r\n", " x\r\n", 10<<20), mailroom.ReportDSN},
		{"10 MiB of blocks in a delivery-status", many("Content-Type: multipart/report; report-type=delivery-status; boundary=b\r\n\r\n--b\r\nContent-Type: message/delivery-status\r\n\r\n", "Final-Recipient: rfc822; k@example.org\r\n\r\n", 10<<20), mailroom.ReportDSN},
		{"10 MiB of bare CRs", many("Content-Type: multipart/mixed; boundary=b\r\n\r\n--b\r\n\r\n", "\r", 10<<20), mailroom.ReportUnknown},
		{"10 MiB base64 part", many("Content-Type: multipart/mixed; boundary=b\r\n\r\n--b\r\nContent-Type: text/plain\r\nContent-Transfer-Encoding: base64\r\n\r\n", "QUFB", 10<<20), mailroom.ReportUnknown},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := ParseReport(bytes.NewReader(tt.msg))
			if err != nil {
				t.Fatal(err)
			}
			checkInvariants(t, r)
			if r.Kind != tt.kind {
				t.Errorf("Kind = %q, want %q", r.Kind, tt.kind)
			}
		})
	}
}

// endless repeats its unit forever.
type endless struct {
	unit []byte
	off  int
}

func (e *endless) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = e.unit[e.off]
		e.off = (e.off + 1) % len(e.unit)
	}
	return len(p), nil
}

func TestParseReportEndlessInput(t *testing.T) {
	for name, r := range map[string]io.Reader{
		"header": &endless{unit: []byte("X-A: b\r\n")},
		"body": io.MultiReader(strings.NewReader("Content-Type: multipart/mixed; boundary=b\r\n\r\n--b\r\nContent-Type: image/gif\r\n\r\n"),
			&endless{unit: []byte("GIF89a\r\n")}),
	} {
		t.Run(name, func(t *testing.T) {
			rep, err := ParseReport(r)
			if err != nil {
				t.Fatal(err)
			}
			checkInvariants(t, rep)
		})
	}
}
