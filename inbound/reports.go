package inbound

import (
	"context"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/mailroom/mailroom"
)

// Reports applies what arrives at the return-path MX to the log
// (docs/api.md "Mail coming back"): a DSN bounces a recipient (even a
// delivered one), a complaint marks it complained, and both suppress.
// Nothing that does not verify changes anything: a report is matched
// through its return-path token (ReturnPaths), and then only to the
// recipients that token covers, or, for a complaint, through the original
// message it carries, and then only to a message of one recipient.
type Reports struct {
	Store       mailroom.ReportStore
	ReturnPaths ReturnPaths
	Now         func() time.Time
	Log         *slog.Logger
	// Unsubscribes takes the mail sent to marketing messages' mailto
	// unsubscribe addresses (RFC 2369 List-Unsubscribe), which are on the
	// same bounce subdomains; nil leaves them unprocessed.
	Unsubscribes mailroom.MailUnsubscribes
	// Dropped, when set, counts the reports that change nothing, by
	// reason: auto_reply, unknown, unverified, unmatched.
	Dropped func(reason string)
}

// Accepts says whether rcpt is at the bounce subdomain of a domain that
// can send (verified, or in its grace period), whose MX record is public
// in DNS already: the MX takes mail for nothing else, and its refusals
// tell no more than DNS does about which domains accounts have added.
func (s *Reports) Accepts(ctx context.Context, rcpt string) (bool, error) {
	_, domain, ok := splitAddress(rcpt)
	if !ok {
		return false, nil
	}
	return s.Store.ReturnPathDomainExists(ctx, domain)
}

func splitAddress(addr string) (local, domain string, ok bool) {
	i := strings.LastIndexByte(addr, '@')
	if i <= 0 || i == len(addr)-1 {
		return "", "", false
	}
	return addr[:i], strings.TrimSuffix(strings.ToLower(addr[i+1:]), "."), true
}

// Apply applies a report received for rcpt. A mail to a mailto
// unsubscribe address unsubscribes, whatever it says (RFC 2369 §3.2: its
// arrival is the request); any other is read as the report it is.
func (s *Reports) Apply(ctx context.Context, rcpt string, r *mailroom.Report) error {
	if local, _, ok := splitAddress(rcpt); ok && s.Unsubscribes != nil && s.Unsubscribes.IsUnsubscribeLocalPart(local) {
		if r.Kind == mailroom.ReportAutoReply {
			s.drop("auto_reply", rcpt, r)
			return nil
		}
		_, ok, err := s.Unsubscribes.UnsubscribeByMail(ctx, local)
		if err == nil && !ok {
			s.drop("unverified", rcpt, r)
		}
		return err
	}
	switch r.Kind {
	case mailroom.ReportDSN:
		return s.applyDSN(ctx, rcpt, r)
	case mailroom.ReportComplaint:
		return s.applyComplaint(ctx, rcpt, r)
	case mailroom.ReportAutoReply:
		s.drop("auto_reply", rcpt, r)
	default:
		s.drop("unknown", rcpt, r)
	}
	return nil
}

func (s *Reports) drop(reason, rcpt string, r *mailroom.Report) {
	if s.Dropped != nil {
		s.Dropped(reason)
	}
	if s.Log != nil {
		s.Log.Info("inbound report changes nothing", "reason", reason, "kind", string(r.Kind), "rcpt", mailroom.Excerpt(rcpt, 200))
	}
}

// open checks the token of the address a report came to, at the bounce
// subdomain it came to, and returns the message and the token, which says
// which of its recipients the report may change.
func (s *Reports) open(ctx context.Context, rcpt string) (*mailroom.Message, ReturnPathToken, error) {
	local, domain, ok := splitAddress(rcpt)
	if !ok {
		return nil, ReturnPathToken{}, nil
	}
	var m *mailroom.Message
	tok, ok, err := s.ReturnPaths.Open(local, domain, func(id string) (*mailroom.Message, error) {
		var err error
		m, err = s.Store.ReportedMessage(ctx, id)
		if mailroom.IsCode(err, mailroom.ECodeNotFound) {
			return nil, nil
		}
		return m, err
	})
	if err != nil || !ok {
		return nil, ReturnPathToken{}, err
	}
	return m, tok, nil
}

