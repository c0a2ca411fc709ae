package resend

import (
	"net/url"
	"testing"
	"time"

	"github.com/mailroom/mailroom"
)

func TestEmailListQuery(t *testing.T) {
	id := mailroom.NewID(mailroom.PrefixMessage, time.Now())
	query := func(limit, after, before string) (mailroom.MessageFilter, mailroom.Page, error) {
		q := url.Values{}
		for name, v := range map[string]string{"limit": limit, "after": after, "before": before} {
			if v != "" {
				q.Set(name, v)
			}
		}
		w, err := ParseListWindow(q, DefaultListLimit)
		if err != nil {
			return mailroom.MessageFilter{}, mailroom.Page{}, err
		}
		return EmailListQuery(w)
	}
	f, p, err := query("", "", "")
	if err != nil || p.Limit != 20 || f.CursorScope() != (mailroom.MessageFilter{}).CursorScope() {
		t.Errorf("no query: %+v %+v %v", f, p, err)
	}
	f, p, err = query("100", id, "")
	if err != nil || p.Limit != 100 || f.OlderThan != id || f.NewerThan != "" || f.OldestFirst {
		t.Errorf("after: %+v %+v %v", f, p, err)
	}
	f, p, err = query("1", "", id)
	if err != nil || p.Limit != 1 || f.NewerThan != id || f.OlderThan != "" || !f.OldestFirst {
		t.Errorf("before: %+v %+v %v", f, p, err)
	}
	for _, q := range [][3]string{{"0", "", ""}, {"101", "", ""}, {"2.5", "", ""}, {"", id, id}, {"", "abc", ""}, {"", "", "MSG_X"}} {
		if _, _, err := query(q[0], q[1], q[2]); mailroom.ErrorCode(err) != mailroom.ECodeValidation {
			t.Errorf("%q: %v, want a validation error", q, err)
		}
	}
}

func TestEmailTime(t *testing.T) {
	at := time.Date(2023, 4, 3, 23, 13, 42, 674981123, time.FixedZone("", 3600))
	if got := emailTime(at); got != "2023-04-03T22:13:42.674981+00:00" {
		t.Errorf("%s", got)
	}
}
