package http_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-message/mail"
	"github.com/emersion/go-msgauth/dkim"

	"github.com/mailroom/mailroom"
	"github.com/mailroom/mailroom/apitest"
	"github.com/mailroom/mailroom/storetest"
)

// receiptTemplate uses nested variables, a section over a list, an
// inverted section, a comment and a raw interpolation.
var receiptTemplate = map[string]any{
	"name":        "receipt",
	"description": "Order receipt",
	"from":        "Shop <orders@shop.example>",
	"subject":     "Receipt for {{customer.name}} – order {{order.id}}",
	"html": "<h1>Thanks, {{customer.name}}!</h1>{{! shown to every customer }}" +
		"<ul>{{#order.items}}<li>{{title}}: {{price}}</li>{{/order.items}}</ul>" +
		"{{^order.paid}}<p>Payment pending</p>{{/order.paid}}<p>{{{footer}}}</p>",
	"text": "Thanks, {{customer.name}}!\n{{#order.items}}- {{title}}: {{price}}\n{{/order.items}}{{^order.paid}}Payment pending\n{{/order.paid}}",
}

func receiptVariables(name string) map[string]any {
	return map[string]any{
		"customer": map[string]any{"name": name},
		"order": map[string]any{"id": json.Number("12345678901234567890"), "paid": false,
			"items": []any{map[string]any{"title": "Tea & <Cake>", "price": "4.50"}, map[string]any{"title": "Jam", "price": "3.00"}}},
		"footer": "<a href=\"https://shop.example\">Shop</a>",
	}
}

func (e *env) createTemplate(t *testing.T, key string, body map[string]any) map[string]any {
	t.Helper()
	r := e.Do(apitest.Request{Method: "POST", Path: "/v1/templates", Key: key, Body: body})
	if r.Status != 201 {
		t.Fatalf("create template: %d %s", r.Status, r.Body)
	}
	return r.Map()
}

