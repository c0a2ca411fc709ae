package main

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/mailroom/mailroom/client"
)

// Commas split addresses, except inside a quoted display name, <…> or a
// comment.
func TestSplitAddresses(t *testing.T) {
	for in, want := range map[string][]string{
		"ann@example.com":                               {"ann@example.com"},
		"ann@example.com,bob@example.com":               {"ann@example.com", "bob@example.com"},
		`"Doe, Ann" <ann@example.com>, bob@example.com`: {`"Doe, Ann" <ann@example.com>`, "bob@example.com"},
		`"A \"x, y\" B" <a@example.com>,b@example.com`:  {`"A \"x, y\" B" <a@example.com>`, "b@example.com"},
		"ann@example.com (Ann, at work), b@example.com": {"ann@example.com (Ann, at work)", "b@example.com"},
		" a@example.com , ,b@example.com ":              {"a@example.com", "b@example.com"},
	} {
		var f addressesFlag
		if err := f.Set(in); err != nil || !reflect.DeepEqual([]string(f), want) {
			t.Errorf("%q: %q, %v; want %q", in, []string(f), err, want)
		}
	}
}

func TestTagsFlag(t *testing.T) {
	var f tagsFlag
	for _, v := range []string{"kind=receipt", "order:42", "url=https://x.example/?a=b", "note:a=b"} {
		if err := f.Set(v); err != nil {
			t.Fatal(err)
		}
	}
	want := tagsFlag{"kind": "receipt", "order": "42", "url": "https://x.example/?a=b", "note": "a=b"}
	if !reflect.DeepEqual(f, want) {
		t.Errorf("%v, want %v", f, want)
	}
	for _, bad := range []string{"kind", "=x", ":x", "kind=again"} {
		if err := f.Set(bad); err == nil {
			t.Errorf("%q was taken", bad)
		}
	}
}

// Dotted names make nested objects, on top of --vars-file's.
func TestVarsFlag(t *testing.T) {
	var f varsFlag
	for _, v := range []string{"customer.name=Ann", "order.id=1042", "greeting=Hi = hello"} {
		if err := f.Set(v); err != nil {
			t.Fatal(err)
		}
	}
	old := stdin
	stdin = strings.NewReader(`{"order": {"paid": false, "total": 12.50}, "n": 12345678901234567890}`)
	t.Cleanup(func() { stdin = old })
	got, err := f.build("-")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(got)
	want := `{"customer":{"name":"Ann"},"greeting":"Hi = hello","n":12345678901234567890,"order":{"id":"1042","paid":false,"total":12.50}}`
	if string(b) != want {
		t.Errorf("%s\nwant %s", b, want)
	}
	for _, bad := range []string{"novalue", "=x", "a..b=x", ".a=x"} {
		if err := f.Set(bad); err == nil {
			t.Errorf("%q was taken", bad)
		}
	}
	var clash varsFlag
	_ = clash.Set("a=1")
	_ = clash.Set("a.b=2")
	if _, err := clash.build(""); err == nil || !strings.Contains(err.Error(), "already holds a value") {
		t.Errorf("a=1 then a.b=2: %v", err)
	}
	if v, err := (&varsFlag{}).build(""); v != nil || err != nil {
		t.Errorf("no variables: %v, %v", v, err)
	}
}

func TestParseWhen(t *testing.T) {
	now := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	for in, want := range map[string]time.Time{
		"":                          {},
		"2026-11-20T08:30:00Z":      time.Date(2026, 11, 20, 8, 30, 0, 0, time.UTC),
		"2026-11-20T08:30:00+01:00": time.Date(2026, 11, 20, 7, 30, 0, 0, time.UTC),
		"2026-11-20":                time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC),
		"90m":                       now.Add(-90 * time.Minute),
		"24h":                       now.Add(-24 * time.Hour),
		"7d":                        now.AddDate(0, 0, -7),
	} {
		got, err := parseWhen("--since", in, now)
		if err != nil || !got.Equal(want) {
			t.Errorf("%q: %v, %v; want %v", in, got, err, want)
		}
	}
	for _, bad := range []string{"yesterday", "-1h", "7 days", "2026-13-01"} {
		if _, err := parseWhen("--since", bad, now); err == nil {
			t.Errorf("%q was taken", bad)
		}
	}
}

// An API error is printed with its code first, then each detail.
func TestPrintFailure(t *testing.T) {
	one := 1
	var b bytes.Buffer
	printFailure(&b, "mailroom send", &client.Error{Status: 400, Code: "validation_error", Message: "The request is not valid.",
		RequestID: "req_1", Details: []client.ErrorDetail{{Field: "to", Index: &one, Message: "not an address"}, {Field: "subject", Message: "required"}}})
	want := "mailroom send: validation_error: The request is not valid. (request req_1)\n  to[1]: not an address\n  subject: required\n"
	if b.String() != want {
		t.Errorf("%q\nwant %q", b.String(), want)
	}
	b.Reset()
	printFailure(&b, "mailroom messages get", &client.Error{Status: 502, Message: "Bad Gateway"})
	if b.String() != "mailroom messages get: HTTP 502: Bad Gateway\n" {
		t.Errorf("%q", b.String())
	}
}

// A remote server's reply cannot move the terminal's cursor or break the
// table.
func TestClean(t *testing.T) {
	if got := clean("a\tb\x1b[2Jc\r\nd"); got != "a b [2Jc  d" {
		t.Errorf("%q", got)
	}
	if got := shorten("ééééé", 4); got != "ééé…" {
		t.Errorf("%q", got)
	}
}
