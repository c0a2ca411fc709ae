package tracking

import (
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/mailroom/mailroom"
)

const testPublicURL = "https://mail.example.com"

var both = mailroom.Tracking{Opens: true, Clicks: true}

// trackedCopy prepares src for tr and makes Ann's copy.
func trackedCopy(t *testing.T, src string, tr mailroom.Tracking) (string, []string, *Tokens) {
	t.Helper()
	tokens := testTokens(t, "key one, long enough")
	p, err := Tracker{Tokens: tokens, PublicURL: testPublicURL}.Prepare(testMessageID, src, tr)
	if err != nil {
		t.Fatal(err)
	}
	out, err := p.For("ann@example.net")
	if err != nil {
		t.Fatal(err)
	}
	return out, p.Links(), tokens
}

var clickAddress = regexp.MustCompile(`https://mail\.example\.com/t/c/([A-Za-z0-9_-]+)`)
var pixelAddress = regexp.MustCompile(`<img src="https://mail\.example\.com/t/o/([A-Za-z0-9_-]+)" width="1" height="1" alt="" border="0" style="display:block;width:1px;height:1px;border:0" />`)

// clickTargets opens every click address of out, in order, and returns
// where each redirects.
func clickTargets(t *testing.T, tokens *Tokens, out string) []string {
	t.Helper()
	var urls []string
	for i, m := range clickAddress.FindAllStringSubmatch(out, -1) {
		l, err := tokens.OpenLink(m[1])
		if err != nil {
			t.Fatalf("click address %d: %v", i, err)
		}
		if l.Index != i || l.MessageID != testMessageID || l.Recipient != "ann@example.net" {
			t.Fatalf("click address %d names %+v", i, l)
		}
		urls = append(urls, l.URL)
	}
	return urls
}

// withoutTokens replaces every tracking address of out by a marker, to
// compare the rest byte for byte.
func withoutTokens(out string) string {
	out = pixelAddress.ReplaceAllString(out, "PIXEL")
	return clickAddress.ReplaceAllString(out, "CLICK")
}

// Links redirect to the address as the reader's browser would have asked
// for it: character references decoded (&amp; is &), the whitespace
// around it gone, and nothing else changed: query, fragment, Unicode
// path and IDN host kept, scheme in any case.
func TestLinksRedirectToTheDecodedAddress(t *testing.T) {
	src := `<html><body>` +
		`<a href="https://x.example/?a=1&amp;b=2">amp</a>` +
		`<a href=' https://x.example/p#frag '>single, spaces</a>` +
		`<a href=https://x.example/unquoted?q=1>unquoted</a>` +
		`<A HREF="HTTPS://X.Example/Upper">upper</A>` +
		`<a class="btn" href="http://bücher.example/straße/ü?q=ö&amp;r=%41#é" title="x">unicode</a>` +
		`<a href="https://x.example/&#x3f;x&lt;y&copy">refs</a>` +
		`<area shape="rect" href="https://x.example/area">` +
		`<a href="https://x.example/self" />` +
		`<a href="https:\\x.example\back">backslashes</a>` +
		`</body></html>`
	out, links, tokens := trackedCopy(t, src, mailroom.Tracking{Clicks: true})
	want := []string{
		"https://x.example/?a=1&b=2",
		"https://x.example/p#frag",
		"https://x.example/unquoted?q=1",
		"HTTPS://X.Example/Upper",
		"http://bücher.example/straße/ü?q=ö&r=%41#é",
		"https://x.example/?x<y©",
		"https://x.example/area",
		"https://x.example/self",
		`https:\\x.example\back`,
	}
	if !slices.Equal(links, want) {
		t.Errorf("Links() = %q\nwant      %q", links, want)
	}
	if got := clickTargets(t, tokens, out); !slices.Equal(got, want) {
		t.Errorf("click addresses open to %q\nwant %q", got, want)
	}
	wantRest := `<html><body>` +
		`<a href="CLICK">amp</a>` +
		`<a href='CLICK'>single, spaces</a>` +
		`<a href="CLICK">unquoted</a>` +
		`<A HREF="CLICK">upper</A>` +
		`<a class="btn" href="CLICK" title="x">unicode</a>` +
		`<a href="CLICK">refs</a>` +
		`<area shape="rect" href="CLICK">` +
		`<a href="CLICK" />` +
		`<a href="CLICK">backslashes</a>` +
		`</body></html>`
	if got := withoutTokens(out); got != wantRest {
		t.Errorf("copy\n%s\nwant\n%s", got, wantRest)
	}
}

