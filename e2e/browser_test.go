package e2e

// The real-browser harness: a headless Chromium driven with chromedp over
// the DevTools protocol, trusting exactly the server's self-signed
// certificate, recording every request the page makes and every console
// error, and writing screenshots where a person can look at them.

import (
	"context"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/dom"
	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"

	"github.com/mailroom/mailroom/require"
)

// waitTimeout bounds every wait for the page: generous for a loaded CI
// machine, short enough that a missing element fails the test in seconds
// rather than at the suite's timeout.
const waitTimeout = 20 * time.Second

// browserNames are the executables tried, in order, on PATH.
var browserNames = []string{"chromium", "chromium-browser", "google-chrome"}

// browserOrSkip returns the path of a Chromium-family browser on PATH, or
// skips the test saying why (.ci/run installs Debian's chromium, and fails
// the test instead with MAILROOM_REQUIRE=chromium).
func browserOrSkip(t *testing.T) string {
	t.Helper()
	for _, name := range browserNames {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	require.Missing(t, require.Chromium, "no browser for the browser tests: none of %s is on PATH (Debian: apt-get install chromium; .ci/run installs it)",
		strings.Join(browserNames, ", "))
	return ""
}

// browser is one headless Chromium tab pointed at one server.
type browser struct {
	t      *testing.T
	s      *server
	ctx    context.Context // the tab's chromedp context
	origin string          // scheme://host:port of s.base
	dir    string          // where screenshots go
	prefix string          // screenshot file names start with it
	shots  int
	clocks int    // waitPageClock's markers so far
	at     string // the step the test is at, for failure messages

	mu       sync.Mutex
	requests []string       // every URL the page asked for (network.EventRequestWillBeSent, WebSockets)
	visited  []string       // every URL the top frame showed, pushState included
	problems []consoleEntry // console errors, uncaught exceptions, error log entries, dialogs
	allow    []*allowance   // errors a step expects (a refused key's 401)
	frames   map[cdp.FrameID]*frameState
	changed  chan struct{} // closed and replaced whenever something is recorded
	output   syncBuffer    // the browser's stdout and stderr
}

// consoleEntry is one recorded problem.
type consoleEntry struct {
	kind     string // "console.error", "exception", "log:<source>", "dialog"
	text     string
	expected string // why a step expected it, or ""
}

func (e consoleEntry) String() string {
	s := e.kind + ": " + e.text
	if e.expected != "" {
		s += "   (expected: " + e.expected + ")"
	}
	return s
}

// frameState is what a frame (the top one or an iframe) last showed.
type frameState struct {
	url    string
	loader cdp.LoaderID // the document's, to tell its lifecycle events from an earlier one's
	loaded bool         // it stopped loading since it navigated there
	// idle is Chromium's networkIdle for this document: nothing of the
	// frame in flight for 500 ms since it loaded.
	idle bool
}

// allowance marks errors as expected while a step that provokes them runs.
type allowance struct {
	why   string
	match func(consoleEntry) bool
}

type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string { b.mu.Lock(); defer b.mu.Unlock(); return b.b.String() }

// newBrowser starts a headless Chromium with a fresh profile that trusts
// s's certificate (and no other invalid one), opens a tab and starts
// recording. The browser is closed when the test ends; if the test failed,
// everything recorded is logged.
func newBrowser(t *testing.T, s *server) *browser {
	t.Helper()
	execPath := browserOrSkip(t)
	u, err := url.Parse(s.base)
	if err != nil {
		t.Fatalf("server address %q: %v", s.base, err)
	}
	b := &browser{t: t, s: s, origin: u.Scheme + "://" + u.Host, changed: make(chan struct{}), frames: map[cdp.FrameID]*frameState{}}
	b.dir, b.prefix = artifactsDir(t)

	spki := certSPKIHash(t, filepath.Join(s.dataDir, "tls", "cert.pem"))
	profile := t.TempDir() // registered before the cleanup below, so removed after the browser is gone
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(execPath),
		chromedp.UserDataDir(profile),
		// Trust exactly the server's key: any other certificate error
		// still fails the load.
		chromedp.Flag("ignore-certificate-errors-spki-list", spki),
		// Chromium refuses to start its sandbox as root (CI runs as root).
		chromedp.Flag("no-sandbox", os.Geteuid() == 0),
		// A sandboxed iframe (the message preview) would run in a process
		// of its own, whose requests and console never reach the page's
		// DevTools session: keep it in the page's process, so that the
		// record below holds everything the page does. The sandbox
		// attribute's restrictions are unchanged. (The other two are
		// chromedp's defaults, which this flag replaces.)
		chromedp.Flag("disable-features", "Translate,BlinkGenPropertyTrees,IsolateSandboxedIframes"),
		chromedp.CombinedOutput(&b.output),
	)
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelTab := chromedp.NewContext(allocCtx,
		chromedp.WithListener(b.onEvent), // from the tab's first event on
		chromedp.WithErrorf(func(format string, args ...any) { fmt.Fprintf(&b.output, "chromedp: "+format+"\n", args...) }),
	)
	b.ctx = ctx
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("browser record at the end of %s:\n%s", t.Name(), b.dump())
		}
		closeCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		_ = chromedp.Cancel(closeCtx) // closes the browser gracefully, waits for it
		cancelTab()
		cancelAlloc() // waits until the process has exited
	})

	// The first action starts the browser and binds it to ctx, so it runs
	// without a deadline of its own; a browser that never answers is
	// abandoned after a minute.
	started := make(chan error, 1)
	go func() {
		started <- chromedp.Do(ctx, chromedp.EmulateViewport(1280, 900))
	}()
	select {
	case err = <-started:
	case <-time.After(time.Minute):
		cancelTab()
		err = errors.New("no answer within a minute")
	}
	if err != nil {
		t.Fatalf("starting %s: %v\nbrowser output:\n%s", execPath, err, b.output.String())
	}
	return b
}

