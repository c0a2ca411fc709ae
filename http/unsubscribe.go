package http

import (
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"html/template"
	"io"
	"mime"
	"net/http"
	"strings"

	"github.com/mailroom/mailroom"
	"github.com/mailroom/mailroom/client/api"
)

// One-click unsubscribe (docs/api.md "Mail coming back", RFC 8058):
// GET|POST /v1/unsubscribe/{token}, without an API key: the token, an HMAC
// the service made for one address, is the credential. Nothing is rate
// limited here: a token that does not verify costs an HMAC and no storage,
// and one that does costs one idempotent write.

// maxUnsubscribeBody bounds a POST's body, which the service does not
// need: RFC 8058 §3.2's is "List-Unsubscribe=One-Click", form-encoded.
const maxUnsubscribeBody = 64 << 10

// postUnsubscribe: POST /v1/unsubscribe/{token} suppresses the token's
// address for the account's marketing mail (reason unsubscribe) and
// answers 200, every time: a second POST changes nothing. Any body is
// taken, up to maxUnsubscribeBody, and ignored. A browser (which asks for
// text/html: the confirmation page's form) gets a page; anything else a
// small JSON body. A token that does not verify is the JSON 404.
func (s *Server) postUnsubscribe(w http.ResponseWriter, r *http.Request) {
	r, release := withBudget(r, s.storageBudget())
	defer release()
	if err := discardBody(r); err != nil {
		writeError(w, r, err)
		return
	}
	if s.Unsubscribes == nil {
		writeError(w, r, mailroom.Errorf(mailroom.ECodeNotFound, "No route %s %s.", r.Method, r.URL.Path))
		return
	}
	u, err := s.Unsubscribes.Unsubscribe(r.Context(), r.PathValue("token"))
	if err != nil {
		writeError(w, r, err)
		return
	}
	if wantsHTML(r) {
		writePage(w, http.StatusOK, donePage, u.Address)
		return
	}
	writeJSON(w, http.StatusOK, api.Unsubscribed{Status: "unsubscribed", Address: u.Address})
}

// getUnsubscribe: GET /v1/unsubscribe/{token} shows a page that asks to
// confirm, with a button that POSTs to the same URL. It never unsubscribes
// by itself: link scanners and previews follow GETs (RFC 8058 §4). It reads
// no storage. A token that does not verify is a small HTML 404.
func (s *Server) getUnsubscribe(w http.ResponseWriter, r *http.Request) {
	if s.Unsubscribes == nil {
		writePage(w, http.StatusNotFound, invalidPage, "")
		return
	}
	u, err := s.Unsubscribes.Check(r.PathValue("token"))
	if err != nil {
		writePage(w, http.StatusNotFound, invalidPage, "")
		return
	}
	writePage(w, http.StatusOK, confirmPage, u.Address)
}

// discardBody reads a POST's body up to maxUnsubscribeBody, as a server
// must to keep an HTTP/1.1 connection, and refuses a larger one.
func discardBody(r *http.Request) error {
	tooLarge := mailroom.Errorf(mailroom.ECodePayloadTooLarge, "An unsubscribe request's body is at most 64 KiB; none is needed.")
	if r.ContentLength > maxUnsubscribeBody {
		return tooLarge
	}
	resume := pauseBudget(r)
	defer resume()
	_, err := io.Copy(io.Discard, http.MaxBytesReader(nil, r.Body, maxUnsubscribeBody))
	var maxErr *http.MaxBytesError
	switch {
	case errors.As(err, &maxErr):
		return tooLarge
	case err != nil:
		return mailroom.Errorf(mailroom.ECodeInvalidJSON, "The request body could not be read.")
	}
	return nil
}

// wantsHTML says whether the client asked for an HTML answer: a browser
// submitting the confirmation page's form.
func wantsHTML(r *http.Request) bool {
	for _, v := range r.Header.Values("Accept") {
		for _, part := range strings.Split(v, ",") {
			if t, _, err := mime.ParseMediaType(strings.TrimSpace(part)); err == nil && t == "text/html" {
				return true
			}
		}
	}
	return false
}

// pageCSS is the pages' only style, inline and allowed by its hash alone.
const pageCSS = `body{font:16px/1.5 system-ui,sans-serif;margin:0;padding:2rem 1rem;color:#1a1a1a;background:#f6f6f4}` +
	`main{max-width:32rem;margin:0 auto;padding:2rem;background:#fff;border:1px solid #ddd;border-radius:8px}` +
	`h1{font-size:1.4rem;margin:0 0 1rem}strong{word-break:break-all}` +
	`button{font:inherit;padding:.6rem 1.4rem;border:0;border-radius:6px;background:#1a1a1a;color:#fff;cursor:pointer}`

// pageCSP allows nothing but that style and a form posting to this
// origin: no scripts, images, fonts, frames or other sources, and no
// framing of the page (clickjacking).
var pageCSP = "default-src 'none'; style-src 'sha256-" + func() string {
	sum := sha256.Sum256([]byte(pageCSS))
	return base64.StdEncoding.EncodeToString(sum[:])
}() + "'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"

// The pages. html/template escapes the address (the only value in them)
// for its context. The forms have no action: they post to the page's own
// URL, whatever public base and path prefix it was reached through.
var (
	pageHead = `<!doctype html><html lang="en"><head><meta charset="utf-8">` +
		`<meta name="viewport" content="width=device-width,initial-scale=1"><meta name="robots" content="noindex">` +
		`<meta name="referrer" content="no-referrer"><title>{{template "title"}}</title><style>` + pageCSS + `</style></head><body><main>`
	pageFoot = `</main></body></html>`

	confirmPage = newPage(`{{define "title"}}Unsubscribe{{end}}` +
		`<h1>Unsubscribe from marketing mail?</h1>` +
		`<p><strong>{{.}}</strong> will get no more marketing mail from this sender.</p>` +
		`<p>Mail about what you do with them, such as receipts or password resets, still reaches you.</p>` +
		`<form method="post"><input type="hidden" name="List-Unsubscribe" value="One-Click">` +
		`<button type="submit">Unsubscribe</button></form>`)
	donePage = newPage(`{{define "title"}}Unsubscribed{{end}}` +
		`<h1>You are unsubscribed</h1>` +
		`<p><strong>{{.}}</strong> will get no more marketing mail from this sender.</p>`)
	invalidPage = newPage(`{{define "title"}}Link not valid{{end}}` +
		`<h1>This unsubscribe link is not valid</h1>` +
		`<p>It may have been cut short or altered. Open it again from the email, or use the unsubscribe option your mail program shows.</p>`)
)

func newPage(body string) *template.Template {
	return template.Must(template.New("page").Parse(pageHead + body + pageFoot))
}

// writePage answers an HTML page with its own CSP, which lets its form
// post; no sniffing, no framing, no caching (the page is per address) and
// no referrer (the URL holds the token) are set on every answer already
// (setSecurityHeaders).
func writePage(w http.ResponseWriter, status int, page *template.Template, address string) {
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Content-Security-Policy", pageCSP)
	var b strings.Builder
	if err := page.Execute(&b, address); err != nil {
		// A template of constants and one string cannot fail; should it,
		// the answer is still a page, not a half-written one.
		b.Reset()
		b.WriteString("<!doctype html><title>Error</title>")
		status = http.StatusInternalServerError
	}
	w.WriteHeader(status)
	_, _ = io.WriteString(w, b.String())
}
