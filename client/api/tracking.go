package api

// Tracking says what a message's copies are tracked for (docs/api.md
// "Engagement tracking"): resolved when the send was accepted, from its
// domain's openTracking and clickTracking and the send's own tracking.
type Tracking struct {
	Opens  bool `json:"opens"`
	Clicks bool `json:"clicks"`
}

// TrackingOverride is a send's tracking: a field given overrides the
// domain's setting for that one message, a field left out (nil) follows
// it. Tracking turned on for a message without an HTML part tracks
// nothing: the text part is never rewritten.
type TrackingOverride struct {
	Opens  *bool `json:"opens,omitempty"`
	Clicks *bool `json:"clicks,omitempty"`
}

// TrackedLink is one link of a click-tracked message (Message.Links): the
// address it pointed to before it was rewritten, and the clicks it had
// from every recipient, automated ones included.
type TrackedLink struct {
	URL    string `json:"url"`
	Clicks int    `json:"clicks"`
}
