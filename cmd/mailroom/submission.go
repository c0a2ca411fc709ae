package main

import (
	"time"

	"github.com/mailroom/mailroom"
	"github.com/mailroom/mailroom/apikey"
	"github.com/mailroom/mailroom/compose"
	"github.com/mailroom/mailroom/domain"
	"github.com/mailroom/mailroom/ratelimit"
	"github.com/mailroom/mailroom/submission"
)

// newSubmissions is the service behind SMTP submission (docs/api.md "SMTP
// submission"): the HTTP API's key checks (auth, the same Authenticator,
// so that key usage is recorded alike) and per-account rate limits
// (limiter, the same buckets as the API's: an account's requests count
// once whichever door they come through), and the accept path of
// POST /v1/send over store, waking the workers through queued as a send
// does (the Sender's Queued). Messages are signed at accept with the
// domains' keys, by the composer delivery uses.
func newSubmissions(store mailroom.Store, auth *apikey.Authenticator, domains *domain.Service,
	limiter *ratelimit.Limiter, queued func()) *submission.Service {
	s := &submission.Service{Auth: auth, Store: store, Domains: domains, Signer: compose.Composer{},
		Now: time.Now, Queued: queued}
	if limiter != nil {
		s.Admit = func(accountID string) bool { return limiter.Allow(accountID, time.Now()).Allowed }
	}
	return s
}
