package http

import (
	"context"
	"net/http"
	"strings"
	"time"

	"github.com/mailroom/mailroom"
)

// requestInfo is what the request log line and the metrics need to know
// about a request, filled in as it passes the layers.
type requestInfo struct {
	requestID string
	route     string // the route pattern, not the path: ids stay out of metrics
	keyID     string
	errorCode string
	// resend is set on Resend's routes (resendroutes.go): errors are
	// written in Resend's shape (writeError).
	resend bool
}

type requestInfoKey struct{}

func requestInfoFrom(ctx context.Context) *requestInfo {
	if info, ok := ctx.Value(requestInfoKey{}).(*requestInfo); ok {
		return info
	}
	return &requestInfo{}
}

// requestID echoes the client's X-Request-Id when it is a sensible token
// (1..128 visible ASCII characters), so clients can correlate their logs
// with ours; otherwise it makes one.
func requestID(r *http.Request, now time.Time) string {
	id := r.Header.Get("X-Request-Id")
	if id != "" && len(id) <= 128 && !strings.ContainsFunc(id, func(c rune) bool { return c <= ' ' || c > '~' }) {
		return id
	}
	return mailroom.NewID("req_", now)
}
