package resend

import (
	"context"
	"crypto/sha256"
	"fmt"
	"reflect"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/mailroom/mailroom"
)

// Email is the body of Resend's POST /emails and one item of
// POST /emails/batch (https://resend.com/docs/api-reference/emails/send-email),
// read as leniently as Resend reads it: null and "" are absent (the Go SDK
// always sends from, to and subject), to, cc, bcc and reply_to take a
// string or a list, and fields Resend defines that Mailroom does not use
// (topic_id, …) are ignored by the decoder's options.
type Email struct {
	From        string                `json:"from"`
	To          mailroom.AddressList  `json:"to"`
	Cc          mailroom.AddressList  `json:"cc"`
	Bcc         mailroom.AddressList  `json:"bcc"`
	ReplyTo     mailroom.AddressList  `json:"reply_to"`
	Subject     string                `json:"subject"`
	HTML        string                `json:"html"`
	Text        string                `json:"text"`
	Headers     mailroom.HeaderFields `json:"headers"`
	Tags        TagList               `json:"tags"`
	ScheduledAt string                `json:"scheduled_at"`
	Attachments AttachmentList        `json:"attachments"`
	Template    *Template             `json:"template"`
}

// Template is an email's template: its id, or its name, and its
// variables (Resend's template.id takes an id or an alias).
type Template struct {
	ID        string             `json:"id"`
	Variables mailroom.Variables `json:"variables"`
}

// Tag is one of an email's tags, which Resend sends as a list of pairs
// and Mailroom holds as a map.
type Tag struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// maxTags bounds the tags as they are decoded: Mailroom's validation
// takes mailroom.MaxTags and says how many there were, up to this.
const maxTags = 1000

// TagList is an email's tags: at most maxTags as decoded.
type TagList []Tag

// UnmarshalJSONFrom decodes null or an array, stopping at the first item
// past maxTags.
func (l *TagList) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	switch k := dec.PeekKind(); k {
	case 'n':
		_, err := dec.ReadToken()
		*l = nil
		return err
	case '[':
	default:
		if err := dec.SkipValue(); err != nil {
			return err
		}
		return &json.SemanticError{JSONPointer: dec.StackPointer(), JSONKind: k, GoType: reflect.TypeFor[[]Tag]()}
	}
	if _, err := dec.ReadToken(); err != nil {
		return err
	}
	list := TagList{}
	for dec.PeekKind() != ']' {
		if len(list) == maxTags {
			var v mailroom.Validator
			v.Add("tags", "has more than %d tags; at most %d are allowed", maxTags, mailroom.MaxTags)
			return v.Err()
		}
		var t Tag
		if err := json.UnmarshalDecode(dec, &t); err != nil {
			return err
		}
		list = append(list, t)
	}
	_, err := dec.ReadToken()
	*l = list
	return err
}

// Translation is what translating an email needs beyond the email.
type Translation struct {
	// Now is the server's clock, which "in 5 minutes" counts from.
	Now time.Time
	// Fetch fetches attachments given by path; nil refuses them.
	Fetch Fetcher
	// FetchRoom is the bytes that attachments fetched by path may still
	// bring, shared by the emails of one request (a batch holds
	// mailroom.MaxBatchContentBytes); each fetch takes from it.
	FetchRoom *int
}

// SendRequest translates e into Mailroom's send request, which the send
// service validates as it validates /v1's: no rule is applied here that
// the service applies. raw is e's JSON text as it was sent, whose digest
// stands for the request (mailroom.SendRequest.SourceDigest): a retry of
// "in 5 minutes" or of an attachment's path is the same request although
// it translates to another time or fetches again. The error is a
// validation error about what only Resend's forms can get wrong (a
// scheduled_at in no form it reads, a path that cannot be fetched), each
// problem on Mailroom's field name.
func (e *Email) SendRequest(ctx context.Context, t Translation, raw []byte) (*mailroom.SendRequest, error) {
	digest := sha256.Sum256(raw)
	r := &mailroom.SendRequest{
		From:         e.From,
		To:           present(e.To),
		Cc:           present(e.Cc),
		Bcc:          present(e.Bcc),
		ReplyTo:      present(e.ReplyTo),
		Subject:      e.Subject,
		HTML:         e.HTML,
		Text:         e.Text,
		Headers:      e.Headers,
		SourceDigest: digest[:],
	}
	var v mailroom.Validator
	r.Tags = tagMap(&v, e.Tags)
	if e.Template != nil && (e.Template.ID != "" || e.Template.Variables.Present()) {
		id := e.Template.ID
		r.Template, r.Variables = &id, e.Template.Variables
	}
	if e.ScheduledAt != "" {
		at, err := ScheduledAt(e.ScheduledAt, t.Now)
		if err != nil {
			v.Merge(validatorOf(err))
		} else {
			r.ScheduledAt = &at
		}
	}
	var err error
	if r.Attachments, err = e.attachments(ctx, &v, t); err != nil {
		return nil, err
	}
	if err := v.Err(); err != nil {
		return nil, err
	}
	return r, nil
}

