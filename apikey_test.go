package mailroom

import (
	"strings"
	"testing"
)

func TestValidateKeyName(t *testing.T) {
	for _, c := range []struct {
		name string
		ok   bool
	}{
		{"billing worker", true},
		{"Clé de prod ✉", true},
		{"", false},
		{"   ", false},
		{strings.Repeat("x", 129), false},
		{"tab\there", false},
		{"del\x7f", false},
		{"c1\u0085next line", false},
		{"bad\xffutf8", false},
		{"admin\u202egpj.exe", false}, // right-to-left override
		{"\u202aembed", false},
		{"\u202cpop", false},
		{"\u2066isolate\u2069", false},
		{"\u2067rli", false},
		{"mark\u200e", false},
		{"mark\u200f", false},
		{"zero\u200bwidth", false},
		{"bom\ufeff", false},
		{"line\u2028sep", false},
	} {
		var v Validator
		ValidateKeyName(&v, "name", c.name)
		err := v.Err()
		if (err == nil) != c.ok {
			t.Errorf("%q: err %v, want ok=%v", c.name, err, c.ok)
			continue
		}
		if err != nil && !IsCode(err, ECodeValidation) {
			t.Errorf("%q: %v, want validation_error", c.name, err)
		}
		if err != nil && err.(*Error).Details[0].Field != "name" {
			t.Errorf("%q: field %q, want name", c.name, err.(*Error).Details[0].Field)
		}
	}
}