// recipientOf finds the message's recipient that addr names, ignoring case.
func recipientOf(m *mailroom.Message, addr string) *mailroom.Recipient {
	addr = strings.Trim(strings.TrimSpace(addr), "<>")
	for _, r := range m.Recipients {
		if addr != "" && strings.EqualFold(r.Address, addr) {
			return r
		}
	}
	return nil
}

// applyDSN: a failed action with a permanent status bounces the recipient
// (RFC 3464 §2.3.3, §2.3.4); a delay, or a failure with a temporary
// status, only writes email.deferred; other actions change nothing. Blocks
// naming one recipient more than once are collapsed to the most severe
// (reportcollapse.go): a report writes at most one event per recipient.
func (s *Reports) applyDSN(ctx context.Context, rcpt string, r *mailroom.Report) error {
	m, tok, err := s.open(ctx, rcpt)
	if err != nil {
		return err
	}
	if m == nil {
		s.drop("unverified", rcpt, r)
		return nil
	}
	var outcomes reportOutcomes // one per recipient (reportcollapse.go)
	for _, block := range r.Recipients {
		target := recipientOf(m, block.FinalRecipient)
		if target == nil {
			target = recipientOf(m, block.OriginalRecipient)
		}
		if target == nil && tok.Recipient != "" && len(r.Recipients) == 1 {
			// A DSN for a delivery to one recipient, which the receiving
			// side rewrote (an alias, a forward): the token names it.
			target = recipientOf(m, tok.Recipient)
		}
		if target == nil || !tok.Covers(target.Address) {
			// Not a recipient of the transaction the token was sent in.
			continue
		}
		if o := s.dsnOutcome(m, target, block, r.Text); o != nil {
			outcomes.add(o)
		}
	}
	list := outcomes.list()
	if len(list) == 0 {
		s.drop("unmatched", rcpt, r)
	}
	for _, o := range list {
		if err := s.record(ctx, o); err != nil {
			return err
		}
	}
	return nil
}

func (s *Reports) dsnOutcome(m *mailroom.Message, target *mailroom.Recipient, block mailroom.ReportRecipient, text string) *mailroom.ReportOutcome {
	now := s.Now().UTC()
	action := strings.ToLower(block.Action)
	permanent := strings.HasPrefix(block.Status, "5.")
	var typ string
	var status mailroom.RecipientStatus
	switch {
	case action == "failed" && permanent:
		typ, status = mailroom.EventEmailBounced, mailroom.RecipientBounced
	case action == "delayed", action == "failed" && strings.HasPrefix(block.Status, "4."):
		typ = mailroom.EventEmailDeferred
	default:
		return nil
	}
	code, response := replyOf(block)
	r := *target
	r.SMTPCode, r.SMTPResponse = code, response
	ev := mailroom.NewEmailEvent(m.Summary(), &r, typ, now)
	ev.Email.EmailEventDetail = mailroom.EmailEventDetail{SMTPCode: code, SMTPResponse: response, BounceType: "soft", Async: true,
		ReportText: mailroom.Excerpt(text, mailroom.MaxReportText), Attempt: r.Attempts}
	hard := status == mailroom.RecipientBounced && (strings.HasPrefix(block.Status, "5.1.") || mailroom.IsHardBounce(code, response))
	if hard {
		ev.Email.BounceType = "hard"
	}
	ev.Email.MarkPolicyFailure()
	o := &mailroom.ReportOutcome{MessageID: m.ID, Address: r.Address, Event: ev}
	if status != "" {
		o.Status, o.SMTPCode, o.SMTPResponse = status, code, response
	}
	if hard {
		o.Suppress = &mailroom.Suppression{AccountID: m.AccountID, Address: r.Address, Reason: mailroom.SuppressedHardBounce, MessageID: m.ID, CreatedAt: now}
	}
	return o
}

