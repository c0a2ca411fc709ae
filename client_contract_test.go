package mailroom_test

import (
	"encoding/json"
	"maps"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mailroom/mailroom/client"
	"github.com/mailroom/mailroom/client/api"
)

// The Go client (module github.com/mailroom/mailroom/client) against the
// published contract, http/openapi.json: every operation has a method, and
// every schema's properties are its Go type's JSON fields, both ways.

// clientMethods maps each operation of the OpenAPI document to the methods
// of *client.Client that call it: the page and the iterator of a list.
// An operation missing here, or a name that is no method, fails the test.
var clientMethods = map[string][]string{
	"GET /healthz":                {"Health"},
	"GET /readyz":                 {"Ready"},
	"GET /v1/openapi.json":        {"OpenAPI"},
	"POST /v1/api-keys":           {"CreateAPIKey"},
	"GET /v1/api-keys":            {"ListAPIKeys", "AllAPIKeys"},
	"GET /v1/api-keys/current":    {"CurrentAPIKey"},
	"GET /v1/api-keys/{keyId}":    {"GetAPIKey"},
	"DELETE /v1/api-keys/{keyId}": {"RevokeAPIKey"},

	"POST /v1/domains":                      {"CreateDomain"},
	"GET /v1/domains":                       {"ListDomains", "AllDomains"},
	"GET /v1/domains/{domain}":              {"GetDomain"},
	"PATCH /v1/domains/{domain}":            {"UpdateDomain"},
	"DELETE /v1/domains/{domain}":           {"DeleteDomain"},
	"POST /v1/domains/{domain}/verify":      {"VerifyDomain"},
	"POST /v1/domains/{domain}/dkim/rotate": {"RotateDomainDKIM"},

	"POST /v1/templates":                              {"CreateTemplate"},
	"GET /v1/templates":                               {"ListTemplates", "AllTemplates"},
	"GET /v1/templates/{template}":                    {"GetTemplate"},
	"PUT /v1/templates/{template}":                    {"UpdateTemplate"},
	"DELETE /v1/templates/{template}":                 {"DeleteTemplate"},
	"GET /v1/templates/{template}/versions":           {"ListTemplateVersions", "AllTemplateVersions"},
	"GET /v1/templates/{template}/versions/{version}": {"GetTemplateVersion"},
	"POST /v1/templates/{template}/render":            {"RenderTemplate"},

	"POST /v1/send":                                    {"Send"},
	"POST /v1/send/batch":                              {"SendBatch"},
	"GET /v1/scheduled":                                {"ListScheduled", "AllScheduled"},
	"PATCH /v1/scheduled/{messageId}":                  {"RescheduleMessage"},
	"DELETE /v1/scheduled/{messageId}":                 {"CancelMessage"},
	"GET /v1/messages":                                 {"ListMessages", "AllMessages"},
	"GET /v1/messages/{messageId}":                     {"GetMessage"},
	"GET /v1/messages/{messageId}/raw":                 {"GetRawMessage"},
	"GET /v1/received":                                 {"ListReceived", "AllReceived"},
	"GET /v1/received/{id}":                            {"GetReceived"},
	"GET /v1/received/{id}/raw":                        {"GetReceivedRaw"},
	"GET /v1/received/{id}/attachments/{attachmentId}": {"GetReceivedAttachment"},
	"GET /v1/suppressions":                             {"ListSuppressions", "AllSuppressions"},
	"POST /v1/suppressions":                            {"AddSuppression"},
	"GET /v1/suppressions/{address}":                   {"GetSuppression"},
	"DELETE /v1/suppressions/{address}":                {"DeleteSuppression"},

	"POST /v1/webhooks":                    {"CreateWebhook"},
	"GET /v1/webhooks":                     {"ListWebhooks", "AllWebhooks"},
	"GET /v1/webhooks/{id}":                {"GetWebhook"},
	"PATCH /v1/webhooks/{id}":              {"UpdateWebhook"},
	"DELETE /v1/webhooks/{id}":             {"DeleteWebhook"},
	"POST /v1/webhooks/{id}/rotate-secret": {"RotateWebhookSecret"},
	"GET /v1/webhooks/{id}/deliveries":     {"ListWebhookDeliveries", "AllWebhookDeliveries"},
	"POST /v1/webhooks/{id}/test":          {"TestWebhook"},
	"GET /v1/events":                       {"ListEvents", "AllEvents"},
	"GET /v1/audit-log":                    {"ListAuditLog", "AllAuditLog"},
	"POST /v1/events/{eventId}/replay":     {"ReplayEvent"},

	// The unsubscribe link is the mail recipient's, followed from a mail
	// client, not an API client's: it takes no key. No method, on purpose.
	"GET /v1/unsubscribe/{token}":  nil,
	"POST /v1/unsubscribe/{token}": nil,
	// So are tracked mail's pixel and links (docs/api.md "Engagement
	// tracking").
	"GET /t/o/{token}": nil,
	"GET /t/c/{token}": nil,
}

