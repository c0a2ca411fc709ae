package mailroom

import "testing"

func TestHostnameProblem(t *testing.T) {
	for _, name := range []string{"mail.example.net", "MX1.Example.COM.", "vm-7.eu-west.example.org"} {
		if p := HostnameProblem(name); p != "" {
			t.Errorf("%q: %s", name, p)
		}
	}
	for _, name := range []string{"", "vm", "VM.", "localhost", "app.localhost", "192.0.2.7", "2001:db8::1",
		"[2001:db8::1]", "laptop.local", "localhost.localdomain"} {
		if HostnameProblem(name) == "" {
			t.Errorf("%q passed as a fully qualified host name", name)
		}
	}
}
