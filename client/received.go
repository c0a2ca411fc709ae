package client

import (
	"context"
	"iter"
	"mime"
	"net/http"
	"net/url"
	"time"

	"github.com/mailroom/mailroom/client/api"
)

// ReceivedListOptions are the filters of GET /v1/received (docs/api.md
// "Receiving mail"), all of which must match, and its paging. A zero
// field filters nothing.
type ReceivedListOptions struct {
	// To is an envelope recipient; From the header's From address.
	To   string
	From string
	// Since (inclusive) and Until (exclusive) bound the time received.
	Since time.Time
	Until time.Time

	Limit  int
	Cursor string
}

func (o *ReceivedListOptions) values() url.Values {
	if o == nil {
		return url.Values{}
	}
	q := (&ListOptions{Limit: o.Limit, Cursor: o.Cursor}).values()
	setNonEmpty(q, "to", o.To)
	setNonEmpty(q, "from", o.From)
	setTime(q, "since", o.Since)
	setTime(q, "until", o.Until)
	return q
}

// ListReceived answers a page of the mail the account's receiving domains
// took, newest first, with filters: GET /v1/received (scope receive).
// The messages come without their header fields and bodies (GetReceived
// has them).
func (c *Client) ListReceived(ctx context.Context, opts *ReceivedListOptions) (*List[ReceivedSummary], error) {
	return list[api.ReceivedSummary](ctx, c, "/v1/received", opts.values())
}

// AllReceived iterates over the received mail with filters: ListReceived
// page by page.
func (c *Client) AllReceived(ctx context.Context, opts *ReceivedListOptions) iter.Seq2[ReceivedSummary, error] {
	o := deref(opts)
	o.Limit = pageSize(o.Limit)
	return pages(ctx, o.Cursor, func(ctx context.Context, cursor string) (*List[ReceivedSummary], error) {
		page := o
		page.Cursor = cursor
		return c.ListReceived(ctx, &page)
	})
}

// GetReceived answers one received message, parsed: its header fields,
// text, HTML, attachments' metadata and verdicts: GET /v1/received/{id}
// (scope receive).
func (c *Client) GetReceived(ctx context.Context, id string) (*ReceivedMessage, error) {
	out := new(ReceivedMessage)
	return result(out, c.get(ctx, "/v1/received/"+pathEscape(id), out))
}

// GetReceivedRaw answers a received message's stored bytes: the
// Authentication-Results and Received fields the service added, then the
// bytes received: GET /v1/received/{id}/raw (scope receive).
func (c *Client) GetReceivedRaw(ctx context.Context, id string) ([]byte, error) {
	var raw []byte
	err := c.do(ctx, &call{method: "GET", path: "/v1/received/" + pathEscape(id) + "/raw", mode: retrySafe, raw: &raw})
	if err != nil {
		return nil, err
	}
	return raw, nil
}

// AttachmentContent is one attachment of a received message, downloaded.
type AttachmentContent struct {
	// Filename is the one Content-Disposition names, "" when none.
	Filename    string
	ContentType string
	// Content is the decoded bytes, as the sender attached them.
	Content []byte
}

// GetReceivedAttachment downloads one attachment of a received message:
// GET /v1/received/{id}/attachments/{attachmentId} (scope receive).
func (c *Client) GetReceivedAttachment(ctx context.Context, id, attachmentID string) (*AttachmentContent, error) {
	var raw []byte
	var header http.Header
	err := c.do(ctx, &call{method: "GET", path: "/v1/received/" + pathEscape(id) + "/attachments/" + pathEscape(attachmentID),
		mode: retrySafe, raw: &raw, answerHeader: &header})
	if err != nil {
		return nil, err
	}
	out := &AttachmentContent{ContentType: header.Get("Content-Type"), Content: raw}
	// mime decodes RFC 6266's filename* (RFC 8187) and prefers it.
	if _, params, err := mime.ParseMediaType(header.Get("Content-Disposition")); err == nil {
		out.Filename = params["filename"]
	}
	return out, nil
}
