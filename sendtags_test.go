package mailroom_test

import (
	"fmt"
	"strings"
	"testing"
)

func TestSendTagsAccepted(t *testing.T) {
	tags := map[string]string{"": ""}
	delete(tags, "")
	for i := range 9 {
		tags[fmt.Sprintf("k%d", i)] = "v"
	}
	tags[strings.Repeat("K", 64)] = strings.Repeat("ü", 256)
	m, details := validateSend(t, sendRequest(t, map[string]any{"tags": tags}), "")
	if details != nil {
		t.Fatalf("refused:%s", formatDetails(details))
	}
	if len(m.Tags) != 10 || m.Tags["k0"] != "v" {
		t.Errorf("Tags = %v", m.Tags)
	}
	m, _ = validateSend(t, sendRequest(t, map[string]any{"tags": map[string]string{"user_id": "42", "plan-type": ""}}), "")
	if m == nil || m.Tags["plan-type"] != "" || m.Tags["user_id"] != "42" {
		t.Errorf("Tags with underscore, hyphen and empty value: %v", m)
	}
}

func TestSendTagsRefused(t *testing.T) {
	eleven := map[string]string{}
	for i := range 11 {
		eleven[fmt.Sprintf("k%d", i)] = "v"
	}
	checkRefused(t, sendRequest(t, map[string]any{"tags": eleven}), "", refusal{"tags", -1, "has 11 pairs; at most 10"})

	for _, tc := range []struct {
		key, value, want string
	}{
		{"", "v", "must not be empty"},
		{strings.Repeat("k", 65), "v", "at most 64"},
		{"has space", "v", "may contain only"},
		{"dot.key", "v", "may contain only"},
		{"ключ", "v", "may contain only"},
		{"k", strings.Repeat("v", 257), "the value has 257 characters"},
		{"k", "line\nbreak", "control characters"},
		{"k", "nul\x00", "control characters"},
	} {
		t.Run(fmt.Sprintf("%q=%q", tc.key, tc.value), func(t *testing.T) {
			r := sendRequest(t, map[string]any{"tags": map[string]string{tc.key: tc.value, "ok": "fine"}})
			checkRefused(t, r, "", refusal{"tags", -1, fmt.Sprintf("%q: ", tc.key)})
			checkRefused(t, r, "", refusal{"tags", -1, tc.want})
		})
	}
}