// A new user's tour, on both engines: create, render, send and find the
// message at the receiver, DKIM-valid; edit, and the earlier message still
// names version 1 with its bytes unchanged.
func TestTemplatesFromCreateToDelivery(t *testing.T) {
	storetest.Each(t, func(t *testing.T, eng storetest.Engine) {
		e := newEnv(t, eng)
		e.verifiedDomain(t, "shop.example")
		e.mailDomain("example.com")

		tpl := e.createTemplate(t, e.admin, receiptTemplate)
		if !strings.HasPrefix(tpl["id"].(string), mailroom.PrefixTemplate) || tpl["version"] != float64(1) {
			t.Fatalf("created %v", tpl)
		}
		wantVars := []any{"customer.name", "footer", "order.id", "order.items", "order.paid", "price", "title"}
		if got := tpl["variables"].([]any); !slices.Equal(got, wantVars) {
			t.Fatalf("variables %v, want %v", got, wantVars)
		}

		// Render: escaped in html, as given in subject and text.
		r := e.Do(apitest.Request{Method: "POST", Path: "/v1/templates/receipt/render", Key: e.admin,
			Body: map[string]any{"variables": receiptVariables("Ann <b>&</b>")}})
		if r.Status != 200 {
			t.Fatalf("render: %d %s", r.Status, r.Body)
		}
		out := r.Map()
		if out["subject"] != "Receipt for Ann <b>&</b> – order 12345678901234567890" {
			t.Errorf("subject %q: values are not escaped in the subject, and numbers keep every digit", out["subject"])
		}
		html := out["html"].(string)
		for _, want := range []string{"Thanks, Ann &lt;b&gt;&amp;&lt;/b&gt;!", "<li>Tea &amp; &lt;Cake&gt;: 4.50</li><li>Jam: 3.00</li>",
			"<p>Payment pending</p>", `<p><a href="https://shop.example">Shop</a></p>`} {
			if !strings.Contains(html, want) {
				t.Errorf("html %q lacks %q", html, want)
			}
		}
		if strings.Contains(html, "shown to every customer") {
			t.Error("a comment was rendered")
		}
		if out["text"] != "Thanks, Ann <b>&</b>!\n- Tea & <Cake>: 4.50\n- Jam: 3.00\nPayment pending\n" {
			t.Errorf("text %q", out["text"])
		}
		e.noMessages(t) // render never sends

		// Send with it, by name, with a send-only key.
		sendOnly := e.newKey(t, e.acct, mailroom.Scopes{mailroom.ScopeSend})
		r = e.Do(apitest.Request{Method: "POST", Path: "/v1/send", Key: sendOnly, Body: map[string]any{
			"template": "receipt", "to": "ann@example.com", "variables": receiptVariables("Ann")}})
		if r.Status != 200 {
			t.Fatalf("send: %d %s", r.Status, r.Body)
		}
		id := r.Str("messageId")
		msg := e.waitStatus(t, id, "delivered")
		ref, _ := msg["template"].(map[string]any)
		if ref["id"] != tpl["id"] || ref["name"] != "receipt" || ref["version"] != float64(1) {
			t.Fatalf("the log's template is %v", msg["template"])
		}
		got := e.mx.WaitMessages(t, 1, 10*time.Second)
		raw := got[0].Data
		verifications, err := dkim.VerifyWithOptions(bytes.NewReader(raw), &dkim.VerifyOptions{
			LookupTXT: func(domain string) ([]string, error) { return lookupTXT(e, domain) },
		})
		if err != nil || len(verifications) != 1 || verifications[0].Err != nil || verifications[0].Domain != "shop.example" {
			t.Fatalf("DKIM: %v %+v", err, verifications)
		}
		subject, html, text := readMessage(t, raw)
		if subject != "Receipt for Ann – order 12345678901234567890" || !strings.Contains(html, "<li>Tea &amp; &lt;Cake&gt;: 4.50</li>") ||
			!strings.Contains(text, "- Jam: 3.00") {
			t.Fatalf("received subject %q, html %q, text %q", subject, html, text)
		}
		if got[0].MailFrom == "" || !strings.Contains(string(raw), "From: \"Shop\" <orders@shop.example>") {
			t.Fatalf("the template's from was not used:\n%s", raw)
		}

		// Edit: version 2; the earlier message keeps version 1 and its bytes.
		edited := withFields(receiptTemplate, map[string]any{"subject": "Your receipt, {{customer.name}}"})
		delete(edited, "name")
		r = e.Do(apitest.Request{Method: "PUT", Path: "/v1/templates/" + tpl["id"].(string), Key: e.admin, Body: edited})
		if r.Status != 200 || r.Map()["version"] != float64(2) || r.Str("name") != "receipt" {
			t.Fatalf("PUT: %d %s", r.Status, r.Body)
		}
		rr := e.Do(apitest.Request{Method: "GET", Path: "/v1/messages/" + id + "/raw", Key: e.admin})
		if !bytes.Equal(rr.Body, raw) {
			t.Fatal("the earlier message's raw bytes changed with the template")
		}
		if ref := e.Do(apitest.Request{Method: "GET", Path: "/v1/messages/" + id, Key: e.admin}).Map()["template"].(map[string]any); ref["version"] != float64(1) {
			t.Fatalf("the earlier message now names version %v", ref["version"])
		}
		r = e.Do(apitest.Request{Method: "POST", Path: "/v1/send", Key: sendOnly, Body: map[string]any{
			"template": tpl["id"], "to": "bob@example.com", "variables": receiptVariables("Bob")}})
		second := e.waitStatus(t, r.Str("messageId"), "delivered")
		if second["subject"] != "Your receipt, Bob" || second["template"].(map[string]any)["version"] != float64(2) {
			t.Fatalf("the second send: %v", second)
		}

		// The versions, newest first, each with its content.
		vs := e.Do(apitest.Request{Method: "GET", Path: "/v1/templates/receipt/versions", Key: e.admin}).Map()["data"].([]any)
		if len(vs) != 2 || vs[0].(map[string]any)["version"] != float64(2) || vs[1].(map[string]any)["subject"] != receiptTemplate["subject"] {
			t.Fatalf("versions %v", vs)
		}
		v1 := e.Do(apitest.Request{Method: "GET", Path: "/v1/templates/receipt/versions/1", Key: e.admin})
		if v1.Status != 200 || v1.Str("subject") != receiptTemplate["subject"] {
			t.Fatalf("version 1: %d %s", v1.Status, v1.Body)
		}

		// The log finds both messages by template, by id or by name.
		for _, q := range []string{"receipt", tpl["id"].(string)} {
			list := e.Do(apitest.Request{Method: "GET", Path: "/v1/messages?template=" + q, Key: e.admin}).Map()["data"].([]any)
			if len(list) != 2 {
				t.Fatalf("?template=%s found %d messages", q, len(list))
			}
		}
	})
}