// Exported methods of *client.Client that call no route.
var clientHelpers = []string{"BaseURL"}

// schemaTypes maps each object schema of components.schemas to its type in
// package api.
var schemaTypes = map[string]reflect.Type{
	"Status":                 reflect.TypeFor[api.Status](),
	"Error":                  reflect.TypeFor[api.ErrorBody](),
	"ApiKeyCreateRequest":    reflect.TypeFor[api.APIKeyCreateRequest](),
	"ApiKey":                 reflect.TypeFor[api.APIKey](),
	"ApiKeyCreated":          reflect.TypeFor[api.APIKeyCreated](),
	"ApiKeyList":             reflect.TypeFor[api.List[api.APIKey]](),
	"DomainCreateRequest":    reflect.TypeFor[api.DomainCreateRequest](),
	"DnsRecord":              reflect.TypeFor[api.DNSRecord](),
	"Domain":                 reflect.TypeFor[api.Domain](),
	"DomainHealthCheck":      reflect.TypeFor[api.DomainHealthCheck](),
	"DomainList":             reflect.TypeFor[api.List[api.Domain]](),
	"DomainUpdateRequest":    reflect.TypeFor[api.DomainUpdateRequest](),
	"TlsInfo":                reflect.TypeFor[api.TLSInfo](),
	"TemplateRequest":        reflect.TypeFor[api.TemplateRequest](),
	"Template":               reflect.TypeFor[api.Template](),
	"TemplateSummary":        reflect.TypeFor[api.TemplateSummary](),
	"TemplateList":           reflect.TypeFor[api.List[api.TemplateSummary]](),
	"TemplateRenderRequest":  reflect.TypeFor[api.TemplateRenderRequest](),
	"TemplateRendered":       reflect.TypeFor[api.TemplateRendered](),
	"SendRequest":            reflect.TypeFor[api.SendRequest](),
	"SendResult":             reflect.TypeFor[api.SendResult](),
	"BatchSendRequest":       reflect.TypeFor[api.BatchSendRequest](),
	"BatchSendResult":        reflect.TypeFor[api.BatchSendResult](),
	"RescheduleRequest":      reflect.TypeFor[api.RescheduleRequest](),
	"Tracking":               reflect.TypeFor[api.Tracking](),
	"TrackingOverride":       reflect.TypeFor[api.TrackingOverride](),
	"TrackedLink":            reflect.TypeFor[api.TrackedLink](),
	"Recipient":              reflect.TypeFor[api.Recipient](),
	"Event":                  reflect.TypeFor[api.MessageEvent](),
	"Message":                reflect.TypeFor[api.Message](),
	"MessageList":            reflect.TypeFor[api.List[api.Message]](),
	"Suppression":            reflect.TypeFor[api.Suppression](),
	"Unsubscribed":           reflect.TypeFor[api.Unsubscribed](),
	"SuppressionList":        reflect.TypeFor[api.List[api.Suppression]](),
	"WebhookCreateRequest":   reflect.TypeFor[api.WebhookCreateRequest](),
	"WebhookUpdateRequest":   reflect.TypeFor[api.WebhookUpdateRequest](),
	"Webhook":                reflect.TypeFor[api.Webhook](),
	"WebhookCreated":         reflect.TypeFor[api.WebhookCreated](),
	"WebhookList":            reflect.TypeFor[api.List[api.Webhook]](),
	"WebhookSecret":          reflect.TypeFor[api.WebhookSecret](),
	"WebhookAttempt":         reflect.TypeFor[api.WebhookAttempt](),
	"WebhookAttemptList":     reflect.TypeFor[api.List[api.WebhookAttempt]](),
	"EventRecord":            reflect.TypeFor[api.EventRecord](),
	"EventList":              reflect.TypeFor[api.List[api.EventRecord]](),
	"AuditEntry":             reflect.TypeFor[api.AuditEntry](),
	"AuditEntryList":         reflect.TypeFor[api.List[api.AuditEntry]](),
	"AuditActor":             reflect.TypeFor[api.AuditActor](),
	"AuditTarget":            reflect.TypeFor[api.AuditTarget](),
	"ReplayResult":           reflect.TypeFor[api.ReplayResult](),
	"ReceivedSummary":        reflect.TypeFor[api.ReceivedSummary](),
	"ReceivedMessage":        reflect.TypeFor[api.ReceivedMessage](),
	"ReceivedList":           reflect.TypeFor[api.List[api.ReceivedSummary]](),
	"ReceivedAttachment":     reflect.TypeFor[api.ReceivedAttachment](),
	"ReceivedAuthentication": reflect.TypeFor[api.ReceivedAuthentication](),
	"ReceivedHeader":         reflect.TypeFor[api.ReceivedHeader](),
	"DkimSignatureResult":    reflect.TypeFor[api.DKIMSignatureResult](),
	// BatchItemError is an Error narrowed (allOf): a failed item of
	// BatchSendResult.data, whose items api.BatchItemResult holds as the
	// union of SendResult and Error (TestClientBatchItemUnion).
	"BatchItemError": nil,
}