// certSPKIHash is what --ignore-certificate-errors-spki-list takes: the
// base64 SHA-256 of the certificate's SubjectPublicKeyInfo.
func certSPKIHash(t *testing.T, certFile string) string {
	t.Helper()
	data, err := os.ReadFile(certFile)
	if err != nil {
		t.Fatalf("the server's certificate: %v", err)
	}
	block, _ := pem.Decode(data)
	if block == nil || block.Type != "CERTIFICATE" {
		t.Fatalf("%s holds no PEM certificate", certFile)
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatalf("%s: %v", certFile, err)
	}
	sum := sha256.Sum256(cert.RawSubjectPublicKeyInfo)
	return base64.StdEncoding.EncodeToString(sum[:])
}

// artifactsDir is $MAILROOM_TEST_ARTIFACTS, or e2e/testdata/artifacts
// (ignored by git). Screenshots an earlier run of the same test left there
// are removed, so that what is there is this run's.
func artifactsDir(t *testing.T) (dir, prefix string) {
	t.Helper()
	dir = os.Getenv("MAILROOM_TEST_ARTIFACTS")
	if dir == "" {
		dir = filepath.Join("testdata", "artifacts")
	}
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatalf("screenshot directory: %v", err)
	}
	prefix = regexp.MustCompile(`[^A-Za-z0-9_.-]+`).ReplaceAllString(t.Name(), "_")
	old, _ := filepath.Glob(filepath.Join(dir, prefix+"-[0-9][0-9]-*.png"))
	for _, f := range old {
		_ = os.Remove(f)
	}
	return dir, prefix
}

