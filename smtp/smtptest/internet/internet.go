// Package internet runs an internet in a box on loopback for tests and the
// delivery benchmark (scripts/bench-internet): receiving sites like the
// ones a sender meets, each a real SMTP server (smtp/smtptest) on loopback
// addresses of its own, and a real DNS server (dns/dnstest) that gives
// hundreds of recipient domains MX records pointing at them. There is a
// big provider that hosts many domains behind two MX hosts and caps
// connections and rate, a greylister, a slow site, a dead one, and small
// sites, each hosting a few domains under MX host names of their own.
//
// Every site listens on the same port, since a sender's --smtp-port dials
// one port on every MX host; Linux routes all of 127.0.0.0/8 to lo, so
// each site has addresses of its own (127.0.0.2 and up).
package internet

import (
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/mailroom/mailroom/dns/dnstest"
	"github.com/mailroom/mailroom/smtp/smtptest"
)

// Spec is what a box holds. Standard gives the usual one; a test changes
// the fields it cares about before Start.
type Spec struct {
	// Latency is the random wait of every transaction before its DATA
	// reply, from Latency[0] to Latency[1], on every site but Slow.
	Latency [2]time.Duration

	// ProviderDomains is how many domains the provider hosts (bigmail.test
	// and hosted-N.test), all with MX mx1.bigmail.test and
	// mx2.bigmail.test. ProviderMaxConnections caps each client address's
	// connections (421 beyond it), ProviderMaxRate its transactions a
	// minute (450 4.7.28 beyond it), counted over any ProviderRateWindow
	// (a minute's rate of 1,200 over 10 s is 200 in any 10 s); 0 is no
	// cap.
	ProviderDomains        int
	ProviderMaxConnections int
	ProviderMaxRate        int
	ProviderRateWindow     time.Duration

	// GreylistDomains are hosted by mx.greylist.test, which greylists each
	// client, sender and recipient triplet for GreylistDelay.
	GreylistDomains int
	GreylistDelay   time.Duration

	// SlowDomains are hosted by mx.slow.test, whose transactions wait
	// SlowLatency (from [0] to [1]) before the DATA reply.
	SlowDomains int
	SlowLatency [2]time.Duration

	// DeadDomains are hosted by mx.dead.test, which accepts connections
	// and never says a word.
	DeadDomains int

	// SmallDomains (shop-N.test, each with MX mx.shop-N.test) are spread
	// over SmallSites servers.
	SmallSites   int
	SmallDomains int
}

// Standard is the box of the benchmark and the end-to-end tests: a
// provider of 30 domains capping 5 connections and 1,200 messages a
// minute (200 in any 10 s) per client address, a greylister (10 domains, 2 s), a slow site
// (10 domains, 5 to 8 s a transaction), a dead site (5 domains) and 200
// small domains on 4 servers; 100 to 300 ms a transaction elsewhere.
func Standard() Spec {
	return Spec{
		Latency:                [2]time.Duration{100 * time.Millisecond, 300 * time.Millisecond},
		ProviderDomains:        30,
		ProviderMaxConnections: 5,
		ProviderMaxRate:        1200,
		ProviderRateWindow:     10 * time.Second,
		GreylistDomains:        10,
		GreylistDelay:          2 * time.Second,
		SlowDomains:            10,
		SlowLatency:            [2]time.Duration{5 * time.Second, 8 * time.Second},
		DeadDomains:            5,
		SmallSites:             4,
		SmallDomains:           200,
	}
}

// Site is one receiving site: a server on one or more addresses, and the
// domains whose MX hosts point there.
type Site struct {
	// Name names the site in reports ("provider", "greylist", "slow",
	// "dead", "small-1"...).
	Name string
	// IPs are the site's addresses; MX are the MX host names of its
	// domains (for the provider mx1 and mx2.bigmail.test; for a small
	// site, every hosted domain's own mx.<domain>).
	IPs []string
	MX  []string
	// Domains are the recipient domains the site hosts.
	Domains []string
	// MaxConnections and MaxRate are the caps it enforces per client
	// address (0: none); MaxRate in transactions a minute.
	MaxConnections int
	MaxRate        int
	// Server is the SMTP server, with its script, messages and counters.
	Server *smtptest.Server

	// mxPerDomain: MX[i] is Domains[i]'s own MX host, as each small
	// site's domains have.
	mxPerDomain bool
}

