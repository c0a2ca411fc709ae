package tlsrpt

import (
	"fmt"
	"strings"
	"testing"
)

// A record naming many destinations gets a report at the first
// MaxDestinations of them only, https first: the record is the receiving
// domain's to write, and each destination costs a POST or a message.
func TestDestinationsAreCapped(t *testing.T) {
	var uris []string
	for i := range 3 {
		uris = append(uris, fmt.Sprintf("https://r%d.example/tlsrpt", i))
	}
	for i := range 20 {
		uris = append(uris, fmt.Sprintf("mailto:w%d@example.net", i))
	}
	d, err := ParseRecord("v=TLSRPTv1; rua=" + strings.Join(uris, ","))
	if err != nil {
		t.Fatal(err)
	}
	c := d.capped(MaxDestinations)
	if len(c.HTTPS) != 3 || len(c.Mailto) != MaxDestinations-3 || c.Mailto[0] != "w0@example.net" {
		t.Fatalf("capped to %d https and %d mailto (%v), want 3 and %d, the first ones", len(c.HTTPS), len(c.Mailto), c.Mailto, MaxDestinations-3)
	}
}
