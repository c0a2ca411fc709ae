package http

import (
	"net/http"
	"net/netip"

	"github.com/mailroom/mailroom/tracking"
)

// Engagement tracking (docs/api.md "Engagement tracking"): GET|HEAD
// /t/o/{token}, the open pixel, and GET|HEAD /t/c/{token}, a link's click
// address. No key: the sealed token is the credential, and it holds what
// the answer needs, so that both work long after the message left the
// log. The service rate-limits recording per client network; the answers
// themselves are never refused, since a refused pixel or link is broken
// mail for a reader who did nothing wrong.

// transparentGIF is a 1×1 transparent GIF89a, 43 bytes: a header, a
// logical screen of one pixel with a two-colour table, a Graphic Control
// Extension marking colour 0 transparent, and one image of that pixel.
var transparentGIF = []byte("GIF89a\x01\x00\x01\x00\x80\x00\x00\x00\x00\x00\xff\xff\xff" +
	"!\xf9\x04\x01\x00\x00\x00\x00" +
	",\x00\x00\x00\x00\x01\x00\x01\x00\x00\x02\x02D\x01\x00;")

// getTrackedOpen: GET /t/o/{token} records an open (when the token opens
// and the client's network is within its limit) and answers the pixel:
// always 200, whatever the token, so that a mail never shows a broken
// image. It is not to be cached anywhere, so that each showing of the
// mail asks again (a private cache would hide later opens; a shared one
// would mix readers).
func (s *Server) getTrackedOpen(w http.ResponseWriter, r *http.Request) {
	if s.Tracking != nil {
		s.Tracking.Open(r.Context(), r.PathValue("token"), trackingRequest(r))
	}
	h := w.Header()
	h.Set("Content-Type", "image/gif")
	h.Set("Cache-Control", "no-cache, no-store, must-revalidate, private")
	h.Set("Pragma", "no-cache")
	h.Set("Expires", "0")
	// A webmail page on another origin shows the pixel: same-origin
	// (setSecurityHeaders) would have the browser block it (Fetch
	// §3.8, CORP on no-cors requests).
	h.Set("Cross-Origin-Resource-Policy", "cross-origin")
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		_, _ = w.Write(transparentGIF)
	}
}

// getTrackedClick: GET /t/c/{token} records a click and answers 302 to
// the link's original address, exactly as the message had it. The
// address comes from the sealed token alone, so no one can make this
// route redirect elsewhere: a token that does not open is a small HTML
// 404, never a redirect. The redirect is not cached (each click counts)
// and sends no Referer, which would carry the token to the destination.
func (s *Server) getTrackedClick(w http.ResponseWriter, r *http.Request) {
	if s.Tracking == nil {
		writePage(w, http.StatusNotFound, invalidLinkPage, "")
		return
	}
	url, err := s.Tracking.Click(r.Context(), r.PathValue("token"), trackingRequest(r))
	if err != nil {
		writePage(w, http.StatusNotFound, invalidLinkPage, "")
		return
	}
	h := w.Header()
	h.Set("Location", url)
	h.Set("Cache-Control", "no-store")
	h.Set("Referrer-Policy", "no-referrer")
	w.WriteHeader(http.StatusFound)
}

// trackingRequest is what the tracking service reads of r: the client is
// the connection's peer, whatever forwarding header the request carries.
func trackingRequest(r *http.Request) tracking.Request {
	client, _ := netip.ParseAddrPort(r.RemoteAddr)
	return tracking.Request{Method: r.Method, Header: r.Header, Client: client.Addr()}
}

var invalidLinkPage = newPage(`{{define "title"}}Link not valid{{end}}` +
	`<h1>This link is not valid</h1>` +
	`<p>It may have been cut short or altered. Open it again from the email.</p>`)