// schemaEnums maps each string schema of components.schemas to the
// constants of package api.
var schemaEnums = map[string][]string{
	"Scope":                strs(api.Scopes()),
	"EventType":            strs(api.EventTypes()),
	"AuditAction":          strs(api.AuditActions()),
	"WebhookEventSelector": append(strs(api.EventTypes()), string(api.EventAll)),
	"Timestamp":            nil, // a date-time: time.Time
}

// propertyEnums maps schema.property to the constants of package api.
var propertyEnums = map[string][]string{
	"Error.error": {api.CodeInvalidJSON, api.CodeValidation, api.CodeMissingAPIKey, api.CodeInvalidAPIKey, api.CodeAPIKeyRevoked,
		api.CodeInsufficientScope, api.CodeDomainNotVerified, api.CodeNotFound, api.CodeMethodNotAllowed, api.CodeIdempotencyKeyReused,
		api.CodeAlreadyExists, api.CodeInvalidState, api.CodePayloadTooLarge, api.CodeUnsupportedMediaType, api.CodeRateLimited,
		api.CodeServiceUnavailable, api.CodeInternal},
	"ApiKey.status":         strs([]api.KeyStatus{api.KeyActive, api.KeyRevoked}),
	"Message.status":        strs(api.MessageStatuses()),
	"Message.category":      strs([]api.Category{api.CategoryTransactional, api.CategoryMarketing}),
	"SendRequest.category":  strs([]api.Category{api.CategoryTransactional, api.CategoryMarketing}),
	"Recipient.status":      strs(api.RecipientStatuses()),
	"SendResult.status":     strs([]api.SendStatus{api.SendQueued, api.SendScheduled, api.SendDuplicate}),
	"Domain.status":         strs([]api.DomainStatus{api.DomainPending, api.DomainVerified, api.DomainFailed, api.DomainTemporaryFailure}),
	"DnsRecord.purpose":     strs([]api.RecordPurpose{api.PurposeDKIM, api.PurposeSPF, api.PurposeReturnPath, api.PurposeDMARC, api.PurposeReceiving}),
	"DnsRecord.status":      strs([]api.RecordStatus{api.RecordPending, api.RecordVerified, api.RecordFailed}),
	"Suppression.reason":    strs([]api.SuppressionReason{api.SuppressedHardBounce, api.SuppressedComplaint, api.SuppressedManual, api.SuppressedUnsubscribe}),
	"WebhookAttempt.status": strs([]api.AttemptStatus{api.AttemptSucceeded, api.AttemptFailed}),
	// A message's timeline: the events of its recipients (no domain,
	// webhook or received-mail event).
	"Event.type":               strs(append(api.EventTypes()[:9:9], api.EventEmailOpened, api.EventEmailClicked)),
	"Domain.tls":               strs([]api.DomainTLS{api.DomainTLSOpportunistic, api.DomainTLSEnforced}),
	"AuditActor.type":          strs([]api.AuditActorType{api.AuditByAPIKey, api.AuditByCLI, api.AuditBySystem}),
	"AuditTarget.type":         {"api_key", "domain", "webhook", "template", "suppression", "account"},
	"DomainUpdateRequest.tls":  strs([]api.DomainTLS{api.DomainTLSOpportunistic, api.DomainTLSEnforced}),
	"TlsInfo.policy":           strs([]api.TLSPolicy{api.TLSPolicyRequireTLS, api.TLSPolicyMTASTS, api.TLSPolicyEnforced, api.TLSPolicyOpportunistic}),
	"DomainHealthCheck.status": strs([]api.DomainHealthStatus{api.DomainHealthPass, api.DomainHealthWarn, api.DomainHealthFail}),
	"DomainHealthCheck.name": {api.DomainCheckDMARC, api.DomainCheckSPFCoversSending, api.DomainCheckFCrDNS,
		api.DomainCheckReturnPathMX, api.DomainCheckMTASTS, api.DomainCheckTLSRPT, api.DomainCheckDNSBL},

	"DkimSignatureResult.result":   strs(api.AuthResults()),
	"ReceivedAuthentication.spf":   strs(api.AuthResults()),
	"ReceivedAuthentication.dkim":  strs(api.AuthResults()),
	"ReceivedAuthentication.dmarc": strs(api.AuthResults()),

	// and null ("" here), for a recipient never deferred
	"Recipient.lastDeferralReason": append(strs(api.DeferralReasons()), ""),
}

