package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/mailroom/mailroom/client"
)

// stdin is what a "-" file names (a variable for the tests).
var stdin io.Reader = os.Stdin

// sendCommand is `mailroom send`: one message through POST /v1/send.
func sendCommand(ctx context.Context, c *command, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet(c.name)
	var af apiFlags
	af.register(fs)
	var to, cc, bcc, replyTo addressesFlag
	var tags tagsFlag
	var vars varsFlag
	var attach repeatedFlag
	from := fs.String("from", "", "the sender `ADDRESS`, \"addr\" or \"Name <addr>\", of a verified domain (required unless the template has one)")
	fs.Var(&to, "to", "a recipient `ADDRESS`, \"addr\" or \"Name <addr>\"; repeatable, or several separated by commas (required)")
	fs.Var(&cc, "cc", "a Cc `ADDRESS`; repeatable, or several separated by commas")
	fs.Var(&bcc, "bcc", "a Bcc `ADDRESS`; repeatable, or several separated by commas")
	fs.Var(&replyTo, "reply-to", "a Reply-To `ADDRESS`; repeatable, or several separated by commas")
	subject := fs.String("subject", "", "the `SUBJECT` (required unless the template has one)")
	text := fs.String("text", "", "the plain-text body, `TEXT`")
	html := fs.String("html", "", "the `HTML` body (with it alone, the service makes the text part)")
	textFile := fs.String("text-file", "", "read the plain-text body from `FILE` (- for standard input)")
	htmlFile := fs.String("html-file", "", "read the HTML body from `FILE` (- for standard input)")
	template := fs.String("template", "", "send the template of this `NAME` (or tpl_… id) instead of --text and --html")
	fs.Var(&vars, "var", "a template value, `NAME=VALUE`; a dotted NAME (customer.name=Ann) makes nested objects; repeatable")
	varsFile := fs.String("vars-file", "", "template values as a JSON object in `FILE` (- for standard input), for numbers, booleans and lists; --var adds to them")
	fs.Var(&tags, "tag", "a tag, `KEY=VALUE` (or KEY:VALUE), to filter the log and webhooks by; repeatable")
	category := fs.String("category", "", "`CATEGORY`: transactional (the service's default) or marketing")
	idemKey := fs.String("idempotency-key", "", "a `KEY` that makes a repeated send answer duplicate instead of sending again (without it, one is made for this run's own retries)")
	fs.Var(&attach, "attach", "attach the `FILE` under its base name; repeatable")
	asJSON := fs.Bool("json", false, "print the API's answer as JSON instead of the message id")
	rest, err := c.parse(fs, args, stdout)
	if err != nil {
		return err
	}
	if len(rest) != 0 {
		return usageError{fmt.Sprintf("send takes no arguments, got %q (quote a value with spaces)", rest)}
	}

	// The mistakes the service would refuse anyway, caught here with exit 2.
	if len(to) == 0 {
		return usageError{"send needs --to"}
	}
	if *text != "" && *textFile != "" || *html != "" && *htmlFile != "" {
		return usageError{"give the body once: --text or --text-file, --html or --html-file"}
	}
	if *textFile == "-" && *htmlFile == "-" {
		return usageError{"only one of --text-file and --html-file can be standard input"}
	}
	hasBody := *text != "" || *html != "" || *textFile != "" || *htmlFile != ""
	switch {
	case *template != "" && hasBody:
		return usageError{"--template gives the body: leave out --text, --html and their files"}
	case *template == "" && !hasBody:
		return usageError{"send needs a body: --text, --html (or their -file) or --template"}
	case *template == "" && (len(vars.pairs) > 0 || *varsFile != ""):
		return usageError{"--var and --vars-file go with --template"}
	case *template == "" && *from == "":
		return usageError{"send needs --from (or a --template that has one)"}
	case *template == "" && *subject == "":
		return usageError{"send needs --subject (or a --template that has one)"}
	}
	switch client.Category(*category) {
	case "", client.CategoryTransactional, client.CategoryMarketing:
	default:
		return usageError{fmt.Sprintf("--category is transactional or marketing, not %q", *category)}
	}
	cl, err := af.newClient()
	if err != nil {
		return err
	}

	req := &client.SendRequest{
		From: *from, To: client.AddressList(to), Cc: client.AddressList(cc), Bcc: client.AddressList(bcc),
		ReplyTo: client.AddressList(replyTo), Subject: *subject, Text: *text, HTML: *html, Template: *template,
		Category: client.Category(*category), IdempotencyKey: *idemKey,
	}
	if len(tags) > 0 {
		req.Tags = tags
	}
	if *textFile != "" {
		if req.Text, err = readBody(*textFile); err != nil {
			return failure{fmt.Errorf("--text-file: %w", err)}
		}
	}
	if *htmlFile != "" {
		if req.HTML, err = readBody(*htmlFile); err != nil {
			return failure{fmt.Errorf("--html-file: %w", err)}
		}
	}
	if *template != "" {
		if req.Variables, err = vars.build(*varsFile); err != nil {
			var ue usageError
			if errors.As(err, &ue) {
				return err
			}
			return failure{err}
		}
	}
	for _, path := range attach {
		content, err := os.ReadFile(path)
		if err != nil {
			return failure{fmt.Errorf("--attach: %w", err)}
		}
		req.Attachments = append(req.Attachments, client.Attachment{Filename: filepath.Base(path), Content: content})
	}

	res, err := cl.Send(ctx, req)
	if err != nil {
		return callFailed(err, af.url)
	}
	if *asJSON {
		return printJSON(stdout, res)
	}
	// The id alone on standard output, so that ID=$(mailroom send …) holds
	// it whatever happened; a duplicate (or a scheduled send) is said on
	// standard error.
	fmt.Fprintln(stdout, clean(res.MessageID))
	if res.Status != client.SendQueued {
		fmt.Fprintf(stderr, "mailroom send: %s: %s\n", clean(string(res.Status)), sendStatusNote(res.Status))
	}
	return nil
}

