package tracking

import (
	"strings"
	"testing"

	xhtml "golang.org/x/net/html"
)

type readToken struct {
	tt    xhtml.TokenType
	data  string
	attrs []attr
}

func readAll(s string) []readToken {
	var out []readToken
	z := xhtml.NewTokenizer(strings.NewReader(s))
	for {
		tt := z.Next()
		if tt == xhtml.ErrorToken {
			return out
		}
		tok := z.Token()
		r := readToken{tt: tt, data: tok.Data}
		for _, a := range tok.Attr {
			r.attrs = append(r.attrs, attr{a.Key, a.Val})
		}
		if tt == xhtml.StartTagToken && tok.Data == "noscript" {
			z.NextIsNotRawText()
		}
		out = append(out, r)
	}
}

// FuzzPrepare: whatever the HTML, a copy reads, token by token, as the
// original did, except that each tracked link's href is its click
// address, which opens to the href's trackable address, and that one
// pixel image was added.
func FuzzPrepare(f *testing.F) {
	for _, s := range []string{
		`<a href="https://x.example/?a=1&amp;b=2">x</a></body>`,
		`<a href=https://x.example/u title=t>`,
		`<a  href = 'https://x.example' / >`,
		`<a href="https://x.example" href="https://y.example">`,
		`<a =href="https://x.example" href=https://y.example>`,
		`<a href="http://a.example"/><area href=http://b.example/>`,
		"<A\tHREF\n=\r\"https://x.example/&quot;\">",
		`<script><a href="https://x.example"></script><!--<a href="https://y.example">-->`,
		`<noscript><a href="https://x.example">`,
		`<a href="https://x.example/a&b=c&amp=d&ampx">`,
	} {
		f.Add(s)
	}
	tokens := testTokens(f, "key one, long enough")
	tracker := Tracker{Tokens: tokens, PublicURL: testPublicURL}
	f.Fuzz(func(t *testing.T, src string) {
		p, err := tracker.Prepare(testMessageID, src, both)
		if err != nil {
			t.Fatal(err)
		}
		out, err := p.For("ann@example.net")
		if err != nil {
			t.Fatal(err)
		}
		links := p.Links()
		before, after := readAll(src), readAll(out)
		link, pixels, j := 0, 0, 0
		for _, a := range after {
			if a.tt == xhtml.SelfClosingTagToken && a.data == "img" && len(a.attrs) > 0 && strings.HasPrefix(a.attrs[0].val, testPublicURL+"/t/o/") {
				pixels++
				continue
			}
			// The pixel may be read as text: at the end of a <script>,
			// <title> or <textarea> left open. It is there all the same.
			if a.tt == xhtml.TextToken && pixelAddress.MatchString(a.data) {
				a.data = pixelAddress.ReplaceAllString(a.data, "")
				pixels++
				if a.data == "" {
					continue
				}
			}
			if j >= len(before) {
				t.Fatalf("more tokens than before\n%q\n%q", src, out)
			}
			b := before[j]
			j++
			if a.tt != b.tt || a.data != b.data || len(a.attrs) != len(b.attrs) {
				t.Fatalf("token %d: %+v became %+v\n%q\n%q", j, b, a, src, out)
			}
			for k := range a.attrs {
				if a.attrs[k] == b.attrs[k] {
					continue
				}
				tok, ok := strings.CutPrefix(a.attrs[k].val, testPublicURL+"/t/c/")
				if !ok || a.attrs[k].key != "href" {
					t.Fatalf("attribute %+v became %+v", b.attrs[k], a.attrs[k])
				}
				l, err := tokens.OpenLink(tok)
				if err != nil || l.Index != link || l.URL != links[link] {
					t.Fatalf("link %d opens to %+v, %v; links %q", link, l, err, links)
				}
				if want, ok := Trackable(b.attrs[k].val, testPublicURL); !ok || want != l.URL {
					t.Fatalf("href %q tracked as %q", b.attrs[k].val, l.URL)
				}
				link++
			}
		}
		if link != len(links) || pixels != 1 || j != len(before) {
			t.Fatalf("%d of %d links found, %d pixels, %d of %d tokens\n%q\n%q", link, len(links), pixels, j, len(before), src, out)
		}
	})
}
