package resend

import (
	"bytes"
	"encoding/base64"
	"errors"
	"runtime"
	"strings"
	"testing"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/mailroom/mailroom"
)

func decodeEmail(t *testing.T, body string) (*Email, error) {
	t.Helper()
	var e Email
	err := json.Unmarshal([]byte(body), &e, json.RejectUnknownMembers(false))
	return &e, err
}

// Each form the SDKs send decodes to the same bytes.
func TestContentForms(t *testing.T) {
	want := []byte{0, 1, 127, 128, 255, 'h', 'i'}
	for name, content := range map[string]string{
		"base64 (Node ≥ 6.37)":     `"` + base64.StdEncoding.EncodeToString(want) + `"`,
		"byte values (Go, Python)": `[0, 1, 127, 128, 255, 104, 105]`,
		"Node Buffer":              `{"type": "Buffer", "data": [0,1,127,128,255,104,105]}`,
		"Node Buffer, data first":  `{"data": [0,1,127,128,255,104,105], "type": "Buffer"}`,
	} {
		e, err := decodeEmail(t, `{"attachments": [{"filename": "a.bin", "content": `+content+`}]}`)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		got, err := base64.StdEncoding.DecodeString(e.Attachments[0].Content.AsBase64())
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s: content %v (%v), want %v", name, got, err, want)
		}
		if !e.Attachments[0].Content.Given {
			t.Errorf("%s: content not seen as given", name)
		}
	}
	for _, absent := range []string{`null`, `""`} {
		e, err := decodeEmail(t, `{"attachments": [{"filename": "a.bin", "content": `+absent+`, "path": "https://x.example/a"}]}`)
		if err != nil || e.Attachments[0].Content.Given {
			t.Errorf("content %s: %v, given %v; want absent", absent, err, e.Attachments[0].Content.Given)
		}
	}
}

// A content in no form, or a byte value out of range, is an invalid
// attachment naming the attachment and the byte.
func TestContentRefused(t *testing.T) {
	for content, want := range map[string]string{
		`[1, 256]`:                         "content[1] is not a byte value",
		`[1, -1]`:                          "content[1] is not a byte value",
		`[1.5]`:                            "content[0] is not a byte value",
		`[1e2]`:                            "content[0] is not a byte value",
		`[007]`:                            "not valid JSON",
		`["a"]`:                            "content[0] is not a byte value",
		`[[1]]`:                            "content[0] is not a byte value",
		`12`:                               "content is a number",
		`true`:                             "content is a boolean",
		`{"type": "Blob", "data": [1]}`:    "not Node's Buffer",
		`{"type": "Buffer", "data": "AA"}`: `"data" is not an array`,
		`{"type": "Buffer"}`:               "not Node's Buffer",
	} {
		_, err := decodeEmail(t, `{"attachments": [{"filename": "ok.txt", "content": "QQ=="}, {"filename": "a.bin", "content": `+content+`}]}`)
		e, ok := asError(err)
		if want == "not valid JSON" {
			if err == nil || ok {
				t.Errorf("%s: %v, want a JSON error", content, err)
			}
			continue
		}
		if !ok || e.Code != mailroom.ECodeValidation || e.Details[0].Field != "attachments" || e.Details[0].Index == nil || *e.Details[0].Index != 1 ||
			!strings.Contains(e.Details[0].Message, want) {
			t.Errorf("%s: %#v, want attachments[1] %q", content, err, want)
		}
	}
}

// A byte array stops at the first byte past the attachment limit, and one
// that fits costs the order of its body, not eight bytes a value.
func TestContentByteArrayBounded(t *testing.T) {
	over := `{"attachments": [{"filename": "a.bin", "content": [` + strings.Repeat("0,", mailroom.MaxAttachmentBytes) + `0]}]}`
	_, err := decodeEmail(t, over)
	if e, ok := asError(err); !ok || !strings.Contains(e.Details[0].Message, "more than 10485760 bytes") || *e.Details[0].Index != 0 {
		t.Fatalf("an array past the limit: %v", err)
	}

	// 16 MiB of "255," is 4 Mi bytes.
	body := `{"attachments": [{"filename": "a.bin", "content": [` + strings.Repeat("255,", 4<<20-1) + `255]}]}`
	raw := []byte(body)
	var e Email
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	// As the HTTP layer reads a body.
	err = json.UnmarshalDecode(jsontext.NewDecoder(bytes.NewBuffer(raw)), &e, json.RejectUnknownMembers(false))
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(e.Attachments[0].Content.Bytes); n != 4<<20 {
		t.Fatalf("decoded %d bytes, want %d", n, 4<<20)
	}
	// The bytes (4 MiB, grown by doubling, 8 MiB allocated on the way): the
	// order of the body. A []int would be 32 MiB, a []any far more.
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 3*4<<20 {
		t.Errorf("decoding a %d-byte body allocated %d bytes", len(body), alloc)
	}
}

// The attachments together stop decoding past the limit.
func TestAttachmentsTogetherBounded(t *testing.T) {
	half := base64.StdEncoding.EncodeToString(make([]byte, mailroom.MaxAttachmentBytes/2+1))
	_, err := decodeEmail(t, `{"attachments": [{"filename": "a", "content": "`+half+`"}, {"filename": "b", "content": "`+half+`"}]}`)
	if e, ok := asError(err); !ok || e.Details[0].Field != "attachments" || !strings.Contains(e.Details[0].Message, "add up to more than") {
		t.Fatalf("%v", err)
	}
	many := `{"attachments": [` + strings.Repeat(`{"filename": "a", "content": "QQ=="},`, mailroom.MaxAttachments) + `{}]}`
	if _, err := decodeEmail(t, many); err == nil || !strings.Contains(err.Error(), "more than 100 attachments") {
		t.Fatalf("%d attachments: %v", mailroom.MaxAttachments+1, err)
	}
}

// asError finds the validation error a decoder returned, as the HTTP
// layer does (the JSON package wraps it).
func asError(err error) (*mailroom.Error, bool) {
	var e *mailroom.Error
	return e, errors.As(err, &e)
}