// Box is a running internet: its DNS server and its sites.
type Box struct {
	DNS  *dnstest.Server
	Port int

	Provider, Greylist, Slow, Dead *Site
	Small                          []*Site
	// Sites are all of them, the provider first.
	Sites []*Site

	byDomain map[string]*Site
}

// Start runs a box as spec says and stops it when the test ends.
func Start(tb testing.TB, spec Spec) *Box {
	tb.Helper()
	b, err := New(spec)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(b.Close)
	return b
}

// Addresses of the sites: the provider's two MX hosts, then one each.
// 127.0.0.10 to 127.0.0.19 are left for senders' source addresses.
const (
	providerIP1 = "127.0.0.2"
	providerIP2 = "127.0.0.3"
	greylistIP  = "127.0.0.4"
	slowIP      = "127.0.0.5"
	deadIP      = "127.0.0.6"
	smallBase   = 20 // small site i is 127.0.0.(20+i)
)

// New runs a box as Start does, for a program that is not a test
// (cmd/mailroom-load): the caller stops it with Close.
func New(spec Spec) (*Box, error) {
	dns, err := dnstest.New()
	if err != nil {
		return nil, err
	}
	b := &Box{DNS: dns, byDomain: map[string]*Site{}}
	latency := smtptest.WithLatency(spec.Latency[0], spec.Latency[1])

	if spec.ProviderDomains > 0 {
		domains := []string{"bigmail.test"}
		for i := 1; i < spec.ProviderDomains; i++ {
			domains = append(domains, fmt.Sprintf("hosted-%d.test", i))
		}
		b.Provider = &Site{Name: "provider", IPs: []string{providerIP1, providerIP2},
			MX: []string{"mx1.bigmail.test", "mx2.bigmail.test"}, Domains: domains,
			MaxConnections: spec.ProviderMaxConnections, MaxRate: spec.ProviderMaxRate}
		b.Sites = append(b.Sites, b.Provider)
	}
	if spec.GreylistDomains > 0 {
		b.Greylist = &Site{Name: "greylist", IPs: []string{greylistIP}, MX: []string{"mx.greylist.test"},
			Domains: numbered("greylist-%d.test", spec.GreylistDomains)}
		b.Sites = append(b.Sites, b.Greylist)
	}
	if spec.SlowDomains > 0 {
		b.Slow = &Site{Name: "slow", IPs: []string{slowIP}, MX: []string{"mx.slow.test"},
			Domains: numbered("slow-%d.test", spec.SlowDomains)}
		b.Sites = append(b.Sites, b.Slow)
	}
	if spec.DeadDomains > 0 {
		b.Dead = &Site{Name: "dead", IPs: []string{deadIP}, MX: []string{"mx.dead.test"},
			Domains: numbered("dead-%d.test", spec.DeadDomains)}
		b.Sites = append(b.Sites, b.Dead)
	}
	if spec.SmallSites > 0 && spec.SmallDomains > 0 {
		if spec.SmallSites > 200 {
			return nil, fmt.Errorf("internet: at most 200 small sites, not %d", spec.SmallSites)
		}
		for i := range spec.SmallSites {
			b.Small = append(b.Small, &Site{Name: fmt.Sprintf("small-%d", i+1), mxPerDomain: true, IPs: []string{fmt.Sprintf("127.0.0.%d", smallBase+i)}})
		}
		for i := 1; i <= spec.SmallDomains; i++ {
			s := b.Small[(i-1)%len(b.Small)]
			d := fmt.Sprintf("shop-%d.test", i)
			s.Domains = append(s.Domains, d)
			s.MX = append(s.MX, "mx."+d)
		}
		b.Sites = append(b.Sites, b.Small...)
	}

	options := func(s *Site) []smtptest.Option {
		opts := []smtptest.Option{smtptest.WithAddresses(s.IPs...), smtptest.WithDomain(s.MX[0])}
		switch s {
		case b.Provider:
			opts = append(opts, latency)
			if s.MaxConnections > 0 {
				opts = append(opts, smtptest.WithMaxConnections(s.MaxConnections))
			}
			if s.MaxRate > 0 {
				window := spec.ProviderRateWindow
				if window <= 0 {
					window = time.Minute
				}
				n := max(1, int(float64(s.MaxRate)*window.Minutes()+0.5))
				opts = append(opts, smtptest.WithMaxRate(n, window))
			}
		case b.Greylist:
			opts = append(opts, latency, smtptest.WithGreylisting(spec.GreylistDelay))
		case b.Slow:
			opts = append(opts, smtptest.WithLatency(spec.SlowLatency[0], spec.SlowLatency[1]))
		case b.Dead:
			opts = append(opts, smtptest.WithDead())
		default:
			opts = append(opts, latency)
		}
		return opts
	}
	if err := b.listen(options); err != nil {
		b.Close()
		return nil, err
	}
	for _, s := range b.Sites {
		b.publish(s)
	}
	return b, nil
}

