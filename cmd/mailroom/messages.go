package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/mailroom/mailroom/client"
	"github.com/mailroom/mailroom/client/api"
)

// The email log through the API: `mailroom messages list|get|raw`. Times
// are printed in UTC, RFC 3339, as the API writes them.

// messagesList is `mailroom messages list`: GET /v1/messages as a table.
func messagesList(ctx context.Context, c *command, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet(c.name)
	var af apiFlags
	af.register(fs)
	var tags tagsFlag
	status := fs.String("status", "", "only messages in this `STATUS`: "+joinStatuses())
	to := fs.String("to", "", "only messages with this `ADDRESS` among to, cc and bcc (ignoring case)")
	from := fs.String("from", "", "only messages from this bare `ADDRESS` (ignoring case)")
	fs.Var(&tags, "tag", "only messages with this tag, `KEY:VALUE` (or KEY=VALUE); repeatable, and all must match")
	category := fs.String("category", "", "only messages of this `CATEGORY`: transactional or marketing")
	template := fs.String("template", "", "only messages rendered from the template of this `NAME` (or tpl_… id)")
	since := fs.String("since", "", "only messages created at or after `TIME`: RFC 3339, a date (UTC), or a duration ago (90m, 24h, 7d)")
	until := fs.String("until", "", "only messages created before `TIME`, written as for --since")
	event := fs.String("event", "", "only messages some recipient of which opened or clicked (`opened|clicked`; docs/api.md \"Engagement tracking\")")
	limit := fs.Int("limit", 20, "messages per page, `N` from 1 to 100 (with --all, per request)")
	cursor := fs.String("cursor", "", "the page after the one that ended at this `CURSOR` (with the same filters)")
	all := fs.Bool("all", false, "every message that matches, page after page")
	asJSON := fs.Bool("json", false, "print the API's JSON: the page ({data, nextCursor}), or with --all an array of every message")
	rest, err := c.parse(fs, args, stdout)
	if err != nil {
		return err
	}
	if len(rest) != 0 {
		return usageError{fmt.Sprintf("messages list takes no arguments, got %q", rest)}
	}
	opts := &client.MessageListOptions{Status: client.MessageStatus(*status), To: *to, From: *from, Tags: tags,
		Category: client.Category(*category), Template: *template, Engagement: client.Engagement(*event), Limit: *limit, Cursor: *cursor}
	if *status != "" && !slices.Contains(api.MessageStatuses(), opts.Status) {
		return usageError{fmt.Sprintf("--status %q is none of %s", *status, joinStatuses())}
	}
	switch opts.Category {
	case "", client.CategoryTransactional, client.CategoryMarketing:
	default:
		return usageError{fmt.Sprintf("--category is transactional or marketing, not %q", *category)}
	}
	switch opts.Engagement {
	case "", client.EngagementOpened, client.EngagementClicked:
	default:
		return usageError{fmt.Sprintf("--event is opened or clicked, not %q", *event)}
	}
	if *limit < 1 || *limit > 100 {
		return usageError{fmt.Sprintf("--limit is 1 to 100, not %d", *limit)}
	}
	now := time.Now()
	if opts.Since, err = parseWhen("--since", *since, now); err != nil {
		return err
	}
	if opts.Until, err = parseWhen("--until", *until, now); err != nil {
		return err
	}
	cl, err := af.newClient()
	if err != nil {
		return err
	}

	if *all {
		var msgs []client.Message
		tw := newTable(stdout)
		if !*asJSON {
			printMessageHeader(tw)
		}
		for m, err := range cl.AllMessages(ctx, opts) {
			if err != nil {
				return callFailed(err, af.url)
			}
			if *asJSON {
				msgs = append(msgs, m)
			} else {
				printMessageRow(tw, &m)
			}
		}
		if *asJSON {
			if msgs == nil {
				msgs = []client.Message{}
			}
			return printJSON(stdout, msgs)
		}
		return tw.Flush()
	}

	page, err := cl.ListMessages(ctx, opts)
	if err != nil {
		return callFailed(err, af.url)
	}
	if *asJSON {
		return printJSON(stdout, page)
	}
	tw := newTable(stdout)
	printMessageHeader(tw)
	for i := range page.Data {
		printMessageRow(tw, &page.Data[i])
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if next := page.Cursor(); next != "" {
		fmt.Fprintf(stderr, "More messages: add --cursor %s for the next page, or --all.\n", clean(next))
	}
	return nil
}

func printMessageHeader(w io.Writer) {
	fmt.Fprintln(w, "ID\tCREATED\tSTATUS\tFROM\tTO\tSUBJECT")
}

// printMessageRow writes a message as a row: the first recipient stands
// for the others ("ann@example.com +2").
func printMessageRow(w io.Writer, m *client.Message) {
	to := ""
	if len(m.To) > 0 {
		to = m.To[0]
	}
	if more := len(m.To) + len(m.Cc) + len(m.Bcc) - 1; more > 0 {
		to += fmt.Sprintf(" +%d", more)
	}
	fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\n", clean(m.ID), utc(m.CreatedAt), clean(string(m.Status)),
		clean(m.From), clean(to), shorten(clean(m.Subject), 60))
}

