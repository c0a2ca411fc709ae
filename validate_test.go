package mailroom_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/mailroom/mailroom"
)

// A request with more problems than MaxDetails lists 99 of them and a
// last entry counting the rest (docs/api.md "Limits").
func TestValidationDetailsAreCapped(t *testing.T) {
	// 100 attachments with 3 problems each: 300 problems, decodable.
	bad := make([]map[string]string, 100)
	for i := range bad {
		bad[i] = map[string]string{"filename": "", "content": "!", "contentType": "nonsense"}
	}
	r := sendRequest(t, map[string]any{"attachments": bad})
	_, details := validateSend(t, r, "")
	if len(details) != mailroom.MaxDetails {
		t.Fatalf("%d details, want %d", len(details), mailroom.MaxDetails)
	}
	last := details[len(details)-1]
	if want := fmt.Sprintf("and %d more problems were found", 300-99); !strings.Contains(last.Message, want) || last.Index != nil {
		t.Errorf("last detail %+v, want one saying %q", last, want)
	}
	for _, d := range details[:len(details)-1] {
		if d.Field != "attachments" || d.Index == nil {
			t.Fatalf("detail %+v: want one of the attachments' problems", d)
		}
	}
	_, err := r.Validate(sendNow, nil, nil)
	if e := err.(*mailroom.Error); !strings.Contains(e.Message, "(and 299 more)") {
		t.Errorf("Message = %q, want it to count every problem", e.Message)
	}
}

// Exactly MaxDetails problems are all listed, without a summary.
func TestValidationDetailsAtTheCap(t *testing.T) {
	bad := make([]map[string]string, 50)
	for i := range bad {
		bad[i] = map[string]string{"filename": "", "content": "!"}
	}
	r := sendRequest(t, map[string]any{"attachments": bad})
	_, details := validateSend(t, r, "")
	if len(details) != 100 || strings.Contains(details[99].Message, "more problems") {
		t.Fatalf("%d details, last %+v; want the 100 problems themselves", len(details), details[len(details)-1])
	}
}
