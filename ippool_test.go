package mailroom

import (
	"net/netip"
	"strings"
	"testing"
)

func TestParseIPPool(t *testing.T) {
	p, err := ParseIPPool("main=192.0.2.10@Out1.Example.NET,2001:db8::1, 192.0.2.11")
	if err != nil {
		t.Fatal(err)
	}
	want := []SourceAddress{
		{IP: netip.MustParseAddr("192.0.2.10"), EHLOName: "out1.example.net"},
		{IP: netip.MustParseAddr("2001:db8::1")},
		{IP: netip.MustParseAddr("192.0.2.11")},
	}
	if p.Name != "main" || len(p.Addresses) != len(want) {
		t.Fatalf("parsed %+v", p)
	}
	for i, a := range p.Addresses {
		if a != want[i] {
			t.Errorf("address %d = %+v, want %+v", i, a, want[i])
		}
	}
	for _, bad := range []struct{ value, says string }{
		{"main", "NAME=ADDRESS"},
		{"=192.0.2.1", "NAME=ADDRESS"},
		{"ma in=192.0.2.1", "pool name"},
		{"main=", "not an IP address"},
		{"main=mail.example.net", "not an IP address"},
		{"main=192.0.2.1:25", "not an IP address"},
		{"main=0.0.0.0", "cannot be a source address"},
		{"main=224.0.0.1", "cannot be a source address"},
		{"main=192.0.2.1,192.0.2.1", "listed twice"},
		{"main=192.0.2.1@", "empty EHLO name"},
		{"main=192.0.2.1@not a name", "EHLO name"},
	} {
		_, err := ParseIPPool(bad.value)
		if err == nil || !strings.Contains(err.Error(), bad.says) {
			t.Errorf("ParseIPPool(%q) = %v, want an error saying %q", bad.value, err, bad.says)
		}
	}
}