// messagesGet is `mailroom messages get ID`: GET /v1/messages/{id}.
func messagesGet(ctx context.Context, c *command, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet(c.name)
	var af apiFlags
	af.register(fs)
	asJSON := fs.Bool("json", false, "print the API's JSON answer")
	rest, err := c.parse(fs, args, stdout)
	if err != nil {
		return err
	}
	if len(rest) != 1 {
		return usageError{"messages get takes one argument, the message's ID (msg_…)"}
	}
	cl, err := af.newClient()
	if err != nil {
		return err
	}
	m, err := cl.GetMessage(ctx, rest[0])
	if err != nil {
		return callFailed(err, af.url)
	}
	if *asJSON {
		return printJSON(stdout, m)
	}
	printMessage(stdout, m)
	return nil
}

// printMessage writes a message's fields, each recipient's state and the
// timeline.
func printMessage(w io.Writer, m *client.Message) {
	tw := newTable(w)
	field := func(name, value string) {
		if value != "" {
			fmt.Fprintf(tw, "%s\t%s\n", name, value)
		}
	}
	field("Message", clean(m.ID))
	field("Status", clean(string(m.Status)))
	field("Created", utc(m.CreatedAt))
	if m.ScheduledAt != nil {
		field("Scheduled", utc(*m.ScheduledAt))
	}
	field("From", clean(m.From))
	field("To", clean(strings.Join(m.To, ", ")))
	field("Cc", clean(strings.Join(m.Cc, ", ")))
	field("Bcc", clean(strings.Join(m.Bcc, ", ")))
	field("Reply-To", clean(strings.Join(m.ReplyTo, ", ")))
	field("Subject", clean(m.Subject))
	field("Category", clean(string(m.Category)))
	field("Tracking", trackedFor(m.Tracking))
	if m.RequireTLS {
		// RFC 8689: shown only when asked for, as the other optional lines.
		field("Require TLS", "yes (REQUIRETLS: verified TLS to an MX its MTA-STS policy names, or a 5.7.30 bounce)")
	}
	if t := m.Template; t != nil {
		field("Template", clean(fmt.Sprintf("%s, version %d (%s)", t.Name, t.Version, t.ID)))
	}
	var tags []string
	for k, v := range m.Tags {
		tags = append(tags, k+"="+v)
	}
	slices.Sort(tags)
	field("Tags", clean(strings.Join(tags, ", ")))
	if m.IdempotencyKey != nil {
		field("Idempotency key", clean(*m.IdempotencyKey))
	}
	tw.Flush()

	fmt.Fprintln(w, "\nRecipients:")
	tw = newTable(w)
	// The site is where the last attempt went (docs/api.md "How mail
	// leaves"); the last deferral says why the recipient waited last, and
	// stays once it is delivered.
	// A tracked message's recipients show their opens and clicks.
	tracked := m.Tracking.Opens || m.Tracking.Clicks
	engagementHead := ""
	if tracked {
		engagementHead = "OPENS\tCLICKS\t"
	}
	fmt.Fprintln(tw, "  ADDRESS\tSTATUS\tATTEMPTS\tLAST ATTEMPT\tNEXT ATTEMPT\tSITE\tLAST DEFERRAL\tTLS\t"+engagementHead+"LAST REPLY")
	for _, r := range m.Recipients {
		last, next := "-", "-"
		if r.LastAttemptAt != nil {
			last = utc(*r.LastAttemptAt)
		}
		if r.NextAttemptAt != nil && (r.Status == api.RecipientQueued || r.Status == api.RecipientDeferred) {
			next = utc(*r.NextAttemptAt)
		}
		reply := smtpReply(r.SMTPCode, deref(r.SMTPResponse))
		if r.MX != nil && *r.MX != "" {
			reply += " (" + *r.MX + ")"
		}
		if r.Unencrypted {
			reply += " unencrypted"
		}
		engagement := ""
		if tracked {
			engagement = fmt.Sprintf("%d\t%d\t", r.Opens, r.Clicks)
		}
		fmt.Fprintf(tw, "  %s\t%s\t%d\t%s\t%s\t%s\t%s\t%s\t%s%s\n", clean(r.Address), clean(string(r.Status)), r.Attempts, last, next,
			orDash(clean(deref(r.Site))), orDash(clean(string(deref(r.LastDeferralReason)))), recipientTLS(r), engagement, strings.TrimSpace(clean(reply)))
	}
	tw.Flush()
	printLinks(w, m.Links)

	fmt.Fprintln(w, "\nTimeline:")
	tw = newTable(w)
	for _, e := range m.Events {
		note := ""
		if d, err := e.EmailData(); err == nil {
			if d.SMTPCode != 0 {
				note = smtpReply(&d.SMTPCode, d.SMTPResponse)
			}
			if d.Reason != "" {
				note = strings.TrimSpace(note + " (" + string(d.Reason) + ")")
			}
			if e.Type == api.EventEmailOpened || e.Type == api.EventEmailClicked {
				note = engagementNote(d)
			}
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\n", utc(e.CreatedAt), clean(string(e.Type)), clean(e.Recipient), clean(note))
	}
	tw.Flush()
	if m.OlderEventsCursor != nil {
		fmt.Fprintf(w, "  (the newest %d events; the older ones are listed by GET /v1/events?messageId=%s)\n", len(m.Events), clean(m.ID))
	}
}

// orDash is s, or "-" for nothing, so that a table's empty cell is seen.
func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// smtpReply writes an SMTP reply with its code once: the response may
// begin with it already.
func smtpReply(code *int, response string) string {
	if code == nil {
		return response
	}
	c := strconv.Itoa(*code)
	if strings.HasPrefix(response, c) {
		return response
	}
	return strings.TrimSpace(c + " " + response)
}

// messagesRaw is `mailroom messages raw ID`: the signed bytes, as they are.
func messagesRaw(ctx context.Context, c *command, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet(c.name)
	var af apiFlags
	af.register(fs)
	rest, err := c.parse(fs, args, stdout)
	if err != nil {
		return err
	}
	if len(rest) != 1 {
		return usageError{"messages raw takes one argument, the message's ID (msg_…)"}
	}
	cl, err := af.newClient()
	if err != nil {
		return err
	}
	raw, err := cl.GetRawMessage(ctx, rest[0])
	if err != nil {
		return callFailed(err, af.url)
	}
	_, err = stdout.Write(raw)
	return err
}

// parseWhen reads a time flag: RFC 3339, a date (midnight UTC), or a
// duration before now (90m, 24h, 7d). "" is the zero time.
func parseWhen(flagName, s string, now time.Time) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, nil
	}
	if t, err := time.Parse(time.DateOnly, s); err == nil {
		return t, nil
	}
	if days, ok := strings.CutSuffix(s, "d"); ok {
		if n, err := strconv.Atoi(days); err == nil && n >= 0 {
			return now.AddDate(0, 0, -n), nil
		}
	}
	if d, err := time.ParseDuration(s); err == nil && d >= 0 {
		return now.Add(-d), nil
	}
	return time.Time{}, usageError{fmt.Sprintf("%s %q is not a time: write RFC 3339 (2026-11-22T10:00:00Z), a date (2026-11-22) or a duration ago (90m, 24h, 7d)", flagName, s)}
}

