package http

import (
	"net/http"

	"github.com/mailroom/mailroom"
)

// notYet answers a route whose translation is not written yet.
func notYet(w http.ResponseWriter, r *http.Request) {
	writeError(w, r, mailroom.Errorf(mailroom.ECodeNotFound, "No route %s %s yet.", r.Method, r.URL.Path))
}