// requestBodies maps the operations whose JSON body is not a component
// schema to their type in package api.
var requestBodies = map[string]reflect.Type{
	"POST /v1/suppressions": reflect.TypeFor[api.SuppressionRequest](),
}

func strs[S ~string](s []S) []string {
	out := make([]string, len(s))
	for i, v := range s {
		out[i] = string(v)
	}
	return out
}

type openAPIDoc struct {
	Paths      map[string]map[string]json.RawMessage `json:"paths"`
	Components struct {
		Schemas   map[string]map[string]any `json:"schemas"`
		Responses map[string]any            `json:"responses"`
	} `json:"components"`
}

func loadOpenAPI(t *testing.T) *openAPIDoc {
	t.Helper()
	raw, err := os.ReadFile("http/openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc openAPIDoc
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	return &doc
}

// resendTag tags the operations of Resend's API (docs/api.md "Moving
// from Resend"), which the contract of this file leaves out: the Go client
// is for /v1, Mailroom's own API, and the clients of Resend's routes are
// Resend's own SDKs, which the http tests hold these routes to (their
// answers are checked against the document, as /v1's are).
const resendTag = "Resend-compatible"

// operations returns "METHOD /path" for every operation of the document
// that the Go client calls: all but those tagged resendTag.
func (d *openAPIDoc) operations() []string {
	var ops []string
	for op := range d.allOperations() {
		if !d.isResend(op) {
			ops = append(ops, op)
		}
	}
	slices.Sort(ops)
	return ops
}

// allOperations maps "METHOD /path" to each operation of the document.
func (d *openAPIDoc) allOperations() map[string]json.RawMessage {
	ops := map[string]json.RawMessage{}
	for path, item := range d.Paths {
		for method, op := range item {
			switch method {
			case "get", "put", "post", "delete", "patch", "head", "options", "trace":
				ops[strings.ToUpper(method)+" "+path] = op
			}
		}
	}
	return ops
}

// isResend says whether op is one of Resend's routes.
func (d *openAPIDoc) isResend(op string) bool {
	var o struct {
		Tags []string `json:"tags"`
	}
	_ = json.Unmarshal(d.allOperations()[op], &o)
	return slices.Contains(o.Tags, resendTag)
}

// resendOnlySchemas are the component schemas only Resend's operations
// use, directly or through other schemas: Resend's wire shapes, which
// package api (the Go client's, for /v1) has no types for.
func (d *openAPIDoc) resendOnlySchemas() map[string]bool {
	used := func(resend bool) map[string]bool {
		seen := map[string]bool{}
		var walk func(v any)
		walk = func(v any) {
			switch v := v.(type) {
			case map[string]any:
				ref, _ := v["$ref"].(string)
				if name, ok := strings.CutPrefix(ref, "#/components/schemas/"); ok && !seen[name] {
					seen[name] = true
					walk(d.Components.Schemas[name])
				}
				if name, ok := strings.CutPrefix(ref, "#/components/responses/"); ok {
					walk(d.Components.Responses[name])
				}
				for _, x := range v {
					walk(x)
				}
			case []any:
				for _, x := range v {
					walk(x)
				}
			}
		}
		for op, raw := range d.allOperations() {
			if d.isResend(op) == resend {
				var v any
				_ = json.Unmarshal(raw, &v)
				walk(v)
			}
		}
		return seen
	}
	resend, mailroom := used(true), used(false)
	for name := range resend {
		if mailroom[name] {
			delete(resend, name)
		}
	}
	return resend
}

// Resend's routes are the document's operations outside /v1 tagged
// resendTag: no /v1 operation escapes the contract by the tag, and the
// document's operations of Resend's routes are tagged.
func TestResendOperationsAreTaggedAndOutsideV1(t *testing.T) {
	doc := loadOpenAPI(t)
	n := 0
	for op := range doc.allOperations() {
		_, path, _ := strings.Cut(op, " ")
		switch resend := doc.isResend(op); {
		case resend && strings.HasPrefix(path, "/v1/"):
			t.Errorf("%s is tagged %s but is Mailroom's own", op, resendTag)
		case resend:
			n++
		case !strings.HasPrefix(path, "/v1/") && !strings.HasPrefix(path, "/t/") && path != "/healthz" && path != "/readyz":
			t.Errorf("%s is outside /v1 and not tagged %s", op, resendTag)
		}
	}
	if n < 20 {
		t.Errorf("only %d operations tagged %s", n, resendTag)
	}
}

func TestClientHasAMethodForEveryRoute(t *testing.T) {
	doc := loadOpenAPI(t)
	ops := doc.operations()
	if len(ops) < 40 {
		t.Fatalf("only %d operations read from http/openapi.json", len(ops))
	}
	ct := reflect.TypeFor[*client.Client]()
	used := map[string]bool{}
	for _, op := range ops {
		names, ok := clientMethods[op]
		if !ok {
			t.Errorf("%s is in the OpenAPI document but has no client method: add one to package client and to clientMethods", op)
			continue
		}
		for _, name := range names {
			if _, ok := ct.MethodByName(name); !ok {
				t.Errorf("%s: clientMethods names %s, which *client.Client does not have", op, name)
			}
			used[name] = true
		}
	}
	for op := range clientMethods {
		if !slices.Contains(ops, op) {
			t.Errorf("clientMethods names %s, which the OpenAPI document does not have", op)
		}
	}
	for m := range ct.Methods() {
		if !used[m.Name] && !slices.Contains(clientHelpers, m.Name) {
			t.Errorf("*client.Client has %s, which calls no route of clientMethods", m.Name)
		}
	}
	// A list's iterator is its page method's All… twin.
	for op, names := range clientMethods {
		if len(names) == 2 && names[1] != "All"+strings.TrimPrefix(names[0], "List") {
			t.Errorf("%s: iterator %s does not follow List…/All… naming", op, names[1])
		}
	}
}

func TestClientTypesMatchTheSchemas(t *testing.T) {
	doc := loadOpenAPI(t)
	schemas := doc.Components.Schemas
	resendOnly := doc.resendOnlySchemas()
	for name, schema := range schemas {
		if resendOnly[name] {
			continue // Resend's wire shapes: see resendTag
		}
		typ, isObject := schemaTypes[name]
		enum, isEnum := schemaEnums[name]
		switch {
		case isObject && typ != nil:
			checkSchema(t, schemas, name, schema, typ, 0)
		case isObject: // explained in schemaTypes
		case isEnum:
			if got := stringsOf(schema["enum"]); !slices.Equal(got, enum) {
				t.Errorf("schema %s: enum %q, package api %q", name, got, enum)
			}
		default:
			t.Errorf("schema %s has no counterpart in package api: add it to schemaTypes or schemaEnums", name)
		}
	}
	for name := range schemaTypes {
		if _, ok := schemas[name]; !ok {
			t.Errorf("schemaTypes names %s, which the OpenAPI document does not have", name)
		}
	}
	for key, want := range propertyEnums {
		schema, prop, _ := strings.Cut(key, ".")
		p := resolve(schemas, propertiesOf(schemas[schema])[prop])
		if got := stringsOf(p["enum"]); !slices.Equal(got, want) {
			t.Errorf("%s: enum %q, package api %q", key, got, want)
		}
	}
	for op, typ := range requestBodies {
		method, path, _ := strings.Cut(op, " ")
		var o struct {
			RequestBody struct {
				Content map[string]struct {
					Schema map[string]any `json:"schema"`
				} `json:"content"`
			} `json:"requestBody"`
		}
		if err := json.Unmarshal(doc.Paths[path][strings.ToLower(method)], &o); err != nil {
			t.Fatal(err)
		}
		checkSchema(t, schemas, op+" body", o.RequestBody.Content["application/json"].Schema, typ, 0)
	}
}

// A batch's data[i] is a SendResult or an Error: api.BatchItemResult holds
// the members of both, each left out when unset.
func TestClientBatchItemUnion(t *testing.T) {
	schemas := loadOpenAPI(t).Components.Schemas
	want := slices.Sorted(maps.Keys(propertiesOf(schemas["SendResult"])))
	want = append(want, slices.Sorted(maps.Keys(propertiesOf(schemas["Error"])))...)
	slices.Sort(want)
	var got []string
	for name, f := range jsonFields(reflect.TypeFor[api.BatchItemResult]()) {
		got = append(got, name)
		if !f.omitempty {
			t.Errorf("BatchItemResult.%s is written when unset", name)
		}
	}
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("BatchItemResult has %q, SendResult and Error %q", got, want)
	}
	items := resolve(schemas, resolve(schemas, propertiesOf(schemas["BatchSendResult"])["data"])["items"])
	if n := len(items["oneOf"].([]any)); n != 2 {
		t.Errorf("BatchSendResult.data items are one of %d schemas, not 2", n)
	}
}