// What is not an absolute http(s) link is left byte for byte: mailto,
// tel, relative, fragment-only, javascript, the service's own
// unsubscribe pages, links inside comments, scripts, styles and titles,
// attributes other than href, and the text around them.
func TestWhatIsNotTrackedIsLeftAlone(t *testing.T) {
	src := "<!doctype html>\r\n<html><head><title>&lt;a href=\"https://x.example/t\"&gt;</title>" +
		`<style>a[href="https://x.example/s"]{color:red}</style>` +
		`<script>document.write('<a href="https://x.example/js">')</script></head>` +
		"<body>\n<p>Hi &amp; welcome</p>" +
		`<a href="mailto:help@x.example?subject=Hi">mail</a>` +
		`<a href="tel:+15551234">call</a>` +
		`<a href="/relative">rel</a><a href="x.example/no-scheme">rel2</a>` +
		`<a href="#top">frag</a><a href="javascript:alert(1)">js</a>` +
		`<a href="//x.example/scheme-relative">sr</a>` +
		`<a href="https:///no-host">nohost</a><a href="http:x.example">opaque</a>` +
		`<a href="ftp://x.example/f">ftp</a><a name="anchor">name</a><a>bare</a>` +
		`<a href="https://mail.example.com/v1/unsubscribe/TOKEN">unsubscribe</a>` +
		`<a href="https://MAIL.example.com/t/c/OTHER">tracked already</a>` +
		`<a href="https://x.example/con&#x0a;trol">control</a>` +
		`<!-- <a href="https://x.example/comment">c</a> -->` +
		`<img src="https://x.example/img.png" alt="https://x.example/alt">` +
		`<link rel="stylesheet" href="https://x.example/style.css">` +
		`<p>Visit https://x.example/text today.</p>` +
		"\n</body>\n</html>\n"
	out, links, _ := trackedCopy(t, src, mailroom.Tracking{Clicks: true})
	if out != src || len(links) != 0 {
		t.Errorf("changed:\n%s\nlinks %q", out, links)
	}
}

// <noscript> is read as markup: a mail program runs no scripts and shows
// it, links and all.
func TestLinksInNoscriptAreTracked(t *testing.T) {
	_, links, _ := trackedCopy(t, `<noscript><a href="https://x.example/n">n</a></noscript>`, mailroom.Tracking{Clicks: true})
	if !slices.Equal(links, []string{"https://x.example/n"}) {
		t.Errorf("links %q", links)
	}
}

// The pixel is the last element: before the last </body>, or at the very
// end without one.
func TestPixelPlacement(t *testing.T) {
	for _, c := range []struct{ src, want string }{
		{"<html><body><p>Hi</p></body></html>", "<html><body><p>Hi</p>PIXEL</body></html>"},
		{"<html><BODY><p>Hi</p></BODY >\n</html>", "<html><BODY><p>Hi</p>PIXEL</BODY >\n</html>"},
		{"<p>Hi</p>", "<p>Hi</p>PIXEL"},
		{"<p>Hi</p></body> <div></body></div>", "<p>Hi</p></body> <div>PIXEL</body></div>"},
		{"<p>Hi</p><!-- </body> -->", "<p>Hi</p><!-- </body> -->PIXEL"},
		{"", "PIXEL"},
		{"<p>Hi</p><script>var a = 1;", "<p>Hi</p>PIXEL<script>var a = 1;"},
		{"<p>Hi</p><title>x</title>", "<p>Hi</p><title>x</title>PIXEL"},
		{"<p>unterminated <a href=\"https://x.example", "<p>unterminated PIXEL<a href=\"https://x.example"},
	} {
		out, links, tokens := trackedCopy(t, c.src, mailroom.Tracking{Opens: true})
		if got := withoutTokens(out); got != c.want || len(links) != 0 {
			t.Errorf("%q: got %q, want %q (links %q)", c.src, got, c.want, links)
		}
		m := pixelAddress.FindStringSubmatch(out)
		if m == nil {
			t.Fatalf("%q: no pixel in %q", c.src, out)
		}
		if p, err := tokens.OpenPixel(m[1]); err != nil || p != (Pixel{MessageID: testMessageID, Recipient: "ann@example.net"}) {
			t.Errorf("%q: pixel names %+v, %v", c.src, p, err)
		}
	}
}

