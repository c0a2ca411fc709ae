package sites

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mailroom/mailroom"
)

const goodPolicy = `# Mailroom delivery policy
[default]
max_connections = 4
max_rate = 120
connect_timeout = "20s"

[[site]]
name = "google"
max_connections = 2

[[site]]
name = "Corp"
mx = ["*.mx.corp.example", "mail.corp.example."]
domains = ["corp.example"]
max_messages_per_connection = 7

[[site]]
name = "capped"
mx = ["*.google.com"]
max_rate = 30.5
`

func TestParsePolicy(t *testing.T) {
	p, err := ParsePolicy([]byte(goodPolicy))
	if err != nil {
		t.Fatal(err)
	}
	want := mailroom.SiteProfile{MaxConnections: 4, MaxMessagesPerConnection: 100, MaxRate: 120, ConnectTimeout: 20 * time.Second}
	if !profileEqual(p.Default, want) {
		t.Fatalf("default = %+v, want %+v", p.Default, want)
	}
	var names []string
	for _, s := range p.Sites {
		names = append(names, s.Name)
	}
	if !slices.Equal(names, []string{"google", "corp", "capped", "microsoft", "yahoo", "apple"}) {
		t.Fatalf("sites in matching order: %v", names)
	}
	google := mailroom.BuiltInSiteProfiles[0]
	google.MaxConnections = 2
	if !profileEqual(p.Sites[0], google) {
		t.Fatalf("google = %+v, want the built-in with 2 connections: %+v", p.Sites[0], google)
	}
	corp := mailroom.SiteProfile{Name: "corp", MX: []string{"*.mx.corp.example", "mail.corp.example"}, Domains: []string{"corp.example"},
		MaxConnections: 4, MaxMessagesPerConnection: 7, MaxRate: 120, ConnectTimeout: 20 * time.Second}
	if !profileEqual(p.Sites[1], corp) {
		t.Fatalf("corp = %+v, want %+v", p.Sites[1], corp)
	}
	if got := p.Site("corp.example", []string{"mx.elsewhere.example"}); got.Name != "corp" {
		t.Fatalf("corp.example's site = %q", got.Name)
	}
	if got := p.Site("x.example", []string{"a.mx.corp.example"}); got.Name != "corp" {
		t.Fatalf("a.mx.corp.example's site = %q", got.Name)
	}
	// The operator's sites are matched before the built-in ones: google
	// itself is overridden but first, then corp, then capped, whose MX
	// pattern is google's.
	if got := p.Site("gmail.com", []string{"gmail-smtp-in.l.google.com"}); got.Name != "google" {
		t.Fatalf("gmail.com's site = %q", got.Name)
	}
	if got := p.Sites[2]; got.MaxRate != 30.5 || got.MaxConnections != 4 {
		t.Fatalf("capped = %+v", got)
	}
	if got := p.Site("outlook.com", []string{"outlook-com.olc.protection.outlook.com"}); !profileEqual(got, mailroom.BuiltInSiteProfiles[1]) {
		t.Fatalf("an untouched built-in changed: %+v", got)
	}
}