type jsonField struct {
	typ       reflect.Type
	omitempty bool
}

// jsonFields returns the JSON members of struct type t as encoding/json
// writes them, embedded structs (and pointers to structs) flattened.
func jsonFields(t reflect.Type) map[string]jsonField {
	out := map[string]jsonField{}
	for f := range t.Fields() {
		tag := f.Tag.Get("json")
		name, opts, _ := strings.Cut(tag, ",")
		if tag == "-" || !f.IsExported() && !f.Anonymous {
			continue
		}
		if f.Anonymous && name == "" && f.Type.Kind() == reflect.Struct {
			maps.Copy(out, jsonFields(f.Type))
			continue
		}
		if f.Anonymous && name == "" && f.Type.Kind() == reflect.Pointer && f.Type.Elem().Kind() == reflect.Struct {
			// encoding/json flattens an embedded pointer's fields too, and
			// leaves them all out while it is nil: each is optional.
			for n, inner := range jsonFields(f.Type.Elem()) {
				inner.omitempty = true
				out[n] = inner
			}
			continue
		}
		if name == "" {
			name = f.Name
		}
		out[name] = jsonField{typ: f.Type, omitempty: strings.Contains(","+opts+",", ",omitempty,")}
	}
	return out
}

// checkSchema compares an object schema with Go type t: the same names
// both ways, a required member never left out and an optional one left out
// when unset, null only where Go has nil, the JSON types, and the same
// for the objects inside.
func checkSchema(t *testing.T, schemas map[string]map[string]any, where string, schema map[string]any, typ reflect.Type, depth int) {
	t.Helper()
	schema = resolve(schemas, schema)
	props := propertiesOf(schema)
	for typ.Kind() == reflect.Pointer {
		typ = typ.Elem()
	}
	if props == nil || depth > 8 {
		return
	}
	if typ.Kind() != reflect.Struct {
		t.Errorf("%s: an object with properties, but Go type %s", where, typ)
		return
	}
	fields := jsonFields(typ)
	for name := range props {
		if _, ok := fields[name]; !ok {
			t.Errorf("%s.%s is in the schema but not in %s", where, name, typ)
		}
	}
	required := stringsOf(schema["required"])
	for name, f := range fields {
		p, ok := props[name]
		if !ok {
			t.Errorf("%s has %s, which the schema %s does not", typ, name, where)
			continue
		}
		prop := resolve(schemas, p)
		at := where + "." + name
		if req := slices.Contains(required, name); req == f.omitempty {
			t.Errorf("%s: required %v in the schema, omitempty %v in %s", at, req, f.omitempty, typ)
		}
		types := typesOf(prop)
		if slices.Contains(types, "null") && !nilable(f.typ) {
			t.Errorf("%s may be null, but %s is %s", at, typ, f.typ)
		}
		if f.typ.Kind() == reflect.Pointer && !f.omitempty && !slices.Contains(types, "null") {
			t.Errorf("%s is never null, but %s is the pointer %s", at, typ, f.typ)
		}
		if !jsonTypeOK(types, prop, f.typ) {
			t.Errorf("%s is %v in the schema, %s in %s", at, types, f.typ, typ)
		}
		switch elem := f.typ; {
		case slices.Contains(types, "array") && elem.Kind() == reflect.Slice:
			checkSchema(t, schemas, at+"[]", resolve(schemas, prop["items"]), elem.Elem(), depth+1)
		default:
			checkSchema(t, schemas, at, prop, elem, depth+1)
		}
	}
}

