package compose

import (
	"bytes"
	"encoding/base64"
	"strconv"
	"strings"
	"testing"

	"github.com/emersion/go-msgauth/dkim"

	"github.com/mailroom/mailroom"
)

// Marketing mail is composed once, unsigned and without the per-recipient
// pair; each recipient's copy adds its own pair and a signature over both,
// which verifies as a receiver checks it, and names both in h= (RFC 8058
// §4).
func TestCopiesAreSignedPerRecipient(t *testing.T) {
	key, _ := testDomainKey()
	m := testMessage()
	m.Category = mailroom.CategoryMarketing
	m.ReplyTo = []mailroom.Address{{Address: "help@example.com"}}
	m.Attachments = []mailroom.Attachment{invoice, logo}
	base := mustCompose(t, m)
	if mailroom.IsSigned(base) || bytes.Contains(base, []byte("DKIM-Signature")) || bytes.Contains(base, []byte("List-Unsubscribe")) {
		t.Fatal("the common part of marketing mail is signed, or carries a recipient's link")
	}
	copies, err := testComposer().Copies(base, key)
	if err != nil {
		t.Fatal(err)
	}
	copyFor := func(rcpt string) []byte {
		raw, err := copies.Copy(copyFields(t, m, rcpt), "")
		if err != nil {
			t.Fatal(err)
		}
		return raw
	}
	bob, carol := copyFor("bob@example.net"), copyFor("carol@example.org")
	for name, raw := range map[string][]byte{"bob": bob, "carol": carol} {
		if !mailroom.IsSigned(raw) || !bytes.HasSuffix(raw, base) {
			t.Fatalf("%s's copy is not the signature and the pair in front of the common part", name)
		}
		v := verifyOne(t, raw)
		want := "From:To:Cc:Subject:Date:Message-ID:Reply-To:MIME-Version:Content-Type:List-Unsubscribe:List-Unsubscribe-Post:From"
		if got := strings.Join(v.HeaderKeys, ":"); !strings.EqualFold(got, want) {
			t.Errorf("%s: h=%s, want %s", name, got, want)
		}
		sig := signatureField(t, raw)
		for _, tag := range []string{"a=rsa-sha256", "c=relaxed/relaxed", "d=example.com", "s=" + key.Selector,
			"t=" + strconv.FormatInt(testNow.Unix(), 10)} {
			if !strings.Contains(sig, tag) {
				t.Errorf("%s: signature lacks %s: %s", name, tag, sig)
			}
		}
		sigLines := true
		for i, line := range strings.Split(string(raw[:len(raw)-len(base)]), "\r\n") {
			sigLines = sigLines && !strings.HasPrefix(line, "List-Unsubscribe")
			if len(line) > 998 || (sigLines && len(line) > 78) {
				t.Errorf("%s: header line %d is %d octets: %q", name, i+1, len(line), line)
			}
		}
	}
	if bytes.Equal(bob, carol) {
		t.Fatal("two recipients got the same copy")
	}
	// The same recipient always gets the same bytes: a retry sends what
	// the first attempt sent, and the log shows it.
	if !bytes.Equal(bob, copyFor("bob@example.net")) {
		t.Error("a second copy for the same recipient differs")
	}
}

