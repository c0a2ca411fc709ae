package http

import (
	"io"
	"net/http"
	"time"
)

// closeAfterAnswer ends an HTTP/1.x connection after this answer, for a
// request whose body will not be read: otherwise net/http would first read
// (and discard) what remains of it, up to the whole body of a slow or
// silent client, before the connection could serve another request.
//
// HTTP/2 must not be told: "Connection" means nothing there (RFC 9113
// §8.2.2), and Go's server reads "Connection: close" as a graceful
// shutdown of the whole connection, which clients such as curl see close
// before the answer's body arrives.
func closeAfterAnswer(w http.ResponseWriter, r *http.Request) {
	if r.ProtoMajor == 1 {
		w.Header().Set("Connection", "close")
	}
}

// An HTTP/2 answer given before the request's body was read lingers for
// at most this long, or this many bytes of the body, whichever ends first.
// A 413 lingers long enough for a body just over the limit; a 429, which
// must cost almost nothing, only for the small bodies most requests have.
type linger struct {
	time  time.Duration
	bytes int64
}

var (
	lingerTooLarge    = linger{time.Second, 32 << 20}
	lingerRateLimited = linger{250 * time.Millisecond, 256 << 10}
)

// readAfterAnswer lets an HTTP/1.x handler read the request body after
// its answer is written (net/http refuses that by default), for
// lingerAfterAnswer. It must be called before the answer is written.
func readAfterAnswer(w http.ResponseWriter, r *http.Request) {
	if r.ProtoMajor == 1 {
		_ = http.NewResponseController(w).EnableFullDuplex()
	}
}

// lingerAfterAnswer keeps reading, and discarding, the body that the
// answer just written refused, for a bounded time and number of bytes,
// before the handler returns.
//
// Returning with the body unread ends the upload abruptly: over HTTP/2 the
// server resets the stream (RST_STREAM NO_ERROR) just after the answer, as
// RFC 9113 §8.1 allows, and over HTTP/1.1 it closes the connection with
// body bytes still arriving, so that TCP resets it. Clients still uploading
// may then lose the answer: curl 7.88 drops it about one time in four over
// HTTP/2 ("transfer closed"), and one time in seven over HTTP/1.1 for an
// endless chunked body ("Connection reset by peer"). Reading what follows
// lets the exchange end in order; the bounds keep what an endless body
// costs to l.time of a goroutine.
func lingerAfterAnswer(w http.ResponseWriter, r *http.Request, l linger) {
	if r.Body == nil || r.Body == http.NoBody {
		return
	}
	rc := http.NewResponseController(w)
	_ = rc.Flush() // the answer goes out now, not after the linger
	_ = rc.SetReadDeadline(time.Now().Add(l.time))
	_, _ = io.CopyN(io.Discard, r.Body, l.bytes)
}
