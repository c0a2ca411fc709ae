package sites

import (
	"cmp"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/BurntSushi/toml"

	"github.com/mailroom/mailroom"
)

// LoadPolicy reads the --delivery-policy file at path (ParsePolicy). Its
// problems name the file and their lines.
func LoadPolicy(path string) (mailroom.DeliveryPolicy, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return mailroom.DeliveryPolicy{}, fmt.Errorf("reading the delivery policy: %w", err)
	}
	p, err := ParsePolicy(data)
	var pe *PolicyError
	if errors.As(err, &pe) {
		pe.File = path
	}
	return p, err
}

// ParsePolicy reads a delivery policy (docs/api.md "How mail leaves"), TOML:
//
//	[default]                      # the profile of sites no [[site]] names
//	max_connections = 10           # open SMTP connections, at least 1
//	max_messages_per_connection = 100
//	max_rate = 0                   # messages a minute, 0 for no limit
//	connect_timeout = "30s"        # 1s to 5m
//
//	[[site]]
//	name = "corp"                  # letters, digits, '.', '-', '_'
//	mx = ["*.mx.corp.example"]     # MX host patterns (mailroom.MatchMXPattern)
//	domains = ["corp.example"]     # recipient domains, whatever their MX
//	max_connections = 2            # and any of [default]'s keys
//
// A [[site]] named like a built-in profile (google, microsoft, yahoo,
// apple) changes only the keys it sets; a new name needs mx or domains and
// takes the keys it does not set from [default]. The operator's sites are
// matched before the built-in ones, in the file's order. A file with any
// problem (syntax, an unknown key, a wrong type, a bad value, a name
// twice) is refused whole with a *PolicyError naming each problem's line.
func ParsePolicy(data []byte) (mailroom.DeliveryPolicy, error) {
	var raw map[string]any
	if _, err := toml.Decode(string(data), &raw); err != nil {
		var pe toml.ParseError
		if errors.As(err, &pe) {
			return mailroom.DeliveryPolicy{}, &PolicyError{Problems: []PolicyProblem{{Line: pe.Position.Line, Reason: pe.Message}}}
		}
		return mailroom.DeliveryPolicy{}, &PolicyError{Problems: []PolicyProblem{{Reason: err.Error()}}}
	}
	r := policyReader{lines: scanKeyLines(data)}
	p := r.read(raw)
	if len(r.problems) > 0 {
		slices.SortStableFunc(r.problems, func(a, b PolicyProblem) int { return cmp.Compare(a.Line, b.Line) })
		return mailroom.DeliveryPolicy{}, &PolicyError{Problems: r.problems}
	}
	return p, nil
}

// PolicyError is a refused policy file.
type PolicyError struct {
	// File is the file's path, when it was read from one.
	File     string
	Problems []PolicyProblem
}

// PolicyProblem is one thing wrong in a policy file, at its line (0 when
// unknown).
type PolicyProblem struct {
	Line   int
	Reason string
}

func (e *PolicyError) Error() string {
	var b strings.Builder
	for i, p := range e.Problems {
		if i > 0 {
			b.WriteString("\n")
		}
		if e.File != "" {
			b.WriteString(e.File + " ")
		}
		if p.Line > 0 {
			fmt.Fprintf(&b, "line %d: ", p.Line)
		}
		b.WriteString(p.Reason)
	}
	return b.String()
}

// policyReader turns a decoded file into a policy, collecting problems.
type policyReader struct {
	lines    keyLines
	problems []PolicyProblem
}

func (r *policyReader) add(line int, format string, args ...any) {
	r.problems = append(r.problems, PolicyProblem{Line: line, Reason: fmt.Sprintf(format, args...)})
}

func (r *policyReader) read(raw map[string]any) mailroom.DeliveryPolicy {
	def := mailroom.DefaultSiteProfile
	for _, key := range r.ordered(raw, "", 0) {
		switch key {
		case "default":
			if t, ok := raw[key].(map[string]any); ok {
				r.profile(t, "default", 0, &def)
			} else {
				r.add(r.topLine(key), "default must be one [default] table")
			}
		case "site":
		default:
			if _, ok := raw[key].(map[string]any); ok {
				r.add(r.topLine(key), "unknown table [%s]; a policy has a [default] table and [[site]] tables", key)
			} else {
				r.add(r.topLine(key), "unknown key %q; a policy has a [default] table and [[site]] tables", key)
			}
		}
	}
	var sites []map[string]any
	switch v := raw["site"].(type) {
	case nil:
	case []map[string]any:
		sites = v
	default:
		r.add(r.topLine("site"), "site must be [[site]] tables")
	}
	return mailroom.DeliveryPolicy{Default: def, Sites: r.sites(sites, def)}
}

