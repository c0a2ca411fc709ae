package smtp

import (
	"log/slog"

	"github.com/mailroom/mailroom"
)

// sourcePool is the pool of source addresses a delivery's connections come
// from (docs/api.md "How mail leaves"): the one its sending domain names,
// else the first of Direct.Pools; without pools, one address the system
// picks, named "".
func (d *Direct) sourcePool(name string) mailroom.IPPool {
	if len(d.Pools) == 0 {
		return mailroom.IPPool{Addresses: []mailroom.SourceAddress{{}}}
	}
	p := d.Pools[0]
	if name != "" && name != p.Name {
		found := false
		for _, q := range d.Pools[1:] {
			if q.Name == name {
				p, found = q, true
				break
			}
		}
		if !found {
			d.warnUnknownPool(name, p.Name)
		}
	}
	if len(p.Addresses) == 0 {
		p.Addresses = []mailroom.SourceAddress{{}}
	}
	return p
}

// warnUnknownPool logs, once per name, that a sending domain names a pool
// this node does not have (a node started with other --ip-pool flags than
// the one that assigned it): its mail leaves from the default pool rather
// than not at all.
func (d *Direct) warnUnknownPool(name, fallback string) {
	if _, seen := d.unknownPools.LoadOrStore(name, true); seen {
		return
	}
	log := d.Log
	if log == nil {
		log = slog.Default()
	}
	log.Warn("a sending domain's IP pool is not configured on this node; its mail leaves from the default pool",
		"pool", name, "default", fallback)
}

// poolKeys are the connKeys of dest (a site or an MX host) from each
// address of p, in order, and the group they take turns in: the pool.
func poolKeys(dest string, p mailroom.IPPool) ([]connKey, string) {
	keys := make([]connKey, len(p.Addresses))
	for i, a := range p.Addresses {
		keys[i] = connKey{Site: dest, Source: sourceName(a.IP)}
	}
	// The pool's addresses take turns across every destination: turns per
	// destination would send the first connection to each new site from
	// the pool's first address, and mail to many sites from it alone.
	return keys, p.Name
}
