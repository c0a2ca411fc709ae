package compose

import (
	"fmt"
	"strings"
	"testing"

	"github.com/mailroom/mailroom"
)

// BenchmarkCompose is the worker's cost per message: MIME, key parsing and
// one RSA-2048 signature, which dominates.
func BenchmarkCompose(b *testing.B) {
	key, _ := testDomainKey()
	m := testMessage()
	m.Attachments = []mailroom.Attachment{logo}
	c := testComposer()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.Compose(m, key); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkParseKey(b *testing.B) {
	key, _ := testDomainKey()
	for b.Loop() {
		if _, err := parseKey(key); err != nil {
			b.Fatal(err)
		}
	}
}

// benchHTML is a typical newsletter or receipt HTML part: about 20 KB,
// 20 links, some non-ASCII.
func benchHTML() string {
	var b strings.Builder
	b.WriteString("<html><body><h1>Your autumn digest — Grüße</h1>\n")
	for i := 0; b.Len() < 20_000; i++ {
		if i < 20 {
			fmt.Fprintf(&b, `<p><a href="https://shop.example/articles/%d?utm_source=mail&amp;utm_campaign=autumn">Article %d</a></p>`+"\n", i, i)
		}
		b.WriteString(`<p style="font-family:Helvetica,Arial,sans-serif;font-size:14px;color:#333">Lorem ipsum dolor sit amet, ` +
			"consectetur adipiscing elit, sed do eiusmod tempor incididunt ut labore et dolore magna aliqua.</p>\n")
	}
	b.WriteString("</body></html>\n")
	return b.String()
}

// benchTrackedHTML is what a tracker makes of html for recipient i: each
// link through a click address with a sealed-size token, a pixel at the
// end (package tracking's own cost is not in these benchmarks).
func benchTrackedHTML(html string, i int) string {
	token := fmt.Sprintf("%0120d", i)
	html = strings.ReplaceAll(html, `"https://shop.example/articles/`, `"https://mail.example.com/t/c/`+token+`/`)
	return strings.Replace(html, "</body>", `<img src="https://mail.example.com/t/o/`+token+`" width="1" height="1" alt=""></body>`, 1)
}

// BenchmarkPerRecipient is the cost of one recipient's bytes (issue 33):
// a message signed once for every recipient (Compose, its whole cost),
// a marketing copy (its unsubscribe pair and signature in front of the
// common part), a tracked copy (its own HTML part, re-encoded, and a body
// hash of its own) and a tracked marketing copy, for a 20 KB HTML message
// alone and with a 1 MB attachment. Copies is made once per message, as
// the delivery worker does, outside the loop.
func BenchmarkPerRecipient(b *testing.B) {
	key, _ := testDomainKey()
	html := benchHTML()
	const rcpts = 64
	tracked := make([]string, rcpts)
	for i := range tracked {
		tracked[i] = benchTrackedHTML(html, i)
	}
	unsub := []mailroom.Header{
		{Name: "List-Unsubscribe", Value: "<https://mail.example.com/v1/unsubscribe/" + strings.Repeat("x", 120) + ">, <mailto:unsubscribe-" + strings.Repeat("y", 60) + "@bounces.example.com>"},
		{Name: "List-Unsubscribe-Post", Value: "List-Unsubscribe=One-Click"},
	}
	for _, size := range []struct {
		name        string
		attachments []mailroom.Attachment
	}{
		{"html20KB", nil},
		{"html20KB+attachment1MB", []mailroom.Attachment{{Filename: "report.pdf", ContentType: "application/pdf", Content: randomBytes(1 << 20)}}},
	} {
		m := testMessage()
		m.HTML, m.Attachments = html, size.attachments
		c := testComposer()
		b.Run(size.name+"/signed-once", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := c.Compose(m, key); err != nil {
					b.Fatal(err)
				}
			}
		})
		for _, kind := range []struct {
			name     string
			category mailroom.Category
			tracking mailroom.Tracking
			fields   []mailroom.Header
			ownHTML  bool
		}{
			{"marketing-copy", mailroom.CategoryMarketing, mailroom.Tracking{}, unsub, false},
			{"tracked-copy", mailroom.CategoryTransactional, mailroom.Tracking{Opens: true, Clicks: true}, nil, true},
			{"tracked-marketing-copy", mailroom.CategoryMarketing, mailroom.Tracking{Opens: true, Clicks: true}, unsub, true},
		} {
			m := *m
			m.Category, m.Tracking = kind.category, kind.tracking
			base, err := c.Compose(&m, key)
			if err != nil {
				b.Fatal(err)
			}
			b.Run(size.name+"/"+kind.name+"/copies-per-message", func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					if _, err := c.Copies(base, key); err != nil {
						b.Fatal(err)
					}
				}
			})
			copies, err := c.Copies(base, key)
			if err != nil {
				b.Fatal(err)
			}
			b.Run(size.name+"/"+kind.name, func(b *testing.B) {
				b.ReportAllocs()
				i := 0
				for b.Loop() {
					own := ""
					if kind.ownHTML {
						own = tracked[i%rcpts]
					}
					i++
					if _, err := copies.Copy(kind.fields, own); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