// onEvent runs in the tab's event loop: it must be quick and send no command.
func (b *browser) onEvent(ev any) {
	var req, nav string
	var problem *consoleEntry
	var frameNav *page.EventFrameNavigated
	var frameLoaded cdp.FrameID
	var frameIdle *page.EventLifecycleEvent
	switch ev := ev.(type) {
	case *network.EventRequestWillBeSent:
		if ev.Request != nil {
			req = ev.Request.URL + ev.Request.URLFragment
		}
	case *network.EventWebSocketCreated:
		req = ev.URL
	case *page.EventFrameNavigated:
		if ev.Frame != nil {
			frameNav = ev
			if ev.Frame.ParentID == "" {
				nav = ev.Frame.URL + ev.Frame.URLFragment
			}
		}
	case *page.EventFrameStoppedLoading:
		frameLoaded = ev.FrameID
	case *page.EventLifecycleEvent:
		if ev.Name == "networkIdle" {
			frameIdle = ev
		}
	case *target.EventAttachedToTarget:
		// An out-of-process frame or worker: what it fetches and logs goes
		// to a session of its own, which this record does not see. Say
		// so, rather than report a partial record as complete.
		if info := ev.TargetInfo; info != nil && info.Type != "page" {
			problem = &consoleEntry{kind: "harness", text: fmt.Sprintf(
				"an out-of-process %s target at %q: what it fetches and logs is not recorded", info.Type, info.URL)}
		}
	case *page.EventNavigatedWithinDocument:
		nav = ev.URL
	case *runtime.EventConsoleAPICalled:
		if ev.Type == runtime.ConsoleAPICalledTypeError || ev.Type == runtime.ConsoleAPICalledTypeAssert {
			problem = &consoleEntry{kind: "console." + string(ev.Type), text: consoleArgs(ev.Args) + stackPlace(ev.StackTrace)}
		}
	case *runtime.EventExceptionThrown:
		problem = &consoleEntry{kind: "exception", text: exceptionText(ev.ExceptionDetails)}
	case *log.EventEntryAdded:
		if e := ev.Entry; e != nil && e.Level == log.EntryLevelError {
			text := e.Text
			if e.URL != "" && !strings.Contains(text, e.URL) {
				text += " [" + e.URL + "]"
			}
			problem = &consoleEntry{kind: "log:" + string(e.Source), text: text}
		}
	case *page.EventJavascriptDialogOpening:
		// An alert or confirm blocks the page, and with it every later
		// action: record it and dismiss it from another goroutine.
		problem = &consoleEntry{kind: "dialog", text: string(ev.Type) + ": " + ev.Message + " [" + ev.URL + "]"}
		go func() {
			ctx, cancel := context.WithTimeout(b.ctx, 5*time.Second)
			defer cancel()
			_, _ = chromedp.Call(ctx, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{Accept: false})
		}()
	default:
		return
	}
	if req == "" && nav == "" && problem == nil && frameNav == nil && frameLoaded == "" && frameIdle == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if frameNav != nil {
		b.frames[frameNav.Frame.ID] = &frameState{url: frameNav.Frame.URL, loader: frameNav.Frame.LoaderID}
	}
	if frameLoaded != "" {
		if f := b.frames[frameLoaded]; f != nil {
			f.loaded = true
		}
	}
	if frameIdle != nil {
		if f := b.frames[frameIdle.FrameID]; f != nil && f.loader == frameIdle.LoaderID {
			f.idle = true
		}
	}
	if req != "" {
		b.requests = append(b.requests, req)
	}
	if nav != "" {
		b.visited = append(b.visited, nav)
	}
	if problem != nil {
		for _, a := range b.allow {
			if a.match(*problem) {
				problem.expected = a.why
				break
			}
		}
		b.problems = append(b.problems, *problem)
	}
	close(b.changed)
	b.changed = make(chan struct{})
}

func consoleArgs(args []*runtime.RemoteObject) string {
	parts := make([]string, 0, len(args))
	for _, a := range args {
		switch {
		case a == nil:
		case a.Type == runtime.RemoteObjectTypeString:
			var s string
			if json.Unmarshal(a.Value, &s) == nil {
				parts = append(parts, s)
				continue
			}
			parts = append(parts, string(a.Value))
		case len(a.Value) > 0:
			parts = append(parts, string(a.Value))
		case a.Description != "":
			parts = append(parts, a.Description)
		case a.UnserializableValue != "":
			parts = append(parts, string(a.UnserializableValue))
		default:
			parts = append(parts, string(a.Type))
		}
	}
	return strings.Join(parts, " ")
}

func stackPlace(st *runtime.StackTrace) string {
	if st == nil || len(st.CallFrames) == 0 {
		return ""
	}
	f := st.CallFrames[0]
	return fmt.Sprintf(" [%s:%d:%d]", f.URL, f.LineNumber+1, f.ColumnNumber+1)
}

