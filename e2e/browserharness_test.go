package e2e

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The browser harness itself: Chromium trusts the server's certificate and
// no other, and what the browser tests rely on (the request and console
// records, dialogs, screenshots) records what it should.
func TestBrowserHarness(t *testing.T) {
	browserOrSkip(t)
	s := startServer(t, filepath.Join(t.TempDir(), "mailroom-data"), "--dev")
	other := startServer(t, filepath.Join(t.TempDir(), "mailroom-data"), "--dev") // another self-signed certificate
	b := newBrowser(t, s)

	b.navigate("/healthz")
	if got := b.text("body"); !strings.Contains(got, `"status":"ok"`) {
		b.fatalf("GET /healthz in the browser shows %q", got)
	}
	if shot := b.screenshot("healthz"); shot == "" {
		t.Fatal("no screenshot written")
	} else if data, err := os.ReadFile(shot); err != nil || !strings.HasPrefix(string(data), "\x89PNG\r\n\x1a\n") {
		t.Fatalf("the screenshot %s is not a PNG: %v", shot, err)
	}

	// The SPKI flag trusts one key, not every certificate: the other
	// server's is refused.
	err := b.navigateErr(other.base + "/healthz")
	if err == nil || !strings.Contains(err.Error(), "ERR_CERT") {
		b.fatalf("loading a server whose certificate was not pinned: want a certificate error, got %v", err)
	}
	b.navigate("/healthz")
	if off := b.OffOrigin(); len(off) != 1 || !strings.HasPrefix(off[0], other.base) {
		t.Errorf("requests leaving %s: want just the other server's, got %q", s.base, off)
	}

	// What a sandboxed iframe fetches is recorded too (the message
	// preview is one), and its text can be read.
	evalJS[int](b, `(() => { const f = document.createElement("iframe"); f.id = "framed"; f.setAttribute("sandbox", "");
		f.srcdoc = "<p>framed text</p><img src=" + `+jsString(other.base+"/framed.png")+` + ">"; document.body.append(f); return 1; })()`)
	if got := b.frameText("iframe#framed"); !strings.Contains(got, "framed text") {
		t.Errorf("the sandboxed iframe's text: %q", got)
	}
	b.waitRecorded("the sandboxed iframe's image request", func() bool { return slices.Contains(b.Requests(), other.base+"/framed.png") })
	if off := b.OffOrigin(); len(off) != 2 || off[1] != other.base+"/framed.png" {
		t.Errorf("requests leaving %s: want the other server's two, got %q", s.base, off)
	}

	// Console errors, uncaught exceptions and dialogs are recorded.
	evalJS[int](b, `console.error("harness: console.error", {n: 1}); setTimeout(() => { throw new Error("harness: uncaught") }, 0); setTimeout(() => alert("harness: alert"), 0); 1`)
	want := []string{"console.error: harness: console.error", "exception: Uncaught Error: harness: uncaught", "dialog: alert: harness: alert"}
	b.waitRecorded("the console error, the exception and the dialog", func() bool {
		got := fmtEntries(b.ConsoleErrors())
		for _, w := range want {
			if !strings.Contains(got, w) {
				return false
			}
		}
		return true
	})
	// The dialog was dismissed: the page answers again.
	if got := evalJS[int](b, `6 * 7`); got != 42 {
		t.Errorf("after the dialog, 6*7 = %d", got)
	}

	// An expected error is recorded as expected, and only while expected.
	done := b.expectErrors("a harness check", func(e consoleEntry) bool { return strings.Contains(e.text, "harness: expected") })
	evalJS[int](b, `console.error("harness: expected"); 1`)
	b.waitRecorded("the expected console error", func() bool {
		for _, e := range b.AllProblems() {
			if strings.Contains(e.text, "harness: expected") {
				return e.expected == "a harness check"
			}
		}
		return false
	})
	done()
	if strings.Contains(fmtEntries(b.ConsoleErrors()), "harness: expected") {
		t.Errorf("an expected error counted as a console error: %s", fmtEntries(b.ConsoleErrors()))
	}

	// The viewport helper: at 390 pixels, a page with no viewport meta
	// element is laid out 980 pixels wide; with one, 390, and a wider
	// element makes it scroll sideways, which sideways names.
	b.setViewport(390, 844, true)
	if got := b.sideways(390); !strings.Contains(got, "window.innerWidth is 980") {
		t.Errorf("/healthz (no viewport meta) at 390 pixels: sideways() = %q", got)
	}
	evalJS[int](b, `(() => { const m = document.createElement("meta"); m.name = "viewport"; m.content = "width=device-width, initial-scale=1"; document.head.append(m); return 1; })()`)
	b.waitFor("the layout at the phone's width", `window.innerWidth === 390`)
	if got := b.sideways(390); got != "" {
		t.Errorf("/healthz with a viewport meta element at 390 pixels: %s", got)
	}
	evalJS[int](b, `(() => { const d = document.createElement("div"); d.id = "wide"; d.style.width = "600px"; d.textContent = "x"; document.body.append(d); return 1; })()`)
	if got := b.sideways(390); !strings.Contains(got, "div#wide") {
		t.Errorf("a 600-pixel div at 390 pixels: sideways() = %q", got)
	}
	b.screenshot("phone-too-wide")
	b.waitVisible("#wide")
	b.waitFor("the wide div's text", `document.querySelector("#wide").textContent === "x"`)
}

func fmtEntries(es []consoleEntry) string {
	var sb strings.Builder
	for _, e := range es {
		sb.WriteString(e.String() + "\n")
	}
	return sb.String()
}
