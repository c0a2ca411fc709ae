package client

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

// pagedServer answers GET /v1/messages in pages of the items named, the
// cursor of page i being "c<i>".
func pagedServer(t *testing.T, pages ...[]string) (*script, string) {
	answers := make([]func(http.ResponseWriter, *http.Request), 0, len(pages))
	for i, ids := range pages {
		var items []string
		for _, id := range ids {
			items = append(items, fmt.Sprintf(`{"id":%q,"status":"delivered","from":"a@x.example","to":["b@y.example"],"cc":[],"bcc":[],"replyTo":[],"subject":"s","category":"transactional","tags":{},"template":null,"idempotencyKey":null,"createdAt":"2026-11-22T10:00:00Z","scheduledAt":null,"recipients":[]}`, id))
		}
		next := "null"
		if i < len(pages)-1 {
			next = fmt.Sprintf(`"c%d"`, i+1)
		}
		answers = append(answers, answer(200, `{"data":[`+strings.Join(items, ",")+`],"nextCursor":`+next+`}`))
	}
	s, srv := newScript(t, answers...)
	return s, srv.URL
}

func TestIteratorFollowsCursors(t *testing.T) {
	s, base := pagedServer(t, []string{"msg_5", "msg_4"}, []string{"msg_3", "msg_2"}, []string{"msg_1"})
	c, _ := testClient(base)
	since := time.Date(2026, 11, 1, 0, 0, 0, 0, time.FixedZone("CET", 3600))
	opts := &MessageListOptions{Status: MessageDelivered, Tags: map[string]string{"kind": "receipt", "b": "1"}, Since: since}
	var ids []string
	for m, err := range c.AllMessages(context.Background(), opts) {
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, m.ID)
	}
	if got := strings.Join(ids, " "); got != "msg_5 msg_4 msg_3 msg_2 msg_1" {
		t.Errorf("items %s", got)
	}
	reqs := s.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests, want 3", len(reqs))
	}
	for i, r := range reqs {
		q, _ := url.ParseQuery(r.Query)
		wantCursor := ""
		if i > 0 {
			wantCursor = fmt.Sprintf("c%d", i)
		}
		if r.Path != "/v1/messages" || q.Get("cursor") != wantCursor || q.Get("limit") != "100" || q.Get("status") != "delivered" ||
			strings.Join(q["tag"], ",") != "b:1,kind:receipt" || q.Get("since") != "2026-10-31T23:00:00Z" {
			t.Errorf("request %d: %s?%s", i, r.Path, r.Query)
		}
	}
	if opts.Cursor != "" || opts.Limit != 0 {
		t.Errorf("the caller's options were changed: %+v", opts)
	}
}

func TestIteratorStopsOnBreak(t *testing.T) {
	s, base := pagedServer(t, []string{"msg_5", "msg_4"}, []string{"msg_3", "msg_2"}, []string{"msg_1"})
	c, _ := testClient(base)
	n := 0
	for _, err := range c.AllMessages(context.Background(), &MessageListOptions{Limit: 2}) {
		if err != nil {
			t.Fatal(err)
		}
		if n++; n == 3 {
			break
		}
	}
	reqs := s.Requests()
	if len(reqs) != 2 {
		t.Errorf("%d requests, want 2: the third page is never needed", len(reqs))
	}
	if q, _ := url.ParseQuery(reqs[0].Query); q.Get("limit") != "2" {
		t.Errorf("query %s, want limit=2", reqs[0].Query)
	}
}

func TestIteratorYieldsTheErrorOnce(t *testing.T) {
	s, srv := newScript(t,
		answer(200, `{"data":[{"address":"a@x.example","reason":"manual","createdAt":"2026-11-22T10:00:00Z","messageId":null}],"nextCursor":"c1"}`),
		answer(400, `{"error":"validation_error","message":"bad cursor","details":[{"field":"cursor","message":"not a cursor of this list"}]}`))
	c, _ := testClient(srv.URL)
	var got []string
	for sup, err := range c.AllSuppressions(context.Background(), &ListOptions{Cursor: "c0"}) {
		if err != nil {
			got = append(got, "error "+err.Error())
			continue
		}
		got = append(got, sup.Address)
	}
	if len(got) != 2 || got[0] != "a@x.example" || !strings.HasPrefix(got[1], "error mailroom: 400 validation_error") {
		t.Errorf("yielded %q", got)
	}
	if q := s.Requests()[0].Query; q != "cursor=c0&limit=100" {
		t.Errorf("first query %q, want the caller's cursor", q)
	}
}

