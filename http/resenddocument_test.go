package http_test

import (
	"testing"

	"github.com/mailroom/mailroom/storetest"
)

// Answers on Resend's side of the listener that no operation of the
// OpenAPI document describes (an unknown path, a method a route lacks)
// are Resend's error body, and a path an SDK doubled the slash of is the
// route's: resendDo checks each against the document.
func TestResendAnswersOutsideTheOperationsAreDocumented(t *testing.T) {
	e := newEnv(t, storetest.SQLite)
	wantResendError(t, e.resendDo("GET", "/nope", e.admin, nil), 404, "not_found")
	wantResendError(t, e.resendDo("PUT", "/emails", e.admin, map[string]any{}), 405, "method_not_allowed")
	wantResendError(t, e.resendDo("DELETE", "/domains/x/verify", e.admin, nil), 405, "method_not_allowed")
	if r := e.resendDo("GET", "//domains", e.admin, nil); r.Status != 200 {
		t.Fatalf("GET //domains: %d %s", r.Status, r.Body)
	}
}
