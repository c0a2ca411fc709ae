package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/mailroom/mailroom/client/api"
)

// What `messages get` shows of engagement tracking (docs/api.md
// "Engagement tracking"): what the message is tracked for, each
// recipient's opens and clicks (printMessage), the links with their clicks,
// and on the timeline what each open or click tells.

// trackedFor is the Tracking line: "opens, clicks", "opens", "clicks", or
// nothing for a message that is not tracked.
func trackedFor(t api.Tracking) string {
	var what []string
	if t.Opens {
		what = append(what, "opens")
	}
	if t.Clicks {
		what = append(what, "clicks")
	}
	return strings.Join(what, ", ")
}

// printLinks lists a click-tracked message's links in the order of its
// HTML part, each with its clicks from every recipient; nothing when it
// has none (not click-tracked, or its copies not made yet).
func printLinks(w io.Writer, links []api.TrackedLink) {
	if len(links) == 0 {
		return
	}
	fmt.Fprintln(w, "\nLinks:")
	tw := newTable(w)
	fmt.Fprintln(tw, "  CLICKS\tURL")
	for _, l := range links {
		fmt.Fprintf(tw, "  %d\t%s\n", l.Clicks, clean(l.URL))
	}
	tw.Flush()
}

// engagementNote is the timeline's note of an open or a click: the link
// clicked, "machine" when it looked automated, and the client's truncated
// address and agent.
func engagementNote(d *api.EmailEventData) string {
	var parts []string
	if d.URL != "" {
		parts = append(parts, d.URL)
	}
	if d.Machine {
		parts = append(parts, "machine")
	}
	client := strings.TrimSpace(d.IP + " " + shorten(d.UserAgent, 60))
	if client != "" {
		parts = append(parts, "("+client+")")
	}
	return clean(strings.Join(parts, " "))
}
