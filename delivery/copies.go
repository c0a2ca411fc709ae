package delivery

import (
	"bufio"
	"bytes"
	"context"
	"errors"

	"github.com/emersion/go-message/textproto"

	"github.com/mailroom/mailroom"
)

// copyPlan is how each recipient's copy of a message composed per
// recipient is made from its stored common part: marketing mail's copies
// carry their recipient's RFC 8058 unsubscribe pair, tracked mail's an
// HTML part with their recipient's pixel and links (docs/api.md
// "Engagement tracking"), and tracked marketing mail's both.
type copyPlan struct {
	sum   *mailroom.MessageSummary
	maker mailroom.CopyMaker
	// returnPath is the sending domain's bounce subdomain, which the
	// mailto unsubscribe address is at.
	returnPath string
	// unsubscribe is set when copies carry the service's unsubscribe
	// pair; links is nil when no public URL is set.
	unsubscribe bool
	links       mailroom.UnsubscribeLinker
	// tracked is the message's HTML prepared for its copies, nil when
	// nothing is tracked; trackErr says why there is none when something
	// is.
	tracked  mailroom.TrackedHTML
	trackErr error
}

// errNoTracker is a tracked copy's error while no tracker is set: its
// links would need the public URL.
var errNoTracker = errors.New("tracking: no public URL is set (--public-url)")

// planCopies prepares the copies of the message sum whose common part is
// base: the tracker reads its HTML once here, for every copy this Signed
// call hands out.
func (s *Signer) planCopies(sum *mailroom.MessageSummary, base []byte, domain *mailroom.Domain) (*copyPlan, error) {
	key, err := s.key(domain)
	if err != nil {
		return nil, err
	}
	maker, err := s.Composer.Copies(base, key)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	links, tracker := s.Unsubscribe, s.Tracker
	s.mu.Unlock()
	// compose's rule (perRecipient): marketing mail whose client wrote
	// its own List-Unsubscribe keeps it, and no copy carries two. Mail
	// composed per recipient and not tracked is marketing mail: nothing
	// else is composed so.
	marketing := sum.Category == mailroom.CategoryMarketing || !sum.Tracking.Any()
	p := &copyPlan{sum: sum, maker: maker, returnPath: domain.ReturnPathDomain, links: links,
		unsubscribe: marketing && !hasListUnsubscribe(base)}
	if html := maker.HTML(); sum.Tracking.Any() && html != "" {
		if tracker == nil {
			p.trackErr = errNoTracker
			return p, nil
		}
		if p.tracked, err = tracker.Prepare(sum.ID, html, sum.Tracking); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// saveLinks stores the links of a click-tracked message, on its first
// composition and before its bytes: clicks come back with a link's index
// among them, and a crash between the two composes the message again,
// which finds the same links (SaveTrackedLinks keeps those stored first).
// Without a tracker the links are not known, and the message waits for
// one: its bytes are not stored until its links are.
func (p *copyPlan) saveLinks(ctx context.Context, store mailroom.MessageStore) error {
	if !p.sum.Tracking.Clicks {
		return nil
	}
	if p.trackErr != nil {
		return p.trackErr
	}
	if p.tracked == nil {
		return nil
	}
	links := p.tracked.Links()
	if len(links) == 0 {
		return nil
	}
	return store.SaveTrackedLinks(ctx, p.sum.ID, links)
}

// copyFor returns rcpt's copy, the same bytes on every call.
func (p *copyPlan) copyFor(rcpt string) ([]byte, error) {
	var fields []mailroom.Header
	if p.unsubscribe {
		if p.links == nil {
			return nil, errors.New("unsubscribe links: no public URL is set (--public-url)")
		}
		var err error
		fields, err = p.links.Fields(mailroom.Unsubscribe{AccountID: p.sum.AccountID, MessageID: p.sum.ID, Address: rcpt},
			p.returnPath)
		if err != nil {
			return nil, err
		}
	}
	html := ""
	if p.trackErr != nil {
		return nil, p.trackErr
	}
	if p.tracked != nil {
		var err error
		if html, err = p.tracked.For(rcpt); err != nil {
			return nil, err
		}
	}
	return p.maker.Copy(fields, html)
}

// hasListUnsubscribe says whether the common part's header holds a
// List-Unsubscribe field: the client's, since the service's pair is only
// ever put in front of a copy.
func hasListUnsubscribe(base []byte) bool {
	h, err := textproto.ReadHeader(bufio.NewReader(bytes.NewReader(base)))
	return err == nil && h.Has("List-Unsubscribe")
}