// readMessage returns a received message's subject, html and text parts.
func readMessage(t *testing.T, raw []byte) (subject, html, text string) {
	t.Helper()
	mr, err := mail.CreateReader(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	subject, _ = mr.Header.Subject()
	for {
		p, err := mr.NextPart()
		if err == io.EOF {
			return subject, html, text
		}
		if err != nil {
			t.Fatalf("MIME: %v", err)
		}
		body, _ := io.ReadAll(p.Body)
		if h, ok := p.Header.(*mail.InlineHeader); ok {
			switch ct, _, _ := h.ContentType(); ct {
			case "text/html":
				html = string(body)
			case "text/plain":
				text = string(body)
			}
		}
	}
}

// withFields returns a copy of base with over's entries set.
func withFields(base, over map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range base {
		out[k] = v
	}
	for k, v := range over {
		out[k] = v
	}
	return out
}

// Every missing variable is named, all at once; a section's name may be
// absent; null counts as missing; nothing is stored.
func TestTemplateMissingVariables(t *testing.T) {
	e := newEnv(t, storetest.SQLite)
	e.verifiedDomain(t, "shop.example")
	e.createTemplate(t, e.admin, receiptTemplate)
	vars := receiptVariables("Ann")
	delete(vars, "footer")
	vars["customer"] = map[string]any{"name": nil}
	delete(vars["order"].(map[string]any), "items") // a section: absent is false
	for _, req := range []apitest.Request{
		{Method: "POST", Path: "/v1/templates/receipt/render", Body: map[string]any{"variables": vars}},
		{Method: "POST", Path: "/v1/send", Body: map[string]any{"template": "receipt", "to": "ann@example.com", "variables": vars}},
	} {
		req.Key = e.admin
		r := e.Do(req)
		wantError(t, r, 400, mailroom.ECodeValidation)
		for _, field := range []string{"variables.customer.name", "variables.footer"} {
			if !hasField(r, field) {
				t.Errorf("%s: details should name %s: %s", req.Path, field, r.Body)
			}
		}
		if details := r.Map()["details"].([]any); len(details) != 2 {
			t.Errorf("%s: want exactly the two missing names: %s", req.Path, r.Body)
		}
	}
	r := e.Do(apitest.Request{Method: "POST", Path: "/v1/send", Key: e.admin, Body: map[string]any{"template": "receipt", "to": "ann@example.com"}})
	wantError(t, r, 400, mailroom.ECodeValidation)
	if !hasField(r, "variables.order.id") {
		t.Errorf("no variables at all should name every required one: %s", r.Body)
	}

	// An object where text goes is refused, not printed as map[…].
	vars = receiptVariables("Ann")
	vars["customer"] = map[string]any{"name": map[string]any{"first": "Ann"}}
	r = e.Do(apitest.Request{Method: "POST", Path: "/v1/templates/receipt/render", Key: e.admin, Body: map[string]any{"variables": vars}})
	if wantError(t, r, 400, mailroom.ECodeValidation); !hasField(r, "variables.customer.name") {
		t.Errorf("an object inserted as text: %s", r.Body)
	}
	// A name inside an inverted section is read where the section stands.
	e.createTemplate(t, e.admin, map[string]any{"name": "vip", "subject": "Hi {{^vip}}{{name}}{{/vip}}!", "text": "x"})
	r = e.Do(apitest.Request{Method: "POST", Path: "/v1/templates/vip/render", Key: e.admin, Body: map[string]any{"variables": map[string]any{}}})
	if wantError(t, r, 400, mailroom.ECodeValidation); !hasField(r, "variables.name") {
		t.Errorf("a name in an inverted section: %s", r.Body)
	}

	// Past a hundred missing names, the message still counts them all.
	var many strings.Builder
	for i := range 150 {
		fmt.Fprintf(&many, "{{v%d}}", i)
	}
	e.createTemplate(t, e.admin, map[string]any{"name": "many", "subject": "s", "text": many.String()})
	for _, req := range []apitest.Request{
		{Method: "POST", Path: "/v1/templates/many/render", Body: map[string]any{}},
		{Method: "POST", Path: "/v1/send", Body: map[string]any{"template": "many", "to": "a@example.com", "from": "a@shop.example"}},
	} {
		req.Key = e.admin
		r = e.Do(req)
		if wantError(t, r, 400, mailroom.ECodeValidation); !strings.Contains(r.Str("message"), "(and 149 more)") {
			t.Errorf("%s: %s", req.Path, r.Str("message"))
		}
	}
	e.noMessages(t)
}

// Templates are the account's own: another account's key gets 404 on
// every route and when sending; a send-only key cannot manage them.
func TestTemplatesBelongToTheirAccount(t *testing.T) {
	storetest.Each(t, func(t *testing.T, eng storetest.Engine) {
		e := newEnv(t, eng)
		tpl := e.createTemplate(t, e.admin, receiptTemplate)
		other := storetest.NewAccount(t, e.store, "globex")
		otherKey := e.newKey(t, other, mailroom.Scopes(mailroom.AllScopes))
		e.Do(apitest.Request{Method: "POST", Path: "/v1/domains", Key: otherKey, Body: map[string]any{"name": "shop.example"}})
		for _, ref := range []string{"receipt", tpl["id"].(string)} {
			for _, req := range []apitest.Request{
				{Method: "GET", Path: "/v1/templates/" + ref},
				{Method: "PUT", Path: "/v1/templates/" + ref, Body: receiptTemplate},
				{Method: "GET", Path: "/v1/templates/" + ref + "/versions"},
				{Method: "GET", Path: "/v1/templates/" + ref + "/versions/1"},
				{Method: "POST", Path: "/v1/templates/" + ref + "/render", Body: map[string]any{"variables": receiptVariables("x")}},
				{Method: "DELETE", Path: "/v1/templates/" + ref},
				{Method: "POST", Path: "/v1/send", Body: map[string]any{"template": ref, "to": "a@example.com", "variables": receiptVariables("x")}},
			} {
				req.Key = otherKey
				wantError(t, e.Do(req), 404, mailroom.ECodeNotFound)
			}
		}
		if list := e.Do(apitest.Request{Method: "GET", Path: "/v1/templates", Key: otherKey}).Map()["data"].([]any); len(list) != 0 {
			t.Fatalf("another account lists %v", list)
		}
		// Still there, unchanged, for its own account.
		if r := e.Do(apitest.Request{Method: "GET", Path: "/v1/templates/receipt", Key: e.admin}); r.Status != 200 || r.Map()["version"] != float64(1) {
			t.Fatalf("after the other account's attempts: %d %s", r.Status, r.Body)
		}

		sendOnly := e.newKey(t, e.acct, mailroom.Scopes{mailroom.ScopeSend})
		for _, req := range []apitest.Request{
			{Method: "POST", Path: "/v1/templates", Body: withFields(receiptTemplate, map[string]any{"name": "other"})},
			{Method: "GET", Path: "/v1/templates"},
			{Method: "PUT", Path: "/v1/templates/receipt", Body: receiptTemplate},
			{Method: "POST", Path: "/v1/templates/receipt/render", Body: map[string]any{}},
			{Method: "DELETE", Path: "/v1/templates/receipt"},
		} {
			req.Key = sendOnly
			wantError(t, e.Do(req), 403, mailroom.ECodeInsufficientScope)
		}
	})
}

// What a template may hold is checked when it is saved, so a stored
// template always renders.
func TestTemplateValidation(t *testing.T) {
	e := newEnv(t, storetest.SQLite)
	base := map[string]any{"name": "welcome", "subject": "Hi {{name}}", "text": "Hello {{name}}"}
	for name, tc := range map[string]struct {
		over  map[string]any
		field string
		says  string
	}{
		"unclosed section":   {map[string]any{"html": "<p>\n  {{#items}}<li>{{.}}</li>\n</p>"}, "html", "line 2, column 3"},
		"stray close":        {map[string]any{"text": "a\nb {{/items}}"}, "text", "line 2, column 3"},
		"unclosed tag":       {map[string]any{"subject": "Hi {{name"}, "subject", "line 1, column 4"},
		"partial":            {map[string]any{"html": "{{> header}}"}, "html", "partials"},
		"partial in a file":  {map[string]any{"text": "{{#a}}{{> /etc/passwd}}{{/a}}"}, "text", "partials"},
		"bad name":           {map[string]any{"name": "Welcome Mail"}, "name", "slug"},
		"id-like name":       {map[string]any{"name": "tpl_x"}, "name", "tpl_"},
		"no name":            {map[string]any{"name": nil}, "name", "required"},
		"no subject":         {map[string]any{"subject": nil}, "subject", "required"},
		"no body":            {map[string]any{"text": nil}, "html", "html or text is required"},
		"subject CRLF":       {map[string]any{"subject": "a\r\nBcc: x@example.com"}, "subject", "line breaks"},
		"big html":           {map[string]any{"html": strings.Repeat("x", mailroom.MaxTemplatePartBytes+1)}, "html", "1 MiB"},
		"bad from":           {map[string]any{"from": "not an address"}, "from", ""},
		"NUL in description": {map[string]any{"description": "d\x00"}, "description", "control characters"},
		"bidi description":   {map[string]any{"description": "a\u202eb"}, "description", "invisible"},
		"deep sections":      {map[string]any{"text": strings.Repeat("{{#a}}", 17) + strings.Repeat("{{/a}}", 17)}, "text", "nested more than 16 deep"},
		"empty subject":      {map[string]any{"subject": "{{! nothing }}"}, "subject", "renders empty"},
		"not a name":         {map[string]any{"text": "{{a..b}}"}, "text", "not a name"},
	} {
		t.Run(name, func(t *testing.T) {
			body := withFields(base, nil)
			for k, v := range tc.over {
				if v == nil {
					delete(body, k)
				} else {
					body[k] = v
				}
			}
			r := e.Do(apitest.Request{Method: "POST", Path: "/v1/templates", Key: e.admin, Body: body})
			wantError(t, r, 400, mailroom.ECodeValidation)
			if !hasField(r, tc.field) || !strings.Contains(string(r.Body), tc.says) {
				t.Fatalf("want a problem on %s saying %q: %s", tc.field, tc.says, r.Body)
			}
		})
	}
	e.createTemplate(t, e.admin, base)
	wantError(t, e.Do(apitest.Request{Method: "POST", Path: "/v1/templates", Key: e.admin, Body: base}), 409, mailroom.ECodeAlreadyExists)
	r := e.Do(apitest.Request{Method: "PUT", Path: "/v1/templates/welcome", Key: e.admin, Body: withFields(base, map[string]any{"name": "renamed"})})
	wantError(t, r, 400, mailroom.ECodeValidation)
	if r := e.Do(apitest.Request{Method: "DELETE", Path: "/v1/templates/welcome", Key: e.admin}); r.Status != 204 {
		t.Fatalf("DELETE: %d %s", r.Status, r.Body)
	}
	wantError(t, e.Do(apitest.Request{Method: "GET", Path: "/v1/templates/welcome", Key: e.admin}), 404, mailroom.ECodeNotFound)

	// Lists leave the bodies out; a version is read by its one spelling.
	e.createTemplate(t, e.admin, base)
	if item := e.Do(apitest.Request{Method: "GET", Path: "/v1/templates", Key: e.admin}).Map()["data"].([]any)[0].(map[string]any); item["subject"] != base["subject"] || item["text"] != nil {
		t.Fatalf("list item %v", item)
	}
	for _, v := range []string{"01", "+1", "0", "x"} {
		wantError(t, e.Do(apitest.Request{Method: "GET", Path: "/v1/templates/welcome/versions/" + v, Key: e.admin}), 404, mailroom.ECodeNotFound)
	}
}

// A send that names a template gives neither html nor text; from and
// subject default to the template's; a template that renders past the
// limits is refused, not sent.
func TestSendWithTemplateRules(t *testing.T) {
	e := newEnv(t, storetest.SQLite)
	e.verifiedDomain(t, "shop.example")
	e.createTemplate(t, e.admin, map[string]any{"name": "bare", "subject": "{{s}}", "text": "Hello{{#list}}{{#list}}{{#list}}{{x}}{{/list}}{{/list}}{{/list}}"})
	send := func(body map[string]any) *apitest.Response {
		return e.Do(apitest.Request{Method: "POST", Path: "/v1/send", Key: e.admin, Body: body})
	}
	r := send(map[string]any{"template": "bare", "to": "a@example.com", "text": "x", "variables": map[string]any{"s": "Hi"}})
	wantError(t, r, 400, mailroom.ECodeValidation)
	if !hasField(r, "template") {
		t.Fatalf("html or text with a template: %s", r.Body)
	}
	r = send(map[string]any{"template": "bare", "to": "a@example.com", "variables": map[string]any{"s": "Hi"}})
	if wantError(t, r, 400, mailroom.ECodeValidation); !hasField(r, "from") {
		t.Fatalf("the template has no from and the request none: %s", r.Body)
	}
	r = send(map[string]any{"template": "bare", "to": "a@example.com", "from": "a@shop.example", "variables": map[string]any{"s": "a\r\nBcc: x@example.com"}})
	if wantError(t, r, 400, mailroom.ECodeValidation); !hasField(r, "subject") {
		t.Fatalf("a rendered subject with CRLF: %s", r.Body)
	}
	// Sections over a long blank string test it for blankness each time:
	// little text, much work. The render stops at its time limit.
	e.createTemplate(t, e.admin, map[string]any{"name": "blank", "subject": "s", "text": "x" + strings.Repeat("{{#b}}{{/b}}", 80000)})
	start := time.Now()
	r = send(map[string]any{"template": "blank", "to": "a@example.com", "from": "a@shop.example", "variables": map[string]any{"b": strings.Repeat(" ", 250000)}})
	if wantError(t, r, 400, mailroom.ECodeValidation); !strings.Contains(string(r.Body), "to render") {
		t.Fatalf("a render past its time: %s", r.Body)
	}
	t.Logf("refused after %v", time.Since(start))

	// A reference that could name no template is not looked up (a NUL
	// would be an error in PostgreSQL's query text).
	wantError(t, send(map[string]any{"template": "bare\x00", "to": "a@example.com", "from": "a@shop.example"}), 404, mailroom.ECodeNotFound)

	// 300 items, three sections deep: 27 million pieces of text.
	list := make([]any, 300)
	for i := range list {
		list[i] = map[string]any{"x": fmt.Sprint(i)}
	}
	r = send(map[string]any{"template": "bare", "to": "a@example.com", "from": "a@shop.example", "variables": map[string]any{"s": "Hi", "list": list}})
	if wantError(t, r, 400, mailroom.ECodeValidation); !hasField(r, "text") {
		t.Fatalf("a rendering past the limits: %s", r.Body)
	}
	r = send(map[string]any{"template": "bare", "to": "a@example.com", "from": "a@shop.example",
		"variables": map[string]any{"s": "Hi", "pad": strings.Repeat("x", mailroom.MaxVariablesBytes)}})
	if wantError(t, r, 400, mailroom.ECodeValidation); !hasField(r, "variables") {
		t.Fatalf("variables over 256 KiB: %s", r.Body)
	}
	wantError(t, send(map[string]any{"template": "nope", "to": "a@example.com", "from": "a@shop.example"}), 404, mailroom.ECodeNotFound)
	// A render that gives no body is the 400 a send gets.
	e.createTemplate(t, e.admin, map[string]any{"name": "hollow", "subject": "s", "html": "{{h}}"})
	r = e.Do(apitest.Request{Method: "POST", Path: "/v1/templates/hollow/render", Key: e.admin, Body: map[string]any{"variables": map[string]any{"h": ""}}})
	if wantError(t, r, 400, mailroom.ECodeValidation); !hasField(r, "html") {
		t.Fatalf("render of no body: %s", r.Body)
	}
	r = send(map[string]any{"template": "hollow", "to": "a@example.com", "from": "a@shop.example", "variables": map[string]any{"h": ""}})
	if wantError(t, r, 400, mailroom.ECodeValidation); !hasField(r, "html") {
		t.Fatalf("send of no body: %s", r.Body)
	}
	r = send(map[string]any{"to": "a@example.com", "from": "a@shop.example", "subject": "s", "text": "t", "variables": map[string]any{"a": 1}})
	if wantError(t, r, 400, mailroom.ECodeValidation); !hasField(r, "variables") {
		t.Fatalf("variables without a template: %s", r.Body)
	}
	e.noMessages(t)
	r = e.Do(apitest.Request{Method: "GET", Path: "/v1/messages?template=Not%20A%20Name", Key: e.admin})
	wantError(t, r, 400, mailroom.ECodeValidation)

	// The idempotency digest covers the template and its variables.
	body := map[string]any{"template": "bare", "to": "a@example.com", "from": "a@shop.example", "variables": map[string]any{"s": "Hi"}, "idempotencyKey": "k1"}
	if r := send(body); r.Status != 200 || r.Str("status") != "queued" {
		t.Fatalf("first: %d %s", r.Status, r.Body)
	}
	if r := send(body); r.Status != 200 || r.Str("status") != "duplicate" {
		t.Fatalf("retry: %d %s", r.Status, r.Body)
	}
	wantError(t, send(withFields(body, map[string]any{"variables": map[string]any{"s": "Ho"}})), 409, mailroom.ECodeIdempotencyKeyReused)

	// A retry after the template was deleted is still a retry.
	first := send(withFields(body, map[string]any{"idempotencyKey": "k2"}))
	if r := e.Do(apitest.Request{Method: "DELETE", Path: "/v1/templates/bare", Key: e.admin}); r.Status != 204 {
		t.Fatalf("delete: %d %s", r.Status, r.Body)
	}
	if r := send(withFields(body, map[string]any{"idempotencyKey": "k2"})); r.Status != 200 || r.Str("status") != "duplicate" || r.Str("messageId") != first.Str("messageId") {
		t.Fatalf("retry after delete: %d %s", r.Status, r.Body)
	}
	wantError(t, send(withFields(body, map[string]any{"idempotencyKey": "k2", "variables": map[string]any{"s": "Ho"}})), 409, mailroom.ECodeIdempotencyKeyReused)
	wantError(t, send(withFields(body, map[string]any{"idempotencyKey": "k3"})), 404, mailroom.ECodeNotFound)
	r = e.Do(apitest.Request{Method: "GET", Path: "/v1/messages?template=tpl_%E2%80%AE", Key: e.admin})
	wantError(t, r, 400, mailroom.ECodeValidation)
}

// Layouts: a brand's header and footer in one template that others name;
// each version pins the layout version it was saved with; cycles, layouts
// that insert nothing and deleting a layout in use are refused.
func TestTemplateLayouts(t *testing.T) {
	storetest.Each(t, func(t *testing.T, eng storetest.Engine) {
		e := newEnv(t, eng)
		brand := e.createTemplate(t, e.admin, map[string]any{"name": "brand", "subject": "(layout)",
			"html": "<header>Acme</header>{{{content}}}<footer>{{company.address}}</footer>", "text": "{{content}}\n-- \nAcme"})
		welcome := e.createTemplate(t, e.admin, map[string]any{"name": "welcome", "subject": "Welcome, {{name}}",
			"html": "<p>Hi {{name}}</p>", "layout": "brand"})
		if l, _ := welcome["layout"].(map[string]any); l["id"] != brand["id"] || l["name"] != "brand" || l["version"] != float64(1) {
			t.Fatalf("layout %v", welcome["layout"])
		}
		if got := welcome["variables"].([]any); !slices.Equal(got, []any{"company.address", "name"}) {
			t.Fatalf("variables %v: the layout's names are the template's to give", got)
		}
		render := func(vars map[string]any) *apitest.Response {
			return e.Do(apitest.Request{Method: "POST", Path: "/v1/templates/welcome/render", Key: e.admin, Body: map[string]any{"variables": vars}})
		}
		out := render(map[string]any{"name": "<Ann>", "company": map[string]any{"address": "1 Main St"}}).Map()
		if out["html"] != "<header>Acme</header><p>Hi &lt;Ann&gt;</p><footer>1 Main St</footer>" || out["subject"] != "Welcome, <Ann>" {
			t.Fatalf("rendered %v", out)
		}
		if text, _ := out["text"].(string); !strings.Contains(text, "Hi <Ann>") || !strings.Contains(text, "1 Main St") {
			t.Fatalf("the text, generated from the wrapped html: %q", text)
		}
		r := render(map[string]any{"name": "Ann"})
		if wantError(t, r, 400, mailroom.ECodeValidation); !hasField(r, "variables.company.address") {
			t.Fatalf("the layout's variable is required: %s", r.Body)
		}
		// Renders share the parsed template (the cache): side by side,
		// each gets its own answer (and -race sees no shared writes).
		var wg sync.WaitGroup
		for i := range 8 {
			wg.Go(func() {
				name := fmt.Sprint("n", i)
				if html := render(map[string]any{"name": name, "company": map[string]any{"address": "a"}}).Str("html"); !strings.Contains(html, "<p>Hi "+name+"</p>") {
					t.Errorf("concurrent render %d: %q", i, html)
				}
			})
		}
		wg.Wait()

		// Editing the layout changes no template until it is saved again.
		e.Do(apitest.Request{Method: "PUT", Path: "/v1/templates/brand", Key: e.admin, Body: map[string]any{"subject": "(layout)",
			"html": "<header>Acme 2</header>{{{content}}}"}})
		if html := render(map[string]any{"name": "Ann", "company": map[string]any{"address": "x"}}).Str("html"); html != "<header>Acme</header><p>Hi Ann</p><footer>x</footer>" {
			t.Fatalf("after the layout's edit: %q", html)
		}
		r = e.Do(apitest.Request{Method: "PUT", Path: "/v1/templates/welcome", Key: e.admin, Body: map[string]any{"subject": "Welcome, {{name}}",
			"html": "<p>Hi {{name}}</p>", "layout": brand["id"]}})
		if l := r.Map()["layout"].(map[string]any); l["version"] != float64(2) {
			t.Fatalf("saved again, the layout is %v", l)
		}
		if html := render(map[string]any{"name": "Ann"}).Str("html"); html != "<header>Acme 2</header><p>Hi Ann</p>" {
			t.Fatalf("with layout version 2: %q", html)
		}

		for name, body := range map[string]map[string]any{
			"a cycle":           {"subject": "(layout)", "html": "{{{content}}}", "layout": "welcome"},
			"itself":            {"subject": "(layout)", "html": "{{{content}}}", "layout": "brand"},
			"no content":        {"subject": "(layout)", "html": "<p>x</p>", "layout": "welcome"},
			"an unknown layout": {"subject": "(layout)", "html": "{{{content}}}", "layout": "nope"},
			"a NUL reference":   {"subject": "(layout)", "html": "{{{content}}}", "layout": "a\x00b"},
		} {
			r := e.Do(apitest.Request{Method: "PUT", Path: "/v1/templates/brand", Key: e.admin, Body: body})
			if wantError(t, r, 400, mailroom.ECodeValidation); !hasField(r, "layout") {
				t.Errorf("%s: %s", name, r.Body)
			}
		}
		wantError(t, e.Do(apitest.Request{Method: "DELETE", Path: "/v1/templates/brand", Key: e.admin}), 409, mailroom.ECodeInvalidState)

		// A layout inserts the content unescaped in its html, and somewhere
		// in its text; its subject is not used, nor required.
		e.createTemplate(t, e.admin, map[string]any{"name": "escaped", "subject": "L {{must}}", "html": "<div>{{content}}</div>"})
		e.createTemplate(t, e.admin, map[string]any{"name": "textless", "subject": "L {{must}}", "html": "{{{content}}}", "text": "no content here"})
		e.createTemplate(t, e.admin, map[string]any{"name": "fine", "subject": "L {{must}}", "html": "<div>{{& content}}</div>"})
		for layout, ok := range map[string]bool{"escaped": false, "textless": false, "fine": true} {
			r := e.Do(apitest.Request{Method: "POST", Path: "/v1/templates", Key: e.admin, Body: map[string]any{
				"name": "in-" + layout, "subject": "S", "html": "<p>a&amp;b</p>", "layout": layout}})
			switch {
			case ok && r.Status != 201:
				t.Errorf("layout %s: %d %s", layout, r.Status, r.Body)
			case !ok && (r.Status != 400 || !hasField(r, "layout")):
				t.Errorf("layout %s should be refused: %d %s", layout, r.Status, r.Body)
			}
		}
		r = e.Do(apitest.Request{Method: "POST", Path: "/v1/templates/in-fine/render", Key: e.admin, Body: map[string]any{}})
		if r.Status != 200 || r.Str("html") != "<div><p>a&amp;b</p></div>" {
			t.Fatalf("a layout's subject names are not required: %d %s", r.Status, r.Body)
		}
	})
}
