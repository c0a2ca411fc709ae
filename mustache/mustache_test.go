package mustache_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/mailroom/mailroom"
	"github.com/mailroom/mailroom/mustache"
)

func render(t *testing.T, source string, html bool, data string) string {
	t.Helper()
	p, err := mustache.Engine{}.Parse(source, html)
	if err != nil {
		t.Fatalf("parse %q: %v", source, err)
	}
	vars := map[string]any{}
	dec := json.NewDecoder(strings.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&vars); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := p.Render(&out, vars); err != nil {
		t.Fatalf("render %q: %v", source, err)
	}
	return out.String()
}

// Cases of each kind the Mustache spec defines (interpolation, sections,
// inverted sections, comments, delimiters), in the project's words: the
// behaviour templates rely on.
func TestMustacheSpecKinds(t *testing.T) {
	for _, tc := range []struct {
		name, source, data string
		html               bool
		want               string
	}{
		{"interpolation escapes in html", `{{v}}`, `{"v": "& \" < > '"}`, true, "&amp; &quot; &lt; &gt; &#39;"},
		{"triple braces do not escape", `{{{v}}}`, `{"v": "<b>"}`, true, "<b>"},
		{"ampersand does not escape", `{{& v}}`, `{"v": "<b>"}`, true, "<b>"},
		{"text never escapes", `{{v}}`, `{"v": "<b>&"}`, false, "<b>&"},
		{"numbers keep their digits", `{{n}} {{f}}`, `{"n": 12345678901234567890, "f": 0.10}`, false, "12345678901234567890 0.10"},
		{"dotted names", `{{a.b.c}}`, `{"a": {"b": {"c": "deep"}}}`, false, "deep"},
		{"missing renders empty", `[{{nope}}]`, `{}`, false, "[]"},
		{"null renders empty", `[{{v}}]`, `{"v": ""}`, false, "[]"},
		{"section over a list", `{{#l}}<{{.}}>{{/l}}`, `{"l": ["a", "b"]}`, false, "<a><b>"},
		{"section over objects", `{{#l}}{{n}},{{/l}}`, `{"l": [{"n": 1}, {"n": 2}]}`, false, "1,2,"},
		{"section on an object", `{{#o}}{{k}}{{/o}}`, `{"o": {"k": "v"}}`, false, "v"},
		{"objects and lists print as JSON", `{{o}} {{l}} {{#l}}{{.}}{{/l}}`, `{"o": {"k": "<v>"}, "l": [1, {"a": true}]}`, false, `{"k":"<v>"} [1,{"a":true}] 1{"a":true}`},
		{"a variable named String is a variable", `{{String}} {{o.String}} {{#String}}[{{.}}]{{/String}}`, `{"String": "s", "o": {"String": "t"}}`, false, "s t [s]"},
		{"false section hidden", `[{{#b}}x{{/b}}]`, `{"b": false}`, false, "[]"},
		{"empty list hidden", `[{{#l}}x{{/l}}]`, `{"l": []}`, false, "[]"},
		{"outer names inside a section", `{{#l}}{{n}}{{top}}{{/l}}`, `{"top": "!", "l": [{"n": 1}]}`, false, "1!"},
		{"inverted on false", `{{^b}}no{{/b}}`, `{"b": false}`, false, "no"},
		{"inverted on absent", `{{^b}}no{{/b}}`, `{}`, false, "no"},
		{"inverted on empty list", `{{^l}}none{{/l}}`, `{"l": []}`, false, "none"},
		{"inverted on true hidden", `[{{^b}}no{{/b}}]`, `{"b": true}`, false, "[]"},
		{"comments vanish", `a{{! a comment }}b`, `{}`, false, "ab"},
		{"multi-line comments vanish", "a{{!\nline\n}}b", `{}`, false, "ab"},
		{"standalone tags leave no line", "a\n{{#b}}\nx\n{{/b}}\nc", `{"b": true}`, false, "a\nx\nc"},
		{"delimiters change", `{{=<% %>=}}<% v %> {{v}}`, `{"v": "x"}`, false, "x {{v}}"},
		{"delimiters change back", `{{=| |=}}|v| |={{ }}=|{{v}}`, `{"v": "x"}`, false, "x x"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := render(t, tc.source, tc.html, tc.data); got != tc.want {
				t.Fatalf("%q with %s: got %q, want %q", tc.source, tc.data, got, tc.want)
			}
		})
	}
}

// Names lists every name; Required only those interpolated outside
// sections (an inverted section pushes no value: a name inside it is read
// where the section stands, so it is required too).
func TestNames(t *testing.T) {
	p, err := mustache.Engine{}.Parse(`{{a.b}} {{#s}}{{inner}}{{.}}{{/s}} {{^inv}}{{c}}{{/inv}} {{{raw}}} {{! x }}`, true)
	if err != nil {
		t.Fatal(err)
	}
	n := p.Names()
	if want := []string{"a.b", "c", "inner", "inv", "raw", "s"}; !slices.Equal(n.Used, want) {
		t.Errorf("used %v, want %v", n.Used, want)
	}
	if want := []string{"a.b", "c", "raw"}; !slices.Equal(n.Required, want) {
		t.Errorf("required %v, want %v", n.Required, want)
	}
}

// Sources that do not parse say where, in line and column; partials are
// refused (the library would read them from files).
func TestSyntaxErrors(t *testing.T) {
	for _, tc := range []struct {
		source    string
		line, col int
		says      string
	}{
		{"Hi {{name", 1, 4, "never closed"},
		{"ok\n  {{#items}}\n{{x}}", 2, 3, `section "items"`},
		{"a\nb {{/items}}", 2, 3, "closes no open section"},
		{"{{#a}}\n{{#b}} {{/a}}{{/b}}", 2, 8, "{{/a}}"},
		{"x {{}}", 1, 3, "no name"},
		{"x {{a..b}}", 1, 3, "not a name"},
		{"{{" + strings.Repeat("a.", 64) + "b}}", 1, 1, "at most 128 characters"},
		{"{{= =}}", 1, 1, "not a name"},
		{nested(17), 1, 120, "nested more than 16 deep"},
		{"{{#a}}\n x {{> /etc/passwd}}{{/a}}", 2, 4, "partials"},
	} {
		_, err := mustache.Engine{}.Parse(tc.source, true)
		var se *mailroom.TemplateSyntaxError
		if !errors.As(err, &se) {
			t.Errorf("%q: got %v, want a syntax error", tc.source, err)
			continue
		}
		if se.Line != tc.line || se.Column != tc.col || !strings.Contains(se.Problem, tc.says) {
			t.Errorf("%q: got line %d, column %d, %q; want line %d, column %d, saying %q", tc.source, se.Line, se.Column, se.Problem, tc.line, tc.col, tc.says)
		}
	}
}

// nested returns n sections s1…sn, each inside the one before.
func nested(n int) string {
	var open, closing strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&open, "{{#s%d}}", i)
		closing.WriteString(fmt.Sprintf("{{/s%d}}", n+1-i))
	}
	return open.String() + "x" + closing.String()
}