// replyOf is the SMTP reply a DSN block reports: its Diagnostic-Code when
// it starts with a reply code, else the class of its Status.
func replyOf(b mailroom.ReportRecipient) (int, string) {
	diag := strings.TrimSpace(b.DiagnosticCode)
	if len(diag) >= 3 {
		if n, err := strconv.Atoi(diag[:3]); err == nil && n >= 200 && n <= 599 {
			return n, mailroom.Excerpt(diag, 1000)
		}
	}
	code := 550
	if strings.HasPrefix(b.Status, "4.") {
		code = 450
	}
	response := strconv.Itoa(code) + " " + b.Status
	if diag != "" {
		response += " " + diag
	}
	return code, mailroom.Excerpt(response, 1000)
}

// applyComplaint: an abuse report marks the recipient complained and
// suppresses the address (RFC 5965). The message is the one the token of
// the address names, or else the one whose Message-ID the report carries,
// if it was sent from this bounce subdomain's domain and to one recipient
// alone.
func (s *Reports) applyComplaint(ctx context.Context, rcpt string, r *mailroom.Report) error {
	m, tok, err := s.open(ctx, rcpt)
	if err != nil {
		return err
	}
	byHeader := false
	if m == nil {
		if m, err = s.byMessageIDHeader(ctx, rcpt, r.OriginalMessageID); err != nil {
			return err
		}
		byHeader = true
	}
	if m == nil {
		s.drop("unverified", rcpt, r)
		return nil
	}
	var target *mailroom.Recipient
	switch {
	case byHeader:
		// Every recipient saw the Message-ID, and the others' addresses:
		// without a token, a report naming one recipient of several could
		// come from another. Only a message to one recipient is matched.
		if len(m.Recipients) == 1 {
			target = m.Recipients[0]
		}
	default:
		target = recipientOf(m, r.OriginalRecipient)
		if target == nil && tok.Recipient != "" {
			target = recipientOf(m, tok.Recipient)
		}
	}
	if target == nil || (!byHeader && !tok.Covers(target.Address)) {
		s.drop("unmatched", rcpt, r)
		return nil
	}
	now := s.Now().UTC()
	ev := mailroom.NewEmailEvent(m.Summary(), target, mailroom.EventEmailComplained, now)
	ev.Email.EmailEventDetail = mailroom.EmailEventDetail{Async: true, ReportText: mailroom.Excerpt(r.Text, mailroom.MaxReportText),
		Attempt: target.Attempts}
	return s.record(ctx, &mailroom.ReportOutcome{MessageID: m.ID, Address: target.Address, Status: mailroom.RecipientComplained,
		SMTPCode: target.SMTPCode, SMTPResponse: target.SMTPResponse, Event: ev,
		Suppress: &mailroom.Suppression{AccountID: m.AccountID, Address: target.Address, Reason: mailroom.SuppressedComplaint, MessageID: m.ID, CreatedAt: now}})
}

// byMessageIDHeader finds a message by the Message-ID it was sent with
// ("<ulid@domain>", the message's own id) if its sending domain is the one
// whose bounce subdomain the report came to.
func (s *Reports) byMessageIDHeader(ctx context.Context, rcpt, header string) (*mailroom.Message, error) {
	left, right, ok := strings.Cut(strings.Trim(strings.TrimSpace(header), "<>"), "@")
	id := mailroom.PrefixMessage + strings.ToLower(left)
	if !ok || !mailroom.IsID(id, mailroom.PrefixMessage) {
		return nil, nil
	}
	_, domain, _ := splitAddress(rcpt)
	m, err := s.Store.ReportedMessage(ctx, id)
	if mailroom.IsCode(err, mailroom.ECodeNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if !strings.HasSuffix(domain, "."+strings.ToLower(m.Domain)) || !strings.EqualFold(strings.TrimSuffix(right, "."), m.Domain) {
		return nil, nil
	}
	return m, nil
}

// record applies what a report says of one recipient, within the events
// reports may leave for it (maxReportEvents).
func (s *Reports) record(ctx context.Context, o *mailroom.ReportOutcome) error {
	o.MaxAsync = maxReportEvents
	return s.Store.RecordReport(ctx, o)
}