// present is an address field with "" as absent: the Go SDK sends
// "to": null, Node may send "cc": "".
func present(l mailroom.AddressList) mailroom.AddressList {
	if len(l) == 1 && l[0] == "" {
		return nil
	}
	return l
}

// tagMap is the tags as Mailroom holds them, name → value; a name given
// twice is refused, for one of its values would be lost.
func tagMap(v *mailroom.Validator, tags TagList) mailroom.TagMap {
	if len(tags) == 0 {
		return nil
	}
	m := make(mailroom.TagMap, len(tags))
	first := map[string]int{}
	for i, t := range tags {
		if j, dup := first[t.Name]; dup {
			v.AddAt("tags", i, "name %q is already the name of tags[%d]; each tag name may be given once", t.Name, j)
			continue
		}
		first[t.Name] = i
		m[t.Name] = t.Value
	}
	return m
}

// attachments translates the attachments, fetching those given by path.
// The error is the service's own (its memory budget is full), not the
// attachment's.
func (e *Email) attachments(ctx context.Context, v *mailroom.Validator, t Translation) (mailroom.AttachmentList, error) {
	if len(e.Attachments) == 0 {
		return nil, nil
	}
	room := mailroom.MaxAttachmentBytes
	for _, a := range e.Attachments {
		room -= a.Content.Len()
	}
	out := make(mailroom.AttachmentList, len(e.Attachments))
	fetchFailed := false
	for i, a := range e.Attachments {
		cid := a.ContentID
		if cid == "" {
			cid = a.InlineContentID
		} else if a.InlineContentID != "" && a.InlineContentID != cid {
			v.AddAt("attachments", i, "content_id %q and inline_content_id %q differ; give one of them", cid, a.InlineContentID)
		}
		out[i] = mailroom.SendAttachment{Filename: a.Filename, Content: a.Content.AsBase64(), ContentType: a.ContentType, ContentID: cid}
		switch {
		case a.Path != "" && a.Content.Given:
			v.AddAt("attachments", i, "has both content and path; give the file's bytes in content or its URL in path, not both")
		case a.Path != "" && fetchFailed:
			// The email is refused already: its other paths are not
			// fetched, so that one that never answers is waited for once.
			v.AddAt("attachments", i, "path %s was not fetched, as an earlier attachment's path could not be", a.Path)
		case a.Path != "":
			f, problem, err := fetch(ctx, t, a.Path, room)
			if err != nil {
				return nil, err
			}
			if problem != "" {
				// The problem is written here, not quoted from the
				// client: it is not cut as a quoted argument would be.
				v.AddAt("attachments", i, "path %s %s", a.Path, mailroom.OwnText(problem))
				fetchFailed = true
				continue
			}
			room -= len(f.Content)
			out[i].Content = Content{Bytes: f.Content}.AsBase64()
			if out[i].Filename == "" {
				out[i].Filename = FilenameFromURL(a.Path)
			}
			if out[i].ContentType == "" {
				out[i].ContentType = f.ContentType
			}
		}
	}
	return out, nil
}

// fetch fetches one path within room, the bytes this message's
// attachments have left, and the request's FetchRoom. problem says why
// the file cannot be had; err is the service's own failure.
func fetch(ctx context.Context, t Translation, url string, room int) (f *Fetched, problem string, err error) {
	if t.Fetch == nil {
		return nil, "cannot be fetched: this server fetches no attachments; give the file's bytes in content", nil
	}
	limit := room
	if t.FetchRoom != nil {
		limit = min(limit, *t.FetchRoom)
	}
	if limit <= 0 {
		return nil, "cannot be fetched: the request's attachments already hold as many bytes as a message or a batch may", nil
	}
	f, err = t.Fetch.Fetch(ctx, url, limit)
	if err != nil {
		if _, own := err.(*mailroom.Error); own {
			return nil, "", err
		}
		return nil, err.Error(), nil
	}
	if t.FetchRoom != nil {
		*t.FetchRoom -= len(f.Content)
	}
	return f, "", nil
}

// validatorOf holds a validation error's details, to be merged with
// others.
func validatorOf(err error) *mailroom.Validator {
	var v mailroom.Validator
	if e, ok := err.(*mailroom.Error); ok {
		for _, d := range e.Details {
			if d.Index != nil {
				v.AddAt(d.Field, *d.Index, "%s", mailroom.OwnText(d.Message))
			} else {
				v.Add(d.Field, "%s", mailroom.OwnText(d.Message))
			}
		}
		return &v
	}
	v.Add("", "%s", fmt.Sprint(err))
	return &v
}
