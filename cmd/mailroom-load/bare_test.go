package main

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mailroom/mailroom/client/api"
)

// TestBareSend checks that the reference answers the load's send as
// Mailroom does, and refuses what any handler refuses before storage: a
// reference that skipped these checks would be cheaper than any real
// handler, and the ratio would understate Mailroom.
func TestBareSend(t *testing.T) {
	body := `{"from":"load@mailroom.test","to":"user1@example.net","subject":"s","html":"<p>x</p>","tags":{"run":"load"}}`
	for _, tc := range []struct {
		name, auth, body string
		want             int
	}{
		{"send", "Bearer any", body, http.StatusOK},
		{"no key", "", body, http.StatusUnauthorized},
		{"not JSON", "Bearer any", "{", http.StatusBadRequest},
		{"no recipient", "Bearer any", `{"from":"load@mailroom.test"}`, http.StatusBadRequest},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := httptest.NewRequest("POST", "/v1/send", strings.NewReader(tc.body))
			if tc.auth != "" {
				req.Header.Set("Authorization", tc.auth)
			}
			rec := httptest.NewRecorder()
			bareSend(rec, req)
			if rec.Code != tc.want {
				t.Fatalf("status %d, want %d: %s", rec.Code, tc.want, rec.Body)
			}
			if tc.want != http.StatusOK {
				return
			}
			var res api.SendResult
			if err := json.Unmarshal(rec.Body.Bytes(), &res); err != nil || res.Status != api.SendQueued || !strings.HasPrefix(res.MessageID, "msg_") {
				t.Fatalf("answer %s (%v), want queued with a msg_ id", rec.Body, err)
			}
		})
	}
}