func exceptionText(d *runtime.ExceptionDetails) string {
	if d == nil {
		return "(no details)"
	}
	text := d.Text
	if d.Exception != nil && d.Exception.Description != "" {
		text += " " + d.Exception.Description
	}
	if d.URL != "" {
		text += fmt.Sprintf(" [%s:%d:%d]", d.URL, d.LineNumber+1, d.ColumnNumber+1)
	} else {
		text += stackPlace(d.StackTrace)
	}
	return text
}

// expectErrors marks the errors that match as expected (with why) until the
// returned func is called: a step that provokes them, such as a refused key
// whose 401 Chromium logs, says so rather than hiding every error.
func (b *browser) expectErrors(why string, match func(consoleEntry) bool) (done func()) {
	a := &allowance{why: why, match: match}
	b.mu.Lock()
	b.allow = append(b.allow, a)
	b.mu.Unlock()
	return func() {
		b.mu.Lock()
		defer b.mu.Unlock()
		for i, x := range b.allow {
			if x == a {
				b.allow = append(b.allow[:i], b.allow[i+1:]...)
				break
			}
		}
	}
}

// Requests returns every URL the page has asked for so far.
func (b *browser) Requests() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.requests...)
}

// Visited returns every URL the top frame has shown so far.
func (b *browser) Visited() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.visited...)
}

// ConsoleErrors returns the problems recorded so far that no step expected.
func (b *browser) ConsoleErrors() []consoleEntry {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []consoleEntry
	for _, p := range b.problems {
		if p.expected == "" {
			out = append(out, p)
		}
	}
	return out
}

// AllProblems returns every problem recorded so far, expected ones too.
func (b *browser) AllProblems() []consoleEntry {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]consoleEntry(nil), b.problems...)
}

// OffOrigin returns the requested URLs that left the server's origin;
// data:, blob: and about: URLs stay in the page and are fine.
func (b *browser) OffOrigin() []string {
	var out []string
	for _, r := range b.Requests() {
		u, err := url.Parse(r)
		if err != nil {
			out = append(out, r+" (unparsable)")
			continue
		}
		switch u.Scheme {
		case "data", "blob", "about":
			continue
		}
		if u.Scheme+"://"+u.Host != b.origin {
			out = append(out, r)
		}
	}
	return out
}

// waitRecorded waits until cond holds of what has been recorded, failing
// the test after waitTimeout.
func (b *browser) waitRecorded(what string, cond func() bool) {
	b.t.Helper()
	b.waitRecordedWithin(waitTimeout, what, cond)
}

// waitRecordedWithin is waitRecorded with a time of its own.
func (b *browser) waitRecordedWithin(within time.Duration, what string, cond func() bool) {
	b.t.Helper()
	deadline := time.After(within)
	for {
		b.mu.Lock()
		changed := b.changed
		b.mu.Unlock()
		if cond() {
			return
		}
		select {
		case <-changed:
		case <-deadline:
			b.fatalf("waited %v for %s", within, what)
		}
	}
}

// dump formats everything recorded, for a failure message.
func (b *browser) dump() string {
	var sb strings.Builder
	problems := b.AllProblems()
	fmt.Fprintf(&sb, "console errors and exceptions (%d):\n", len(problems))
	for _, p := range problems {
		fmt.Fprintf(&sb, "  %s\n", p)
	}
	requests := b.Requests()
	fmt.Fprintf(&sb, "requests (%d):\n", len(requests))
	for _, r := range requests {
		fmt.Fprintf(&sb, "  %s\n", r)
	}
	visited := b.Visited()
	fmt.Fprintf(&sb, "visited (%d):\n", len(visited))
	for _, v := range visited {
		fmt.Fprintf(&sb, "  %s\n", v)
	}
	if out := strings.TrimSpace(b.output.String()); out != "" {
		var lines []string
		for _, l := range strings.Split(out, "\n") {
			if !strings.Contains(l, "dbus") { // no system bus in a container: noise
				lines = append(lines, l)
			}
		}
		if len(lines) == 0 {
			return sb.String()
		}
		if len(lines) > 40 {
			lines = lines[len(lines)-40:]
		}
		fmt.Fprintf(&sb, "browser output (last %d lines):\n  %s\n", len(lines), strings.Join(lines, "\n  "))
	}
	return sb.String()
}