// A page answered with its own cursor again ends the iteration with an
// error instead of looping: the service never does that, so the list
// would not be complete.
func TestIteratorStopsOnARepeatedCursor(t *testing.T) {
	s, srv := newScript(t, answer(200, `{"data":[],"nextCursor":"same"}`))
	c, _ := testClient(srv.URL)
	var errs []error
	for _, err := range c.AllDomains(context.Background(), &ListOptions{Cursor: "same"}) {
		errs = append(errs, err)
	}
	if len(errs) != 1 || !errors.Is(errs[0], ErrRepeatedCursor) {
		t.Errorf("yielded %v, want ErrRepeatedCursor once", errs)
	}
	if n := len(s.Requests()); n != 1 {
		t.Errorf("%d requests", n)
	}
}

// Cursors that go round in a circle (c0, c1, c0 …), from a broken or
// hostile server, end the iteration with an error when one comes back,
// before its page is read twice.
func TestIteratorStopsOnACycleOfCursors(t *testing.T) {
	s, srv := newScript(t, func(w http.ResponseWriter, r *http.Request) {
		cur := r.URL.Query().Get("cursor")
		next := map[string]string{"": "c0", "c0": "c1", "c1": "c0"}[cur]
		answer(200, `{"data":[{"address":"`+cur+`@x.example","reason":"manual","createdAt":"2026-11-22T10:00:00Z","messageId":null}],"nextCursor":"`+next+`"}`)(w, r)
	})
	c, _ := testClient(srv.URL)
	var got []string
	for sup, err := range c.AllSuppressions(context.Background(), nil) {
		if err != nil {
			if !errors.Is(err, ErrRepeatedCursor) || !strings.Contains(err.Error(), `"c0"`) {
				t.Errorf("error %v, want ErrRepeatedCursor naming c0", err)
			}
			got = append(got, "error")
			continue
		}
		if got = append(got, sup.Address); len(got) > 10 {
			t.Fatalf("still going after %q", got)
		}
	}
	if strings.Join(got, " ") != "@x.example c0@x.example c1@x.example error" {
		t.Errorf("yielded %q", got)
	}
	if n := len(s.Requests()); n != 3 {
		t.Errorf("%d requests, want 3", n)
	}
}

func TestListOptionsQueries(t *testing.T) {
	at := time.Date(2026, 11, 22, 10, 0, 0, 500, time.UTC)
	for _, tc := range []struct {
		got  url.Values
		want string
	}{
		{(*ListOptions)(nil).values(), ""},
		{(&ListOptions{Limit: 5, Cursor: "abc"}).values(), "cursor=abc&limit=5"},
		{(&MessageListOptions{To: "Ann@Example.com", From: "o@shop.example", Category: CategoryMarketing, Until: at, Template: "receipt"}).values(),
			"category=marketing&from=o%40shop.example&template=receipt&to=Ann%40Example.com&until=2026-11-22T10%3A00%3A00.0000005Z"},
		{(&MessageListOptions{Engagement: EngagementClicked}).values(), "event=clicked"},
		{(&EventListOptions{Type: EventEmailBounced, MessageID: "msg_1", Since: at.Truncate(time.Second)}).values(),
			"messageId=msg_1&since=2026-11-22T10%3A00%3A00Z&type=email.bounced"},
		{(&DeliveryListOptions{EventID: "evt_1", Status: AttemptFailed, Limit: 10}).values(), "eventId=evt_1&limit=10&status=failed"},
	} {
		if got := tc.got.Encode(); got != tc.want {
			t.Errorf("query %q, want %q", got, tc.want)
		}
	}
}
