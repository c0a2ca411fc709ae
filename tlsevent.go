package mailroom

import (
	"bytes"
	"encoding/json"
)

// EventTLS is the `tls` of an email event's data (docs/api.md "TLS
// policy"): the TLS of the attempt's SMTP session, null when that session
// ran in clear text, and absent on events of no session (queued,
// suppressed, a report that came later). email.delivered always has a
// session, so it always carries `tls`, null in clear. The zero value is
// absent (omitzero).
type EventTLS struct {
	// Info is the session's TLS; nil in clear or without a session.
	Info *TLSInfo
	// Clear says a session was had in clear text: `tls` is null, not
	// absent.
	Clear bool
}

// NewEventTLS is the tls of an event of type typ about r's last attempt:
// its TLS; null when it ran in clear (r.Unencrypted, and any delivery
// without TLS); absent otherwise.
func NewEventTLS(typ string, r *Recipient) EventTLS {
	switch {
	case r.TLS != nil:
		return EventTLS{Info: r.TLS}
	case r.Unencrypted || typ == EventEmailDelivered:
		return EventTLS{Clear: true}
	}
	return EventTLS{}
}

// IsZero reports an event with no session: `tls` is left out.
func (t EventTLS) IsZero() bool { return t.Info == nil && !t.Clear }

// MarshalJSON writes the TLS object, or null.
func (t EventTLS) MarshalJSON() ([]byte, error) {
	if t.Info == nil {
		return []byte("null"), nil
	}
	return json.Marshal(t.Info)
}

// UnmarshalJSON reads what MarshalJSON wrote: null is a session in clear
// (encoding/json calls it for null too).
func (t *EventTLS) UnmarshalJSON(b []byte) error {
	if bytes.Equal(bytes.TrimSpace(b), []byte("null")) {
		*t = EventTLS{Clear: true}
		return nil
	}
	var info TLSInfo
	if err := json.Unmarshal(b, &info); err != nil {
		return err
	}
	*t = EventTLS{Info: &info}
	return nil
}