// sendStatusNote says what a status other than queued means.
func sendStatusNote(status client.SendStatus) string {
	if status == client.SendDuplicate {
		return "this idempotency key was used before; nothing was sent again, and the id is the first message's"
	}
	return "accepted, to be sent at its scheduled time"
}

// readBody reads a body from path, or standard input for "-".
func readBody(path string) (string, error) {
	var b []byte
	var err error
	if path == "-" {
		b, err = io.ReadAll(stdin)
	} else {
		b, err = os.ReadFile(path)
	}
	if err != nil {
		return "", err
	}
	return string(b), nil
}

// repeatedFlag collects every value of a repeatable flag.
type repeatedFlag []string

func (f *repeatedFlag) String() string { return strings.Join(*f, ",") }

func (f *repeatedFlag) Set(v string) error {
	*f = append(*f, v)
	return nil
}

// addressesFlag collects addresses from each value, split at the commas
// that separate addresses (not those of a quoted display name).
type addressesFlag []string

func (f *addressesFlag) String() string { return strings.Join(*f, ", ") }

func (f *addressesFlag) Set(v string) error {
	for _, a := range splitAddresses(v) {
		if a = strings.TrimSpace(a); a != "" {
			*f = append(*f, a)
		}
	}
	return nil
}

// splitAddresses splits a list of addresses at the commas outside quotes,
// <…> and comments: `"Doe, Ann" <ann@x>, bob@y` is two.
func splitAddresses(s string) []string {
	var out []string
	quoted, escaped := false, false
	depth, start := 0, 0
	for i, r := range s {
		switch {
		case escaped:
			escaped = false
		case quoted && r == '\\':
			escaped = true
		case r == '"':
			quoted = !quoted
		case quoted:
		case r == '<' || r == '(':
			depth++
		case (r == '>' || r == ')') && depth > 0:
			depth--
		case r == ',' && depth == 0:
			out = append(out, s[start:i])
			start = i + 1
		}
	}
	return append(out, s[start:])
}

// tagsFlag collects KEY=VALUE (or KEY:VALUE) pairs. A tag's key holds
// neither = nor :, so the first of either ends it.
type tagsFlag map[string]string

func (f *tagsFlag) String() string {
	var pairs []string
	for k, v := range *f {
		pairs = append(pairs, k+"="+v)
	}
	slices.Sort(pairs)
	return strings.Join(pairs, ",")
}

func (f *tagsFlag) Set(v string) error {
	i := strings.IndexAny(v, "=:")
	if i <= 0 {
		return fmt.Errorf("want KEY=VALUE, got %q", v)
	}
	if *f == nil {
		*f = map[string]string{}
	}
	k := v[:i]
	if _, dup := (*f)[k]; dup {
		return fmt.Errorf("the tag %q is given twice", k)
	}
	(*f)[k] = v[i+1:]
	return nil
}

// varsFlag collects NAME=VALUE template values.
type varsFlag struct{ pairs [][2]string }

func (f *varsFlag) String() string { return "" }

func (f *varsFlag) Set(v string) error {
	name, value, ok := strings.Cut(v, "=")
	if !ok || name == "" || slices.Contains(strings.Split(name, "."), "") {
		return fmt.Errorf("want NAME=VALUE (NAME may be dotted: order.id=42), got %q", v)
	}
	f.pairs = append(f.pairs, [2]string{name, value})
	return nil
}

// build returns the variables: the JSON object of file (if any) with each
// --var set in it, a dotted name making nested objects.
func (f *varsFlag) build(file string) (map[string]any, error) {
	vars := map[string]any{}
	if file != "" {
		b, err := readBody(file)
		if err != nil {
			return nil, fmt.Errorf("--vars-file: %w", err)
		}
		dec := json.NewDecoder(bytes.NewReader([]byte(b)))
		dec.UseNumber() // every digit kept
		if err := dec.Decode(&vars); err != nil {
			return nil, fmt.Errorf("--vars-file %s: not a JSON object: %v", file, err)
		} else if vars == nil {
			return nil, fmt.Errorf("--vars-file %s: not a JSON object: null", file)
		}
	}
	for _, p := range f.pairs {
		parts := strings.Split(p[0], ".")
		m := vars
		for _, part := range parts[:len(parts)-1] {
			next, ok := m[part].(map[string]any)
			if !ok {
				if _, taken := m[part]; taken {
					return nil, usageError{fmt.Sprintf("--var %s=…: %s already holds a value, not an object", p[0], part)}
				}
				next = map[string]any{}
				m[part] = next
			}
			m = next
		}
		m[parts[len(parts)-1]] = p[1]
	}
	if len(vars) == 0 {
		return nil, nil
	}
	return vars, nil
}