// Opens and clicks are tracked each on its own; with neither, the HTML
// is as it was.
func TestOpensAndClicksIndependently(t *testing.T) {
	src := `<body><a href="https://x.example/">x</a></body>`
	for _, c := range []struct {
		tr   mailroom.Tracking
		want string
	}{
		{mailroom.Tracking{Opens: true}, `<body><a href="https://x.example/">x</a>PIXEL</body>`},
		{mailroom.Tracking{Clicks: true}, `<body><a href="CLICK">x</a></body>`},
		{both, `<body><a href="CLICK">x</a>PIXEL</body>`},
		{mailroom.Tracking{}, src},
	} {
		out, links, _ := trackedCopy(t, src, c.tr)
		if got := withoutTokens(out); got != c.want {
			t.Errorf("%+v: got %q, want %q", c.tr, got, c.want)
		}
		if wantLinks := c.tr.Clicks; (len(links) == 1) != wantLinks {
			t.Errorf("%+v: links %q", c.tr, links)
		}
	}
}

// Each recipient's copy has its own tokens; the same recipient always
// gets the same bytes (a retry re-sends what was signed).
func TestCopiesPerRecipient(t *testing.T) {
	tokens := testTokens(t, "key one, long enough")
	p, err := Tracker{Tokens: tokens, PublicURL: testPublicURL}.Prepare(testMessageID, `<a href="https://x.example/">x</a>`, both)
	if err != nil {
		t.Fatal(err)
	}
	ann1, _ := p.For("ann@example.net")
	ann2, _ := p.For("ann@example.net")
	bob, _ := p.For("bob@example.net")
	if ann1 != ann2 {
		t.Error("two copies for Ann differ")
	}
	if ann1 == bob || withoutTokens(ann1) != withoutTokens(bob) {
		t.Errorf("Ann's and Bob's copies:\n%s\n%s", ann1, bob)
	}
	m := clickAddress.FindStringSubmatch(bob)
	if l, err := tokens.OpenLink(m[1]); err != nil || l.Recipient != "bob@example.net" {
		t.Errorf("Bob's link names %+v, %v", l, err)
	}
	if _, err := p.For(""); err == nil {
		t.Error("a copy for no recipient was made")
	}
}

// Only the first MaxTrackedLinks links are rewritten; the rest are left.
func TestTrackedLinksAreCapped(t *testing.T) {
	var b strings.Builder
	for i := range mailroom.MaxTrackedLinks + 5 {
		b.WriteString(`<a href="https://x.example/` + strings.Repeat("i", i%7) + `">x</a>`)
	}
	out, links, _ := trackedCopy(t, b.String(), mailroom.Tracking{Clicks: true})
	if len(links) != mailroom.MaxTrackedLinks {
		t.Fatalf("%d links tracked", len(links))
	}
	if n := strings.Count(out, "/t/c/"); n != mailroom.MaxTrackedLinks {
		t.Errorf("%d click addresses", n)
	}
	if !strings.HasSuffix(out, strings.Repeat(`">x</a>`, 1)) || strings.Count(out, `"https://x.example/`) != 5 {
		t.Errorf("the last 5 links were not left as they were")
	}
}

// A link to a public URL with a path prefix (a reverse proxy's) keeps
// the prefix, and the prefix's own unsubscribe pages are recognised.
func TestPublicURLWithPathPrefix(t *testing.T) {
	tokens := testTokens(t, "key one, long enough")
	base := "https://example.com/mail&co"
	p, err := Tracker{Tokens: tokens, PublicURL: base}.Prepare(testMessageID,
		`<a href="https://x.example/">x</a><a href="https://example.com/mail&amp;co/v1/unsubscribe/T">u</a>`, both)
	if err != nil {
		t.Fatal(err)
	}
	out, _ := p.For("ann@example.net")
	if !strings.HasPrefix(out, `<a href="https://example.com/mail&amp;co/t/c/`) ||
		!strings.Contains(out, `<a href="https://example.com/mail&amp;co/v1/unsubscribe/T">u</a><img src="https://example.com/mail&amp;co/t/o/`) {
		t.Errorf("copy %s", out)
	}
}

func TestPrepareRefuses(t *testing.T) {
	tokens := testTokens(t, "key one, long enough")
	if _, err := (Tracker{Tokens: tokens}).Prepare(testMessageID, "<p>", both); err == nil {
		t.Error("prepared without a public URL")
	}
	if _, err := (Tracker{Tokens: tokens, PublicURL: testPublicURL}).Prepare("msg_x", "<p>", both); err == nil {
		t.Error("prepared for a message id that is none")
	}
}