func TestEmptyPolicyIsTheBuiltInOne(t *testing.T) {
	p, err := ParsePolicy([]byte("# nothing\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := mailroom.NewDeliveryPolicy()
	if !profileEqual(p.Default, want.Default) || len(p.Sites) != len(want.Sites) {
		t.Fatalf("empty policy = %+v", p)
	}
}

func TestBadPolicyIsRefusedWithItsLine(t *testing.T) {
	for _, tc := range []struct {
		name, file, want string
	}{
		{"syntax", "[default]\nmax_connections = \n", "line 2: "},
		{"unknown key in default", "[default]\nmax_connections = 3\nmax_conections = 3\n", `line 3: unknown key "max_conections" in [default]`},
		{"site key in default", "[default]\nmx = [\"a.example\"]\n", `line 2: unknown key "mx" in [default]`},
		{"unknown key in site", "[[site]]\nname = \"a\"\nmx = [\"*.a.example\"]\n\n[[site]]\nname = \"b\"\nmx = [\"*.b.example\"]\nrate = 5\n", `line 8: unknown key "rate" in [[site]]`},
		{"unknown table", "[defaults]\nmax_rate = 1\n", "line 1: unknown table [defaults]"},
		{"unknown top-level key", "max_rate = 1\n", `line 1: unknown key "max_rate"`},
		{"site as a table", "[site]\nname = \"a\"\n", "line 1: site must be [[site]] tables"},
		{"wrong type", "[default]\nmax_connections = \"ten\"\n", "line 2: max_connections must be a whole number"},
		{"fraction", "[default]\nmax_messages_per_connection = 2.5\n", "line 2: max_messages_per_connection must be a whole number"},
		{"zero connections", "[default]\n\n\n\n\n\nmax_connections = 0\n", "line 7: max_connections must be at least 1"},
		{"too many", "[default]\nmax_messages_per_connection = 1000000\n", "line 2: max_messages_per_connection must be at most 100000"},
		{"negative rate", "[[site]]\nname = \"a\"\nmx = [\"*.a.example\"]\nmax_rate = -1\n", "line 4: max_rate must not be negative"},
		{"rate as text", "[default]\nmax_rate = \"100/min\"\n", "line 2: max_rate must be a number"},
		{"bad duration", "[default]\nconnect_timeout = \"30\"\n", `line 2: connect_timeout must be a duration such as "30s"`},
		{"duration as number", "[default]\nconnect_timeout = 30\n", `line 2: connect_timeout must be a duration`},
		{"short timeout", "[default]\nconnect_timeout = \"10ms\"\n", "line 2: connect_timeout must be at least 1s"},
		{"long timeout", "[default]\nconnect_timeout = \"1h\"\n", "line 2: connect_timeout must be at most 5m0s"},
		{"bad pattern", "[[site]]\nname = \"a\"\nmx = [\"mx.*.a.example\"]\n", `line 3: mx pattern "mx.*.a.example" must be a host name`},
		{"bad pattern character", "[[site]]\nname = \"a\"\nmx = [\"mx_a.example\"]\n", `line 3: mx pattern "mx_a.example"`},
		{"mx not a list", "[[site]]\nname = \"a\"\nmx = \"*.a.example\"\n", "line 3: mx must be a list of strings"},
		{"bad domain", "[[site]]\nname = \"a\"\ndomains = [\"com\"]\n", `line 3: domains: "com" is not a domain name`},
		{"duplicate name", "[[site]]\nname = \"a\"\nmx = [\"*.a.example\"]\n[[site]]\nname = \"A\"\nmx = [\"*.b.example\"]\n", `line 5: site "a" is already defined on line 2`},
		{"duplicate built-in", "[[site]]\nname = \"google\"\n[[site]]\nname = \"google\"\n", `line 4: site "google" is already defined on line 2`},
		{"no name", "[default]\nmax_rate = 1\n[[site]]\nmx = [\"*.a.example\"]\n", "line 3: [[site]] needs a name"},
		{"bad name", "[[site]]\nname = \"a b\"\nmx = [\"*.a.example\"]\n", "line 2: name must be"},
		{"new site matching nothing", "[[site]]\nname = \"lonely\"\nmax_connections = 1\n", `line 1: site "lonely" needs mx or domains`},
		{"dotted key", "default.max_connections = 0\n", "line 1: max_connections must be at least 1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParsePolicy([]byte(tc.file))
			var pe *PolicyError
			if !errors.As(err, &pe) {
				t.Fatalf("ParsePolicy = %v, want a *PolicyError", err)
			}
			if !strings.HasPrefix(err.Error(), tc.want) {
				t.Fatalf("error %q, want it to begin %q", err, tc.want)
			}
		})
	}
}

func TestBadPolicyNamesEveryProblem(t *testing.T) {
	_, err := ParsePolicy([]byte("[default]\nmax_connections = 0\nmax_rate = -5\n"))
	want := "line 2: max_connections must be at least 1\nline 3: max_rate must not be negative (0 is no limit)"
	if err == nil || err.Error() != want {
		t.Fatalf("error %q, want %q", err, want)
	}
}

func TestLoadPolicyNamesTheFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "policy.toml")
	if err := os.WriteFile(path, []byte("[default]\n\n\n\n\n\nmax_connections = 0\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := LoadPolicy(path)
	if want := path + " line 7: max_connections must be at least 1"; err == nil || err.Error() != want {
		t.Fatalf("LoadPolicy = %v, want %q", err, want)
	}
	if err := os.WriteFile(path, []byte(goodPolicy), 0o600); err != nil {
		t.Fatal(err)
	}
	if p, err := LoadPolicy(path); err != nil || p.Default.MaxConnections != 4 {
		t.Fatalf("LoadPolicy = %+v, %v", p, err)
	}
	if _, err := LoadPolicy(filepath.Join(dir, "missing.toml")); err == nil || !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("LoadPolicy of a missing file = %v", err)
	}
}

func TestPolicyLinesSkipMultilineStrings(t *testing.T) {
	file := "[[site]]\nnote = '''\nmx = 1\n'''\nname = \"a\"\nmx = [\"bad pattern\"]\n"
	_, err := ParsePolicy([]byte(file))
	if err == nil || !strings.HasPrefix(err.Error(), `line 2: unknown key "note"`) || !strings.Contains(err.Error(), "\nline 6: mx pattern") {
		t.Fatalf("error %v, want the unknown key on line 2 and the bad pattern on line 6", err)
	}
}

func profileEqual(a, b mailroom.SiteProfile) bool {
	return a.Name == b.Name && slices.Equal(a.MX, b.MX) && slices.Equal(a.Domains, b.Domains) &&
		a.MaxConnections == b.MaxConnections && a.MaxMessagesPerConnection == b.MaxMessagesPerConnection &&
		a.MaxRate == b.MaxRate && a.ConnectTimeout == b.ConnectTimeout
}