// sites reads the [[site]] tables: the operator's, then the built-in ones
// they did not name.
func (r *policyReader) sites(tables []map[string]any, def mailroom.SiteProfile) []mailroom.SiteProfile {
	var out []mailroom.SiteProfile
	named := map[string]int{} // name → line
	for i, t := range tables {
		header := r.lines.line("site", i, "")
		name, ok := r.siteName(t, i)
		var p mailroom.SiteProfile
		builtIn := slices.IndexFunc(mailroom.BuiltInSiteProfiles, func(b mailroom.SiteProfile) bool { return b.Name == name })
		if builtIn >= 0 {
			p = mailroom.BuiltInSiteProfiles[builtIn]
			p.MX, p.Domains = slices.Clone(p.MX), slices.Clone(p.Domains)
		} else {
			p = def
			p.Name = name
		}
		before := len(r.problems)
		r.profile(t, "site", i, &p)
		if !ok {
			continue
		}
		if line, dup := named[name]; dup {
			r.add(r.lines.line("site", i, "name"), "site %q is already defined on line %d", name, line)
			continue
		}
		named[name] = r.lines.line("site", i, "name")
		if builtIn < 0 && len(p.MX) == 0 && len(p.Domains) == 0 && len(r.problems) == before {
			r.add(header, "site %q needs mx or domains: a new site matches nothing without them", name)
		}
		out = append(out, p)
	}
	for _, b := range mailroom.BuiltInSiteProfiles {
		if _, ok := named[b.Name]; !ok {
			b.MX, b.Domains = slices.Clone(b.MX), slices.Clone(b.Domains)
			out = append(out, b)
		}
	}
	return out
}

// siteName reads the i'th [[site]]'s name, lower-cased.
func (r *policyReader) siteName(t map[string]any, i int) (string, bool) {
	v, ok := t["name"]
	if !ok {
		r.add(r.lines.line("site", i, ""), "[[site]] needs a name")
		return "", false
	}
	s, ok := v.(string)
	name := strings.ToLower(strings.TrimSpace(s))
	if !ok || !validSiteName(name) {
		r.add(r.lines.line("site", i, "name"), "name must be 1 to 64 letters, digits, '.', '-' and '_'")
		return "", false
	}
	return name, true
}

func validSiteName(name string) bool {
	if name == "" || len(name) > 64 {
		return false
	}
	for _, c := range name {
		if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '.' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// profile applies the keys of a table to p.
func (r *policyReader) profile(t map[string]any, table string, index int, p *mailroom.SiteProfile) {
	for _, key := range r.ordered(t, table, index) {
		line := r.lines.line(table, index, key)
		v := t[key]
		switch key {
		case "max_connections":
			if n, ok := r.whole(line, key, v, 1, 10000); ok {
				p.MaxConnections = n
			}
		case "max_messages_per_connection":
			if n, ok := r.whole(line, key, v, 1, 100000); ok {
				p.MaxMessagesPerConnection = n
			}
		case "max_rate":
			if f, ok := r.rate(line, v); ok {
				p.MaxRate = f
			}
		case "connect_timeout":
			if d, ok := r.timeout(line, v); ok {
				p.ConnectTimeout = d
			}
		case "mx", "domains":
			if table != "site" {
				r.unknown(line, key, table)
				continue
			}
			if names, ok := r.names(line, key, v); ok {
				if key == "mx" {
					p.MX = names
				} else {
					p.Domains = names
				}
			}
		case "name":
			if table != "site" {
				r.unknown(line, key, table)
			}
		default:
			r.unknown(line, key, table)
		}
	}
}

// ordered is t's keys in the order of their lines.
func (r *policyReader) ordered(t map[string]any, table string, index int) []string {
	keys := make([]string, 0, len(t))
	for k := range t {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b string) int {
		return cmp.Or(cmp.Compare(r.lines.line(table, index, a), r.lines.line(table, index, b)), cmp.Compare(a, b))
	})
	return keys
}

// topLine is where a top-level key or table is.
func (r *policyReader) topLine(key string) int {
	if n, ok := r.lines[lineKey{"", 0, key}]; ok {
		return n
	}
	if n, ok := r.lines[lineKey{key, 0, ""}]; ok {
		return n
	}
	return 0
}