// pageState is where the page is and what it shows, for a failure message:
// the URL, the title, the visible text (or the markup when there is none).
func (b *browser) pageState() string {
	ctx, cancel := context.WithTimeout(b.ctx, 5*time.Second)
	defer cancel()
	type state struct {
		URL, Title, Text, HTML string
		Busy                   *string
	}
	st, err := chromedp.Run(ctx, chromedp.Evaluate[state](`(() => {
		const main = document.querySelector("main");
		const text = document.body ? document.body.innerText : "";
		return {URL: location.href, Title: document.title, Text: text,
			HTML: text.trim() ? "" : document.documentElement.outerHTML,
			Busy: main ? main.getAttribute("aria-busy") : null};
	})()`))
	if err != nil {
		return fmt.Sprintf("(the page could not be read: %v)", err)
	}
	busy := "no <main>"
	if st.Busy != nil {
		busy = `<main aria-busy="` + *st.Busy + `">`
	}
	s := fmt.Sprintf("page %s, title %q, %s\n--- page text ---\n%s\n---", st.URL, st.Title, busy, clip(st.Text, 4000))
	if st.HTML != "" {
		s += "\n--- markup (the page shows no text) ---\n" + clip(st.HTML, 4000) + "\n---"
	}
	return s
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + fmt.Sprintf("… (%d more bytes)", len(s)-n)
}

// fatalf fails the test now, with a screenshot and what the page shows.
// The full record (console, requests) is logged when the test ends.
func (b *browser) fatalf(format string, args ...any) {
	b.t.Helper()
	b.screenshot("failure")
	b.t.Fatalf("%s%s\n%s", b.atStep(), fmt.Sprintf(format, args...), b.pageState())
}

// errorf marks the test failed and goes on, with what the page shows.
func (b *browser) errorf(format string, args ...any) {
	b.t.Helper()
	b.t.Errorf("%s%s\n%s", b.atStep(), fmt.Sprintf(format, args...), b.pageState())
}

func (b *browser) atStep() string {
	if b.at == "" {
		return ""
	}
	return "[" + b.at + "] "
}

// screenshot writes a full-page PNG named after the test, a sequence
// number and name, and logs its path. A screenshot that cannot be taken is
// logged, not fatal: it is a record, not an assertion. An iframe below the
// first screenful can come out blank: Chromium paints such frames only
// when they are scrolled to (assert on frameText, not on pictures).
func (b *browser) screenshot(name string) string {
	b.t.Helper()
	b.shots++
	name = regexp.MustCompile(`[^A-Za-z0-9_.-]+`).ReplaceAllString(name, "-")
	file := filepath.Join(b.dir, fmt.Sprintf("%s-%02d-%s.png", b.prefix, b.shots, name))
	ctx, cancel := context.WithTimeout(b.ctx, waitTimeout)
	defer cancel()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100)) // 100: PNG
	if err != nil {
		b.t.Logf("screenshot %s: %v", name, err)
		return ""
	}
	if err := os.WriteFile(file, png, 0o644); err != nil {
		b.t.Logf("screenshot %s: %v", name, err)
		return ""
	}
	b.t.Logf("screenshot: %s", file)
	return file
}

// navigate loads path (or a full URL) in the tab and waits for the load
// event.
func (b *browser) navigate(path string) {
	b.t.Helper()
	if err := b.navigateErr(path); err != nil {
		b.fatalf("navigating to %s: %v", path, err)
	}
}

func (b *browser) navigateErr(path string) error {
	target := path
	if strings.HasPrefix(path, "/") {
		target = b.s.base + path
	}
	ctx, cancel := context.WithTimeout(b.ctx, waitTimeout)
	defer cancel()
	return chromedp.Do(ctx, chromedp.Navigate(target))
}

