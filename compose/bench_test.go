package compose

import (
	"testing"

	"github.com/mailroom/mailroom"
)

// BenchmarkCompose is the worker's cost per message: MIME, key parsing and
// one RSA-2048 signature, which dominates.
func BenchmarkCompose(b *testing.B) {
	key, _ := testDomainKey()
	m := testMessage()
	m.Attachments = []mailroom.Attachment{logo}
	c := testComposer()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.Compose(m, key); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkParseKey(b *testing.B) {
	key, _ := testDomainKey()
	for b.Loop() {
		if _, err := parseKey(key); err != nil {
			b.Fatal(err)
		}
	}
}
