// Package dashboard serves the web dashboard (docs/api.md "Dashboard"):
// plain ES modules, a stylesheet and one HTML shell, embedded in the binary
// so that it works offline and needs no build step. The dashboard is a
// client of the public API: it holds the user's key in the tab's
// sessionStorage and sends it as the bearer header, so the server keeps no
// session and sets no cookie.
package dashboard

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/base64"
	"io/fs"
	"mime"
	"net/http"
	"path"
	"strings"
	"time"
)

//go:embed static
var static embed.FS

// ContentSecurityPolicy is sent with every page and asset. Scripts come only
// from this origin, never inline (so an escaped-wrong string can never run);
// the API is the only place data is fetched from; no page may frame the
// dashboard (clickjacking). Two relaxations serve the message preview, an
// iframe whose srcdoc inherits this policy (CSP3 §4.2.2, policy
// containers): inline styles, which mail needs to look like mail, and
// https images, which the preview's own stricter policy still blocks until
// the user asks for them.
const ContentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; " +
	"img-src 'self' data: https:; connect-src 'self'; font-src 'self'; frame-src 'self'; " +
	"base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

// asset is one embedded file, ready to serve.
type asset struct {
	body        []byte
	contentType string
	etag        string
}

// Handler serves the dashboard: files under /assets/, and the HTML shell
// for every page the dashboard routes itself (/, /messages, /domains/…).
// Any other path gets the shell too, with status 404, so that a mistyped
// address shows the dashboard's own "not found" page.
type Handler struct {
	assets map[string]asset // by URL path, "/assets/app.js"
	shell  asset
}

// New reads the embedded files once.
func New() *Handler {
	h := &Handler{assets: map[string]asset{}}
	root, err := fs.Sub(static, "static")
	if err != nil {
		panic(err)
	}
	err = fs.WalkDir(root, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		body, err := fs.ReadFile(root, p)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(body)
		ct := mime.TypeByExtension(path.Ext(p))
		if strings.HasSuffix(p, ".js") {
			ct = "text/javascript; charset=utf-8" // RFC 9239
		}
		a := asset{body: body, contentType: ct, etag: `"` + base64.RawURLEncoding.EncodeToString(sum[:12]) + `"`}
		if p == "index.html" {
			h.shell = a
		} else {
			h.assets["/"+p] = a
		}
		return nil
	})
	if err != nil {
		panic(err)
	}
	return h
}

// pages are the first path segments the dashboard routes in the browser.
var pages = map[string]bool{
	"": true, "messages": true, "domains": true, "templates": true,
	"webhooks": true, "suppressions": true, "api-keys": true, "audit-log": true,
	"received": true,
}

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	setSecurityHeaders(w.Header())
	if a, ok := h.assets[r.URL.Path]; ok {
		serve(w, r, a, http.StatusOK)
		return
	}
	first, _, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/")
	status := http.StatusOK
	if !pages[first] {
		status = http.StatusNotFound
	}
	serve(w, r, h.shell, status)
}

// serve writes a, or 304 when the browser's copy is current (ServeContent
// compares If-None-Match with the ETag). Assets are revalidated on each load
// (no-cache) rather than cached for a time: file names carry no version, and
// a new binary must never run with old modules.
func serve(w http.ResponseWriter, r *http.Request, a asset, status int) {
	hd := w.Header()
	hd.Set("Content-Type", a.contentType)
	hd.Set("Cache-Control", "no-cache")
	hd.Set("ETag", a.etag)
	if status == http.StatusOK {
		http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(a.body))
		return
	}
	w.WriteHeader(status)
	if r.Method != http.MethodHead {
		_, _ = w.Write(a.body)
	}
}

func setSecurityHeaders(hd http.Header) {
	hd.Set("Content-Security-Policy", ContentSecurityPolicy)
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Set("X-Frame-Options", "DENY")
	hd.Set("Referrer-Policy", "no-referrer")
	hd.Set("Cross-Origin-Opener-Policy", "same-origin")
	hd.Set("Cross-Origin-Resource-Policy", "same-origin")
	hd.Set("Permissions-Policy", "camera=(), microphone=(), geolocation=()")
}