// do runs actions under the wait deadline; what is a description for the
// failure message.
func (b *browser) do(what string, actions ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, waitTimeout)
	defer cancel()
	if err := chromedp.Do(ctx, actions...); err != nil {
		b.fatalf("%s: %v", what, err)
	}
}

// waitVisible waits until the first element matching the CSS selector is
// visible.
func (b *browser) waitVisible(sel string) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, waitTimeout)
	defer cancel()
	if err := chromedp.Do(ctx, chromedp.WaitVisible(chromedp.CSS(sel))); err != nil {
		b.fatalf("waiting %v for %s to be visible: %v", waitTimeout, sel, err)
	}
}

// waitFor waits until the JavaScript expression cond is true, checking it
// on every DOM change and animation frame in the page. It is evaluated by
// the DevTools protocol, which the page's Content-Security-Policy does not
// restrict (chromedp.Poll compiles its predicate with new Function, which
// a policy without 'unsafe-eval' refuses, logging a violation).
func (b *browser) waitFor(what, cond string) {
	b.t.Helper()
	js := `new Promise((resolve) => {
		const check = () => { try { return !!(` + cond + `); } catch (e) { return false; } };
		if (check()) { resolve(true); return; }
		const obs = new MutationObserver(() => { if (check()) { obs.disconnect(); resolve(true); } });
		obs.observe(document, {subtree: true, childList: true, attributes: true, characterData: true});
		const frame = () => { if (check()) { obs.disconnect(); resolve(true); } else { requestAnimationFrame(frame); } };
		requestAnimationFrame(frame);
	})`
	ctx, cancel := context.WithTimeout(b.ctx, waitTimeout)
	defer cancel()
	for {
		_, err := chromedp.Run(ctx, chromedp.Evaluate[bool](js, chromedp.EvalAwaitPromise))
		if err == nil {
			return
		}
		if ctx.Err() != nil {
			b.fatalf("waited %v for %s (%s)", waitTimeout, what, cond)
		}
		// A navigation destroys the context the promise lived in: wait
		// again in the new document.
		if !strings.Contains(err.Error(), "context") && !strings.Contains(err.Error(), "navigat") {
			b.fatalf("waiting for %s: %v", what, err)
		}
	}
}

// waitLoaded waits until the dashboard says the page has its data:
// <main aria-busy="false"> and, when sel is not empty, sel visible.
func (b *browser) waitLoaded(sel string) {
	b.t.Helper()
	if sel != "" {
		b.waitVisible(sel)
	}
	b.waitFor(`<main aria-busy="false">`, `document.querySelector('main[aria-busy="false"]') !== null`)
}

// clickAndWait clicks the element sel (a link of the dashboard), then
// waits until the address is path, the page has been loading since the
// click (<main aria-busy="true">, or a new <main> or document) and is done
// (<main aria-busy="false">), and ready is visible.
func (b *browser) clickAndWait(sel, path, ready string) {
	b.t.Helper()
	evalJS[int](b, `(() => {
		const st = window.__e2eNav = {loading: false};
		const before = document.querySelector("main");
		const obs = new MutationObserver(() => {
			const m = document.querySelector("main");
			if (m !== before || (m && m.getAttribute("aria-busy") === "true")) { st.loading = true; obs.disconnect(); }
		});
		obs.observe(document, {subtree: true, childList: true, attributes: true, attributeFilter: ["aria-busy"]});
		return 1;
	})()`)
	b.waitVisible(sel)
	b.do("clicking "+sel, chromedp.Click(chromedp.CSS(sel)))
	b.waitFor("the page at "+path+" to load", `location.pathname === `+jsString(path)+
		` && (!window.__e2eNav || window.__e2eNav.loading) && document.querySelector('main[aria-busy="false"]') !== null`)
	b.waitVisible(ready)
}

// step names what the test does next, in the log and in failures.
func (b *browser) step(name string) {
	b.t.Helper()
	b.at = name
	b.t.Logf("── %s", name)
}

// evalJS evaluates a JavaScript expression in the page (awaiting a
// promise) and decodes its JSON value into T.
func evalJS[T any](b *browser, js string) T {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, waitTimeout)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](js, chromedp.EvalAwaitPromise))
	if err != nil {
		b.fatalf("evaluating %s: %v", clip(js, 200), err)
	}
	return v
}