// listen starts every site's server on one port: the first chooses a free
// one, and when another process holds it on another site's address, all
// start again on another.
func (b *Box) listen(options func(*Site) []smtptest.Option) error {
	var err error
	for attempt := 0; attempt < 10; attempt++ {
		port := 0
		for _, s := range b.Sites {
			s.Server, err = smtptest.New(append(options(s), smtptest.WithPort(port))...)
			if err != nil {
				break
			}
			port = s.Server.Port()
		}
		if err == nil {
			b.Port = port
			return nil
		}
		b.closeSites()
		for _, s := range b.Sites {
			s.Server = nil
		}
	}
	return fmt.Errorf("internet: no port free on every site's address: %w", err)
}

// publish gives the site's domains their MX records and its MX hosts
// their addresses.
func (b *Box) publish(s *Site) {
	for _, d := range s.Domains {
		b.byDomain[d] = s
	}
	if s.mxPerDomain {
		for i, d := range s.Domains {
			b.DNS.SetMX(d, 10, s.MX[i])
			b.DNS.SetA(s.MX[i], s.IPs[0])
		}
		return
	}
	for _, d := range s.Domains {
		for i, mx := range s.MX {
			b.DNS.SetMX(d, uint16(10*(i+1)), mx)
		}
	}
	for i, mx := range s.MX {
		b.DNS.SetA(mx, s.IPs[i%len(s.IPs)])
	}
}

func numbered(format string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf(format, i+1)
	}
	return out
}

// Close stops every server. What they received and counted can still be
// read.
func (b *Box) Close() {
	b.closeSites()
	b.DNS.Close()
}

func (b *Box) closeSites() {
	for _, s := range b.Sites {
		if s.Server != nil {
			_ = s.Server.Close()
		}
	}
}

// Flags point a mailroom serve at the box: its DNS server and the port of
// every MX host.
func (b *Box) Flags() []string {
	return []string{"--dns-server", b.DNS.Addr(), "--smtp-port", fmt.Sprint(b.Port)}
}

// SetHost publishes a host's forward and reverse records (A and PTR), as
// an operator does for a sending address, so that forward-confirmed
// reverse DNS holds (RFC 8601 §3: iprev).
func (b *Box) SetHost(name, ip string) {
	b.DNS.SetA(name, ip)
	b.DNS.SetPTR(ip, name)
}

// SiteOf is the site hosting domain, nil for a domain not in the box.
func (b *Box) SiteOf(domain string) *Site {
	return b.byDomain[strings.ToLower(domain)]
}

// Recipient is the i-th address of the site: user<i> at its domains in
// turn, so that consecutive ones are at different domains.
func (s *Site) Recipient(i int) string {
	return fmt.Sprintf("user%d@%s", i, s.Domains[i%len(s.Domains)])
}

// Delivered is how many recipients the site accepted messages for.
func (s *Site) Delivered() int {
	n := 0
	for _, m := range s.Server.Messages() {
		n += len(m.Rcpts)
	}
	return n
}

// Report says what a site saw, in one line: messages, connections and
// their peak against the cap, and the throttling and greylisting replies
// it gave.
func (s *Site) Report() string {
	st := s.Server.Stats()
	line := fmt.Sprintf("%-9s %4d domains: %5d messages, %5d connections, peak %d",
		s.Name, len(s.Domains), st.Messages, st.Connections, st.MaxAttempted)
	if s.MaxConnections > 0 {
		line += fmt.Sprintf(" (cap %d)", s.MaxConnections)
	}
	if s.MaxConnections > 0 || s.MaxRate > 0 {
		line += fmt.Sprintf(", refused %d (421), rate-throttled %d (450 4.7.28)", st.Refused, st.Throttled)
	}
	if st.Greylisted > 0 {
		line += fmt.Sprintf(", greylisted %d", st.Greylisted)
	}
	return line
}

// ClientIP is the address part of a session's client address.
func ClientIP(addr string) string {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return addr
	}
	return host
}