// resolve follows $ref to the schema it names; v is a schema, or nil.
func resolve(schemas map[string]map[string]any, v any) map[string]any {
	s, _ := v.(map[string]any)
	for range 8 {
		ref, ok := s["$ref"].(string)
		if !ok {
			return s
		}
		s = schemas[strings.TrimPrefix(ref, "#/components/schemas/")]
	}
	return s
}

func propertiesOf(s map[string]any) map[string]any {
	p, _ := s["properties"].(map[string]any)
	return p
}

func stringsOf(v any) []string {
	var out []string
	list, _ := v.([]any)
	for _, x := range list {
		s, _ := x.(string)
		out = append(out, s)
	}
	return out
}

func typesOf(s map[string]any) []string {
	switch t := s["type"].(type) {
	case string:
		return []string{t}
	case []any:
		return stringsOf(t)
	}
	return nil
}

func nilable(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Pointer, reflect.Map, reflect.Slice, reflect.Interface:
		return true
	}
	return false
}

var (
	timeType = reflect.TypeFor[time.Time]()
	rawType  = reflect.TypeFor[json.RawMessage]()
)

// jsonTypeOK says whether a Go type writes one of the schema's JSON types.
func jsonTypeOK(types []string, prop map[string]any, t reflect.Type) bool {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if len(types) == 0 {
		return true // const or enum alone: checked by value
	}
	for _, typ := range types {
		switch typ {
		case "null":
			continue
		case "string":
			if t == timeType {
				if prop["format"] != "date-time" {
					return false
				}
				continue
			}
			if t == reflect.TypeFor[[]byte]() {
				if prop["contentEncoding"] != "base64" {
					return false
				}
				continue
			}
			if t.Kind() == reflect.String {
				continue
			}
			if t.Kind() == reflect.Slice && slices.Contains(types, "array") {
				continue // a string or an array of them (AddressList)
			}
			return false
		case "integer":
			switch t.Kind() {
			case reflect.Int, reflect.Int32, reflect.Int64:
				continue
			}
			return false
		case "boolean":
			if t.Kind() != reflect.Bool {
				return false
			}
		case "array":
			if t.Kind() != reflect.Slice || t == rawType {
				return false
			}
		case "object":
			switch {
			case t == rawType, t.Kind() == reflect.Struct && t != timeType, t.Kind() == reflect.Map, t.Kind() == reflect.Interface:
				continue
			}
			return false
		}
	}
	return true
}