// jsString quotes s as a JavaScript string literal.
func jsString(s string) string {
	q, _ := json.Marshal(s)
	return string(q)
}

// text returns the rendered text (innerText) of the first element matching
// the CSS selector, failing the test when there is none.
func (b *browser) text(sel string) string {
	b.t.Helper()
	v := evalJS[*string](b, `(() => { const e = document.querySelector(`+jsString(sel)+`); return e ? e.innerText : null; })()`)
	if v == nil {
		b.fatalf("no element matches %s", sel)
	}
	return *v
}

// textContent returns the textContent of the first element matching the
// CSS selector, failing the test when there is none.
func (b *browser) textContent(sel string) string {
	b.t.Helper()
	v := evalJS[*string](b, `(() => { const e = document.querySelector(`+jsString(sel)+`); return e ? e.textContent : null; })()`)
	if v == nil {
		b.fatalf("no element matches %s", sel)
	}
	return *v
}

// frameText returns the rendered text of the document in the iframe that
// the CSS selector matches, once that frame has loaded a document other
// than about:blank.
func (b *browser) frameText(sel string) string {
	b.t.Helper()
	return frameEval[string](b, sel, `document.body ? document.body.innerText : ""`)
}

// frameEval evaluates a JavaScript expression in the document of the
// iframe that the CSS selector matches, once that frame has loaded a
// document other than about:blank, and decodes its JSON value into T. A
// sandboxed frame keeps the page's script out, so it is read through
// DevTools, in an isolated world of its own (which sees the frame's DOM,
// not its script).
func frameEval[T any](b *browser, sel, expr string) T {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, waitTimeout)
	defer cancel()
	id := b.frameID(sel)
	b.waitFrame(sel, id, "load its document", func(f *frameState) bool { return f.loaded })
	world, err := chromedp.Call(ctx, page.CreateIsolatedWorld, page.CreateIsolatedWorldParams{FrameID: id, WorldName: "e2e"})
	if err != nil {
		b.fatalf("reading the frame %s: %v", sel, err)
	}
	r, err := chromedp.Call(ctx, runtime.Evaluate, runtime.EvaluateParams{
		Expression: expr, ContextID: world.ExecutionContextID, ReturnByValue: new(true)})
	if err != nil || r.ExceptionDetails != nil || r.Result == nil {
		b.fatalf("evaluating %s in the frame %s: %v %v", clip(expr, 200), sel, err, exceptionText(r.ExceptionDetails))
	}
	var v T
	if err := json.Unmarshal(r.Result.Value, &v); err != nil {
		b.fatalf("evaluating %s in the frame %s: %s: %v", clip(expr, 200), sel, r.Result.Value, err)
	}
	return v
}

// frameID is the frame of the iframe that the CSS selector matches.
func (b *browser) frameID(sel string) cdp.FrameID {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, waitTimeout)
	defer cancel()
	nodes, err := chromedp.Run(ctx, chromedp.Nodes(chromedp.CSS(sel)))
	if err != nil || len(nodes) == 0 {
		b.fatalf("finding the iframe %s: %v", sel, err)
	}
	res, err := chromedp.Call(ctx, dom.DescribeNode, dom.DescribeNodeParams{NodeID: nodes[0].NodeID})
	if err != nil || res.Node == nil || res.Node.FrameID == "" {
		b.fatalf("%s is not a frame: %v", sel, err)
	}
	return res.Node.FrameID
}

// waitFrame waits until frame id (of the iframe sel) shows a document
// other than about:blank of which cond holds.
func (b *browser) waitFrame(sel string, id cdp.FrameID, what string, cond func(*frameState) bool) {
	b.t.Helper()
	b.waitRecorded("the frame "+sel+" to "+what, func() bool {
		b.mu.Lock()
		defer b.mu.Unlock()
		f := b.frames[id]
		return f != nil && f.url != "" && f.url != "about:blank" && cond(f)
	})
}