// A copy's signature breaks when its link is changed or swapped for
// another recipient's: nobody on the way can point it elsewhere.
func TestCopyFailsWhenItsLinkIsTamperedWith(t *testing.T) {
	m := testMessage()
	m.Category = mailroom.CategoryMarketing
	bob := mustComposeCopy(t, m, "bob@example.net")
	bobLink := copyFields(t, m, "bob@example.net")[0].Value
	carolLink := copyFields(t, m, "carol@example.org")[0].Value
	for name, tamper := range map[string]func([]byte) []byte{
		"link changed": func(b []byte) []byte {
			return bytes.Replace(b, []byte("/v1/unsubscribe/"), []byte("/v1/unsubscribe/x"), 1)
		},
		"one-click removed": func(b []byte) []byte {
			return bytes.Replace(b, []byte("List-Unsubscribe-Post: List-Unsubscribe=One-Click\r\n"), nil, 1)
		},
		"body changed": func(b []byte) []byte {
			return bytes.Replace(b, []byte("shipped"), []byte("stalled"), 1)
		},
	} {
		t.Run(name, func(t *testing.T) {
			forged := tamper(bytes.Clone(bob))
			if bytes.Equal(forged, bob) {
				t.Fatal("tampering changed nothing")
			}
			if vs := verify(t, forged); len(vs) != 1 || vs[0].Err == nil {
				t.Error("a tampered copy still verifies")
			}
		})
	}
	if bobLink == carolLink {
		t.Fatal("two recipients share a link")
	}
}

// The body hash of copies.go's signer is go-msgauth's, on bodies whose
// whitespace relaxed canonicalization changes.
func TestCopiesBodyHashIsGoMsgauths(t *testing.T) {
	key, _ := testDomainKey()
	signer, err := signerFor(key)
	if err != nil {
		t.Fatal(err)
	}
	for name, body := range map[string]string{
		"plain":            "Hello\r\n",
		"trailing spaces":  "Hello  \t \r\nworld\t\r\n",
		"inner runs":       "a \t b   c\r\n  leading\r\n",
		"empty lines":      "a\r\n\r\n\r\nb\r\n\r\n\r\n\r\n",
		"only blank":       "\r\n \r\n\t\r\n",
		"no final CRLF":    "last line",
		"blank then space": "a\r\n   \r\n\r\nb \r\n",
	} {
		t.Run(name, func(t *testing.T) {
			msg := []byte("From: a@example.com\r\nDate: Sun, 22 Nov 2026 10:00:00 +0000\r\n\r\n" + body)
			sig, err := sign(msg, key, signer, []string{"From"})
			if err != nil {
				t.Fatal(err)
			}
			sum := relaxedBodyHash([]byte(body))
			want := tagValue(t, sig, "bh")
			if got := base64.StdEncoding.EncodeToString(sum[:]); got != want {
				t.Errorf("bh=%s, go-msgauth says %s", got, want)
			}
			// And the whole copy verifies.
			copies, err := testComposer().Copies(msg, key)
			if err != nil {
				t.Fatal(err)
			}
			raw, err := copies.Copy([]mailroom.Header{{Name: "List-Unsubscribe", Value: "<https://x.example/y>"}}, "")
			if err != nil {
				t.Fatal(err)
			}
			vs, err := dkim.VerifyWithOptions(bytes.NewReader(raw), &dkim.VerifyOptions{LookupTXT: lookupTXT})
			if err != nil || len(vs) != 1 || vs[0].Err != nil {
				t.Fatalf("copy does not verify: %v %+v", err, vs)
			}
		})
	}
}

// Copies refuses what is not the unsigned common part of a message.
func TestCopiesRefusesSignedOrMalformedBase(t *testing.T) {
	key, _ := testDomainKey()
	for name, base := range map[string][]byte{
		"signed":        mustCompose(t, testMessage()),
		"no header end": []byte("From: a@example.com\r\n"),
		"bad field":     []byte("From a@example.com\r\n\r\nbody\r\n"),
	} {
		if _, err := testComposer().Copies(base, key); err == nil {
			t.Errorf("%s: copies made", name)
		}
	}
}

func tagValue(t *testing.T, field, tag string) string {
	t.Helper()
	unfolded := strings.NewReplacer("\r\n", "", " ", "", "\t", "").Replace(field)
	for _, kv := range strings.Split(unfolded[strings.Index(unfolded, ":")+1:], ";") {
		if k, v, ok := strings.Cut(kv, "="); ok && k == tag {
			return v
		}
	}
	t.Fatalf("no %s= in %s", tag, field)
	return ""
}
