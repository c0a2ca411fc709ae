package smtp

import (
	"fmt"
	"strings"
	"testing"
)

func TestParseRelayURL(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want RelayConfig
	}{
		{"smtp://relay.example.com", RelayConfig{Host: "relay.example.com", Port: 25}},
		{"smtp://user:secret@relay.example.com:587", RelayConfig{Host: "relay.example.com", Port: 587, Username: "user", Password: "secret"}},
		{"smtps://user%40example.com:p%40ss%3Aword@relay.example.com", RelayConfig{Host: "relay.example.com", Port: 465, Username: "user@example.com", Password: "p@ss:word", ImplicitTLS: true}},
		{"SMTP://[::1]:2525/", RelayConfig{Host: "::1", Port: 2525}},
	} {
		got, err := ParseRelayURL(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("ParseRelayURL(%q) = %+v, %v; want %+v", tc.in, got, err, tc.want)
		}
	}
}

func TestParseRelayURLErrorsHideThePassword(t *testing.T) {
	const secret = "Sup3rS3cret"
	for _, in := range []string{
		"http://user:" + secret + "@relay.example.com",
		"smtp://user:" + secret + "@relay.example.com:notaport",
		"smtp://user:" + secret + "@relay.example.com:70000",
		"smtp://user:" + secret + "%zz@relay.example.com",
		"smtp://user:" + secret + "@",
		"smtp://:" + secret + "@relay.example.com",
		"smtp://user:" + secret + "@relay.example.com/path?x=1",
		"smtp://user:" + secret + "@relay example.com",
		"user:" + secret + "@relay.example.com",
	} {
		_, err := ParseRelayURL(in)
		if err == nil {
			t.Errorf("ParseRelayURL accepted %q", in)
			continue
		}
		if strings.Contains(err.Error(), secret) {
			t.Errorf("ParseRelayURL error shows the password: %v", err)
		}
	}
}

func TestRelayConfigPrintsWithoutPassword(t *testing.T) {
	cfg, err := ParseRelayURL("smtp://user:Sup3rS3cret@relay.example.com:587")
	if err != nil {
		t.Fatal(err)
	}
	for _, verb := range []string{"%v", "%+v", "%#v", "%s"} {
		s := fmt.Sprintf(verb, cfg)
		if strings.Contains(s, "Sup3rS3cret") || !strings.Contains(s, "relay.example.com:587") {
			t.Errorf("%s prints %q", verb, s)
		}
	}
}