// waitFrameIdle waits until the document in the iframe sel has loaded
// and gone network-idle (Chromium's networkIdle: nothing of the frame in
// flight for 500 ms): whatever the document fetches by itself, during its
// load or after it (a prefetch), has then been asked for and recorded, so
// that a check that it asked for nothing more is not made too early.
func (b *browser) waitFrameIdle(sel string) {
	b.t.Helper()
	b.waitFrame(sel, b.frameID(sel), "go network-idle", func(f *frameState) bool { return f.loaded && f.idle })
}

// waitPageClock waits until d has passed on the page's own clock: a timer
// set in the page now for d has fired, and the request it then makes is
// recorded. A timer the page set earlier, for no longer, has fired by
// then (a page's timers run in the order they are due), and what it asked
// for is recorded ahead of that request (the record keeps the page's
// order): a check that the page did nothing in that time is then not made
// too early, however slow the machine.
func (b *browser) waitPageClock(d time.Duration) {
	b.t.Helper()
	b.clocks++
	marker := fmt.Sprintf("%s/assets/icon.svg?e2e-clock=%d", b.s.base, b.clocks)
	evalJS[int](b, fmt.Sprintf(`(setTimeout(() => fetch(%s, {cache: "no-store"}), %d), 1)`, jsString(marker), d.Milliseconds()))
	b.waitRecordedWithin(d+waitTimeout, fmt.Sprintf("%v to pass on the page's clock", d), func() bool {
		return slices.Contains(b.Requests(), marker)
	})
}

// count returns how many elements match the CSS selector.
func (b *browser) count(sel string) int {
	b.t.Helper()
	return evalJS[int](b, `document.querySelectorAll(`+jsString(sel)+`).length`)
}

// setViewport sets the tab's viewport; mobile also makes it a phone's
// (mobile meta viewport, overlay scrollbars) with touch.
func (b *browser) setViewport(width, height int64, mobile bool) {
	b.t.Helper()
	var opts []chromedp.EmulateViewportOption
	if mobile {
		opts = append(opts, chromedp.EmulateMobile, chromedp.EmulateTouch, chromedp.EmulatePortrait)
	}
	b.do(fmt.Sprintf("setting the viewport to %dx%d", width, height), chromedp.EmulateViewport(width, height, opts...))
}

// sideways says how the page fails a phone viewport width pixels wide, or
// "" when it fits: document.documentElement.scrollWidth <= innerWidth, and
// innerWidth is the phone's width. The second matters: a page without
// <meta name="viewport" content="width=device-width"> is laid out 980
// pixels wide and shrunk, and on a mobile viewport Chromium widens the
// layout to content that sticks out rather than let it scroll, so the
// first comparison alone would pass.
func (b *browser) sideways(width int) string {
	b.t.Helper()
	type widths struct {
		ScrollWidth, InnerWidth int
		Viewport                *string
		Wide                    []string
	}
	w := evalJS[widths](b, `((width) => {
		const out = [];
		for (const el of document.querySelectorAll("body *")) {
			const r = el.getBoundingClientRect();
			if (r.right > width + 0.5 && out.length < 20) {
				let d = el.tagName.toLowerCase();
				if (el.id) d += "#" + el.id;
				for (const c of Array.from(el.classList).slice(0, 3)) d += "." + c;
				out.push(d + " (left " + Math.round(r.left) + ", right " + Math.round(r.right) + ")");
			}
		}
		const meta = document.querySelector('meta[name="viewport"]');
		return {ScrollWidth: document.documentElement.scrollWidth, InnerWidth: window.innerWidth,
			Viewport: meta ? meta.getAttribute("content") : null, Wide: out};
	})(`+fmt.Sprint(width)+`)`)
	if w.InnerWidth == width && w.ScrollWidth <= w.InnerWidth {
		return ""
	}
	vp := "no viewport meta element"
	if w.Viewport != nil {
		vp = fmt.Sprintf("viewport meta %q", *w.Viewport)
	}
	return fmt.Sprintf("at a %d-pixel-wide phone viewport, window.innerWidth is %d and document.documentElement.scrollWidth %d (%s); elements reaching past %d pixels:\n  %s",
		width, w.InnerWidth, w.ScrollWidth, vp, width, strings.Join(w.Wide, "\n  "))
}