func joinStatuses() string {
	var names []string
	for _, s := range api.MessageStatuses() {
		names = append(names, string(s))
	}
	return strings.Join(names, ", ")
}

// utc writes a time as the API does: RFC 3339 in UTC.
func utc(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// table aligns tab-separated cells in columns, as tabwriter does, without
// the spaces it leaves at the end of a line whose last cells are empty.
type table struct {
	*tabwriter.Writer
	buf bytes.Buffer
	out io.Writer
}

func newTable(w io.Writer) *table {
	t := &table{out: w}
	t.Writer = tabwriter.NewWriter(&t.buf, 0, 4, 2, ' ', 0)
	return t
}

// Flush writes the table.
func (t *table) Flush() error {
	if err := t.Writer.Flush(); err != nil {
		return err
	}
	for line := range strings.Lines(t.buf.String()) {
		if _, err := io.WriteString(t.out, strings.TrimRight(line, " \n")+"\n"); err != nil {
			return err
		}
	}
	t.buf.Reset()
	return nil
}

// shorten cuts s to n characters, marking the cut.
func shorten(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

func deref[T any](p *T) T {
	if p == nil {
		var zero T
		return zero
	}
	return *p
}

// recipientTLS is the TLS of a recipient's last attempt as one cell
// (docs/api.md "TLS policy"): "TLS1.3 verified mta-sts", "TLS1.2
// unverified opportunistic", "none" in clear text, "-" before any session.
// The cipher is GET /v1/messages/{id}'s, --json's.
func recipientTLS(r api.Recipient) string {
	switch {
	case r.TLS != nil:
		verified := "unverified"
		if r.TLS.Verified {
			verified = "verified"
		}
		return clean(r.TLS.Version + " " + verified + " " + string(r.TLS.Policy))
	case r.Unencrypted:
		return "none"
	}
	return "-"
}
