package compose

import (
	"fmt"
	"mime"
	"strings"
	"unicode/utf8"

	"github.com/mailroom/mailroom"
)

// dateLayout is the RFC 5322 §3.3 date-time, with a numeric zone.
const dateLayout = "Mon, 02 Jan 2006 15:04:05 -0700"

// headerFields lists the top-level header: the originator, destination and
// identification fields, the MIME fields of the body's root entity
// (content), then the client's extra headers in the order given. RFC
// 8058's unsubscribe pair of marketing mail is per recipient: Copies puts
// it in front.
//
// There is never a Bcc field: RFC 5322 §3.6.3 lets a sender write one, but
// whoever reads it learns who was blind-copied, which is what a blind copy
// is meant to avoid. Bcc recipients are only in the SMTP envelope.
func (c Composer) headerFields(m *mailroom.Message, content fields) (fields, error) {
	var fs fields
	if m.From.Address == "" {
		return nil, fmt.Errorf("compose: message has no From address")
	}
	for _, h := range []struct {
		name  string
		addrs []mailroom.Address
	}{
		{"From", []mailroom.Address{m.From}},
		{"To", m.To},
		{"Cc", m.Cc},
		{"Reply-To", m.ReplyTo},
	} {
		if len(h.addrs) == 0 {
			continue
		}
		v, err := addressList(h.name, h.addrs)
		if err != nil {
			return nil, err
		}
		fs.add(h.name, v)
	}

	if strings.ContainsAny(m.Subject, "\r\n") {
		return nil, fmt.Errorf("compose: subject contains CR or LF")
	}
	// RFC 2047 §5(1): non-ASCII in an unstructured field travels as
	// encoded-words, and so does text that looks like one; other ASCII is
	// left as it is. The words are at most 75 characters and
	// space-separated, so a long subject folds.
	fs.add("Subject", encodeText(m.Subject))
	// UTC, so that the Date does not tell receivers the server's zone.
	fs.add("Date", c.now().UTC().Format(dateLayout))
	if m.MessageIDHeader == "" || strings.ContainsAny(m.MessageIDHeader, "<> \t\r\n") {
		return nil, fmt.Errorf("compose: invalid Message-ID %q", m.MessageIDHeader)
	}
	fs.add("Message-ID", "<"+m.MessageIDHeader+">") // RFC 5322 §3.6.4
	fs.add("MIME-Version", "1.0")                   // RFC 2045 §4
	fs = append(fs, content...)

	extra, err := extraFields(m.Headers)
	if err != nil {
		return nil, err
	}
	return append(fs, extra...), nil
}

// perRecipient says whether m is composed per recipient. Tracked mail
// (docs/api.md "Engagement tracking") is: each recipient's copy has an
// HTML part of its own, with that recipient's pixel and links (Copies).
// Marketing mail is too: it gets RFC 8058's one-click unsubscribe pair,
// whose URL names the recipient, in each recipient's copy, unless the
// client gave a List-Unsubscribe of its own, which every recipient then
// gets alike.
func perRecipient(m *mailroom.Message) bool {
	if m.Tracking.Any() && m.HTML != "" {
		return true
	}
	if m.Category != mailroom.CategoryMarketing {
		return false
	}
	for _, h := range m.Headers {
		if strings.EqualFold(h.Name, "List-Unsubscribe") {
			return false
		}
	}
	return true
}

// addressList formats a list of mailboxes. Display names are quoted when
// they need it and RFC 2047 encoded when they are not ASCII. Addresses are
// written exactly as stored: validation made them canonical (a local part
// is quoted only when it must be, RFC 5321 §4.1.2), and quoting them again,
// as net/mail's Address.String does, would name another mailbox.
func addressList(name string, addrs []mailroom.Address) (string, error) {
	out := make([]string, len(addrs))
	for i, a := range addrs {
		if a.Address == "" || strings.ContainsAny(a.Address+a.Name, "\r\n") {
			return "", fmt.Errorf("compose: invalid %s address %q", name, a.Address)
		}
		out[i] = "<" + a.Address + ">"
		if a.Name != "" {
			out[i] = displayName(a.Name) + " " + out[i]
		}
	}
	return strings.Join(out, ", "), nil
}

// displayName writes a display name as RFC 5322 §3.2.5 phrase: a quoted
// string for ASCII (backslash-escaping '"' and '\'), RFC 2047
// encoded-words otherwise. ASCII that looks like an encoded-word is
// encoded as well: many readers decode encoded-words even inside a quoted
// string, which RFC 2047 §5(3) forbids them to.
func displayName(n string) string {
	if looksEncoded(n) {
		return encodeWords(n)
	}
	for i := 0; i < len(n); i++ {
		if n[i] >= utf8.RuneSelf {
			// Q-encoding leaves specials such as ',' as they are, which a
			// phrase may not hold (RFC 2047 §5(3)); B-encoding hides them.
			if q := mime.QEncoding.Encode("utf-8", n); !strings.ContainsAny(q, `",()<>@:;[]\.`) {
				return q
			}
			return mime.BEncoding.Encode("utf-8", n)
		}
	}
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(n) + `"`
}
