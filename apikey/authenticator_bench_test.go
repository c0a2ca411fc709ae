package apikey_test

import (
	"context"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/mailroom/mailroom"
	"github.com/mailroom/mailroom/apikey"
	"github.com/mailroom/mailroom/storetest"
)

// refusedKeys are the three ways a well-formed request presents a key
// that is refused as invalid_api_key (docs/api.md "Authentication"):
// a failed checksum, an unknown key id, a known id with a wrong secret.
type refusedKeys struct{ checksum, unknownID, wrongSecret string }

// newRefusedKeys stores a key under the id of one made-up key but with the
// digest of another's secret: presenting the first is a wrong secret for a
// known id, the second an unknown id, both with valid checksums.
func newRefusedKeys(tb testing.TB, s mailroom.Store) refusedKeys {
	tb.Helper()
	acct := storetest.NewAccount(tb, s, "timing")
	now := time.Now()
	known, rec := mailroom.NewAPIKey(acct.ID, "known", mailroom.Scopes{mailroom.ScopeSend}, now)
	unknown, other := mailroom.NewAPIKey(acct.ID, "other", mailroom.Scopes{mailroom.ScopeSend}, now)
	rec.SecretDigest = other.SecretDigest
	if err := s.CreateAPIKey(context.Background(), rec); err != nil {
		tb.Fatal(err)
	}
	last := known[len(known)-1]
	bad := "0"
	if last == '0' {
		bad = "1"
	}
	return refusedKeys{checksum: known[:len(known)-1] + bad, unknownID: unknown, wrongSecret: known}
}

// BenchmarkRefusedKey measures what an observer of response times could
// compare: the time to refuse each kind of bad key, per engine. A failed
// checksum is refused before storage is read, by design; an unknown id and
// a wrong secret each read storage once and compare one digest, and should
// take the same time within the noise.
//
//	go test -run '^$' -bench RefusedKey -count 10 ./apikey/
func BenchmarkRefusedKey(b *testing.B) {
	for _, eng := range []storetest.Engine{storetest.SQLite, storetest.Postgres} {
		b.Run(eng.Name, func(b *testing.B) {
			if eng.Name == "postgres" {
				storetest.RequirePostgres(b)
			}
			s := eng.Open(b)
			keys := newRefusedKeys(b, s)
			auth := &apikey.Authenticator{Keys: s, Now: time.Now}
			for _, c := range []struct{ name, key string }{
				{"checksum", keys.checksum}, {"unknown-id", keys.unknownID}, {"wrong-secret", keys.wrongSecret},
			} {
				b.Run(c.name, func(b *testing.B) {
					ctx := context.Background()
					for b.Loop() {
						if _, err := auth.Authenticate(ctx, c.key); !mailroom.IsCode(err, mailroom.ECodeInvalidAPIKey) {
							b.Fatalf("Authenticate(%s) = %v, want invalid_api_key", c.name, err)
						}
					}
				})
			}
		})
	}
}

// BenchmarkRefusedKeyInterleaved refuses the three kinds in turn, timing
// each call, and reports each kind's median (ns): on a busy machine the
// sub-benchmarks above drift between runs, while these are taken side by
// side, as an observer sending the three alternately would see them. It
// also times storage's read alone for the two ids (read-found,
// read-missing), where the two refusals' difference comes from.
func BenchmarkRefusedKeyInterleaved(b *testing.B) {
	for _, eng := range []storetest.Engine{storetest.SQLite, storetest.Postgres} {
		b.Run(eng.Name, func(b *testing.B) {
			if eng.Name == "postgres" {
				storetest.RequirePostgres(b)
			}
			s := eng.Open(b)
			keys := newRefusedKeys(b, s)
			auth := &apikey.Authenticator{Keys: s, Now: time.Now}
			names := []string{"checksum", "unknown-id", "wrong-secret", "read-missing", "read-found"}
			presented := []string{keys.checksum, keys.unknownID, keys.wrongSecret, keys.unknownID, keys.wrongSecret}
			took := make([][]time.Duration, len(names))
			ctx := context.Background()
			// How long a call takes depends on what ran before it (a
			// call after the fast checksum refusal finds caches warmer):
			// each round takes the kinds in a new random order, so that
			// no kind always follows another.
			order := make([]int, 0, len(names))
			for b.Loop() {
				if len(order) == 0 {
					order = rand.Perm(len(names))
				}
				k := order[0]
				order = order[1:]
				if k >= 3 {
					keyID, _, _ := mailroom.ParseAPIKey(presented[k])
					start := time.Now()
					_, err := s.APIKey(ctx, keyID)
					took[k] = append(took[k], time.Since(start))
					if (err == nil) != (names[k] == "read-found") {
						b.Fatalf("%s: %v", names[k], err)
					}
					continue
				}
				start := time.Now()
				_, err := auth.Authenticate(ctx, presented[k])
				took[k] = append(took[k], time.Since(start))
				if !mailroom.IsCode(err, mailroom.ECodeInvalidAPIKey) {
					b.Fatalf("Authenticate(%s) = %v, want invalid_api_key", names[k], err)
				}
			}
			for k, name := range names {
				if len(took[k]) > 0 {
					slices.Sort(took[k])
					b.ReportMetric(float64(took[k][len(took[k])/2].Nanoseconds()), name+"-median-ns")
				}
			}
		})
	}
}
