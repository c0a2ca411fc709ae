package http

import (
	"mime"
	"net/http"
	"strings"
	"unicode"
)

// downloadCSP is the Content-Security-Policy of an attachment of received
// mail: whatever a stranger attached (an HTML page, an SVG with script)
// runs nothing and loads nothing even if a browser were made to render
// it, since sandbox (CSP 3 §6.3.2) puts it in an opaque origin without
// scripts, forms or popups.
const downloadCSP = "sandbox; default-src 'none'; frame-ancestors 'none'"

// setDownloadHeaders sets the header fields of an attachment served as a
// download: its own content type (application/octet-stream when the
// sender's does not parse), Content-Disposition: attachment with its
// filename (RFC 6266 §4), nosniff so that no browser guesses HTML into
// it, and the sandbox policy above, so that an HTML attachment is never a
// page of the service's origin.
func setDownloadHeaders(h http.Header, contentType, filename string) {
	h.Set("Content-Type", downloadContentType(contentType))
	h.Set("Content-Disposition", attachmentDisposition(filename))
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Content-Security-Policy", downloadCSP)
}

// downloadContentType re-forms the sender's content type from its parsed
// media type and charset alone, so that nothing else of what a stranger
// wrote reaches the header.
func downloadContentType(ct string) string {
	mt, params, err := mime.ParseMediaType(ct)
	if err != nil || !strings.Contains(mt, "/") {
		return "application/octet-stream"
	}
	keep := map[string]string{}
	if cs := params["charset"]; cs != "" {
		keep["charset"] = cs
	}
	if out := mime.FormatMediaType(mt, keep); out != "" {
		return out
	}
	return "application/octet-stream"
}

// attachmentDisposition is "attachment" with the filename twice (RFC 6266
// §4.3, appendix D): filename*, the name in UTF-8 percent-encoded (RFC
// 8187 §3.2), which current browsers take, and before it filename, an
// ASCII stand-in for those that do not. Path separators and control
// characters are left out of both: the name is a stranger's.
func attachmentDisposition(filename string) string {
	name := strings.Map(func(r rune) rune {
		switch {
		case r == '/' || r == '\\':
			return '_'
		case unicode.IsControl(r) || unicode.Is(unicode.Cf, r):
			return -1
		}
		return r
	}, strings.ToValidUTF8(filename, "\uFFFD"))
	name = strings.TrimSpace(name)
	if name == "" || name == "." || name == ".." {
		name = "attachment"
	}
	var ascii, ext strings.Builder
	for _, r := range name {
		if r >= 0x20 && r < 0x7f && r != '"' && r != '%' {
			ascii.WriteRune(r)
		} else {
			ascii.WriteByte('_')
		}
	}
	for _, b := range []byte(name) {
		if isAttrChar(b) {
			ext.WriteByte(b)
		} else {
			ext.WriteString("%" + strings.ToUpper(string("0123456789abcdef"[b>>4])+string("0123456789abcdef"[b&15])))
		}
	}
	return `attachment; filename="` + ascii.String() + `"; filename*=UTF-8''` + ext.String()
}

// isAttrChar is RFC 8187 §3.2.1's attr-char: what a value may hold
// without percent-encoding.
func isAttrChar(b byte) bool {
	return 'a' <= b && b <= 'z' || 'A' <= b && b <= 'Z' || '0' <= b && b <= '9' || strings.IndexByte("!#$&+-.^_`|~", b) >= 0
}
