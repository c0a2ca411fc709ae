package smtp

import (
	"cmp"
	"context"
	"slices"
	"time"

	"github.com/mailroom/mailroom"
	"github.com/mailroom/mailroom/positive"
)

// siteAttempt is one delivery to its destination's site (docs/api.md "How
// mail leaves"): every domain whose MX hosts one profile matches shares the
// site's connections, its rate and its back-off.
type siteAttempt struct {
	d       *Direct
	eng     *engine
	del     *mailroom.Delivery
	sites   mailroom.Sites
	profile mailroom.SiteProfile
	request connRequest
	gate    *tlsGate
}

// toSite delivers del to the site of its domain, whose MX hosts are mx
// (hosts: them in the order to try): on an idle session of the site that
// may carry it (with the first of hosts it can), or a new connection under the site's cap, from one of
// pool's addresses, once the site's rate has a place for it. Every result
// names the site.
func (d *Direct) toSite(ctx context.Context, eng *engine, del *mailroom.Delivery, domain string, mx, hosts []string, pool mailroom.IPPool, addrs addrFunc, gate *tlsGate) []mailroom.RecipientResult {
	a := &siteAttempt{d: d, eng: eng, del: del, sites: d.Sites, profile: d.Sites.Site(domain, mx), gate: gate}
	keys, group := poolKeys(a.profile.Name, pool)
	// A session of the site carries the delivery only if the delivery's
	// TLS requirement allows its host and its TLS meets it.
	a.request = connRequest{keys: keys, group: group, rank: rankFor(a.profile, hosts), fits: gate.fits}
	if p := hostName(del.PreferMX); slices.Contains(mx, p) {
		a.request.prefer = p
	}
	res := a.run(ctx, pool.Addresses, hosts, addrs)
	setSite(res, a.profile.Name)
	return res
}

// rankFor says which sessions may carry mail for a domain of site p whose
// MX hosts are hosts, in the order to try them: those with one of them,
// best first, or else with any host p's patterns match, since every such
// host takes mail for all the site's domains (-1: neither).
func rankFor(p mailroom.SiteProfile, hosts []string) func(host string) int {
	return func(host string) int {
		if i := slices.Index(hosts, host); i >= 0 {
			return i
		}
		for _, pat := range p.MX {
			if mailroom.MatchMXPattern(pat, host) {
				return len(hosts)
			}
		}
		return -1
	}
}

func (a *siteAttempt) now() time.Time {
	if a.d.Now != nil {
		return a.d.Now()
	}
	return time.Now()
}

// run makes the attempt: a session or a slot and a place in the rate
// (start), a session (the idle one, or a new connection to the first host
// that greets), one transaction, and what the site is told of it.
func (a *siteAttempt) run(ctx context.Context, sources []mailroom.SourceAddress, hosts []string, addrs addrFunc) []mailroom.RecipientResult {
	l, src, place, res := a.start(ctx, sources)
	if res != nil {
		return res
	}
	spec := a.spec(l.key, src)
	c, last, why := a.eng.session(ctx, &l, hosts, addrs, spec)
	if c == nil {
		// No transaction: its place in the rate goes back.
		cancelPlace(place)
		res := results(a.del.Recipients, last, a.gate.verdict(why))
		if why.Reason == mailroom.DeferThrottled {
			a.throttled(l.key, mailroom.SiteThrottledOnConnect, why, last, res)
		}
		return res
	}
	res, reusable, throttle := a.eng.use(ctx, c, a.del, spec.throttled, a.gate)
	if slices.ContainsFunc(res, func(r mailroom.RecipientResult) bool { return r.Outcome == mailroom.Delivered }) {
		a.sites.Observe(l.key, mailroom.SiteEvent{Kind: mailroom.SiteDelivered, At: a.now(), MX: c.host})
	}
	var end func()
	switch max := a.profile.MaxMessagesPerConnection; {
	case throttle != nil:
		// Never pooled: the receiver said to slow down.
		end = func() { go c.quit() }
		a.throttled(l.key, mailroom.SiteThrottled, *throttle, c.host, res)
	case !reusable:
		end = c.close
	case max > 0 && c.transactions >= max:
		end = func() { go c.quit() }
	default:
		a.eng.conns.put(c)
		return res
	}
	afterRecorded(c, end)
	return res
}

// spec is how the attempt's new connections are made: from src, with its
// EHLO name, within the profile's connect timeout, telling the site.
func (a *siteAttempt) spec(key connKey, src mailroom.SourceAddress) dialSpec {
	timeout := positive.Or(a.profile.ConnectTimeout, a.eng.cfg.dialTimeout)
	return dialSpec{
		source:       src,
		ehlo:         cmp.Or(src.EHLOName, a.eng.cfg.hostname),
		dialTimeout:  timeout,
		greetTimeout: timeout,
		sites:        a.sites,
		key:          key,
		throttled:    newThrottleRule(a.del.FirstAttempt),
		now:          a.now,
		gate:         a.gate,
	}
}

// throttled tells the site of a throttling reply st from mx, lowers what
// is idle to the cap it may have lowered, and gives the recipients it
// concerns (already marked, Reason) the site's next free place.
func (a *siteAttempt) throttled(key connKey, kind mailroom.SiteEventKind, st status, mx string, res []mailroom.RecipientResult) {
	now := a.now()
	a.sites.Observe(key, mailroom.SiteEvent{Kind: kind, At: now, Code: st.Code, Enhanced: st.Enhanced, Text: st.Text, MX: mx})
	a.eng.conns.trim(key)
	retry := a.sites.ReadyAt(a.profile.Name, now)
	if retry.Before(now) {
		retry = now
	}
	for i := range res {
		if res[i].Reason == mailroom.DeferThrottled {
			res[i].RetryAt = retry
		}
	}
}

// tellConnected tells the site of a connection greeted with 220, and
// arranges for it to be told when the connection closes.
func (spec dialSpec) tellConnected(c *client) {
	sites, key, now, mx := spec.sites, spec.key, spec.now, c.host
	sites.Observe(key, mailroom.SiteEvent{Kind: mailroom.SiteConnected, At: now(), MX: mx})
	c.onClose = func() {
		sites.Observe(key, mailroom.SiteEvent{Kind: mailroom.SiteDisconnected, At: now(), MX: mx})
	}
}

func setSite(res []mailroom.RecipientResult, site string) {
	for i := range res {
		res[i].Site = site
	}
}
