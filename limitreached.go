package mailroom

// LimitReached is the refusal of something past a limit the operator sets
// on what a tenant can make (docs/api.md "What an account can make"): a
// validation_error on field, since the request is fine and its owner
// full. It says how many the owner has, the limit, what the client can do
// instead, and which serve flag sets the limit.
type LimitReached struct {
	Field  string // the request's field: name, url
	Owner  string // "account", "template"
	Things string // what is counted, plural: "domains"
	Remedy string // what the client can do: "delete one first"
	Flag   string // the serve flag that sets it: "max-domains"
}

// Err is the refusal of one more, the owner having n of at most max.
func (l LimitReached) Err(n, max int) error {
	var v Validator
	v.Add(l.Field, "this %s has %d %s, the most it may have (%d); %s (the operator sets the limit with serve --%s)",
		l.Owner, n, l.Things, max, l.Remedy, l.Flag)
	return v.Err()
}

// The limits on what a tenant can make.
var (
	DomainLimit          = LimitReached{"name", "account", "domains", "delete one first", "max-domains"}
	TemplateLimit        = LimitReached{"name", "account", "templates", "delete one first", "max-templates"}
	TemplateVersionLimit = LimitReached{"name", "template", "versions",
		"save the new content as a new template under another name", "max-template-versions"}
	WebhookLimit = LimitReached{"url", "account", "webhook endpoints", "delete one first", "max-webhooks"}
)
