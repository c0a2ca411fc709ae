// Package mtasts finds the MTA-STS policy (RFC 8461) of a recipient domain
// before mail is sent to it. A domain that publishes one (Gmail, Outlook)
// says: deliver to us only through these MX hosts, over TLS with a
// certificate valid for the MX name. Without it, anyone on the path can
// strip STARTTLS or answer for the MX. Delivery (package smtp) asks
// Policies.Lookup per attempt and enforces what it gets
// (mailroom.TLSRequirementFor).
//
// # Discovery and fetch
//
// The TXT record _mta-sts.<domain> announces a policy and its id (RFC 8461
// §3.1; ParseRecord): records not beginning with "v=STSv1" are others';
// exactly one STS record must remain and be valid, else the domain has no
// policy. The policy comes from https://mta-sts.<domain>/.well-known/mta-sts.txt
// (§3.3): the certificate verified for mta-sts.<domain> against the system
// roots (or Options.RootCAs), no redirect followed, only a 200, at most
// MaxPolicySize bytes (read no further), media type text/plain, within
// Options.Timeout; and parsed strictly (§3.2; ParsePolicy). Every DNS
// question, the policy host's addresses included, goes to the configured
// resolver (--dns-server). Fetches are not SSRF-guarded: they go wherever
// MX connections may.
//
// # The cache
//
// Policies are cached in the store, shared by all nodes (a policy one node
// fetched is in force on all, and across restarts), and in memory in front
// of it (bounded, least recently used forgotten first):
//
//   - A cached policy is used as it is until it was last checked
//     CheckInterval (an hour) ago; then, or at every Lookup with
//     afterFailure (an earlier attempt to the domain failed), the TXT record
//     is looked up again. The same id only renews the check (CheckedAt, in
//     the store, so that other nodes skip their lookup); a new id, or none
//     cached, fetches the policy.
//   - A cached policy stays in force until it expires (FetchedAt + max_age)
//     even when a later TXT lookup or fetch fails, and even when the TXT
//     record is gone (§5.1: it could be an attacker removing it). Expired,
//     it is no longer used, and deleted when nothing replaces it.
//   - A fetched policy of mode none withdraws the cached one: it is deleted
//     and Lookup returns no policy (§8.3); that id is not fetched again.
//   - A domain without a TXT record returns no policy quickly, and that
//     answer too is remembered in memory for CheckInterval, so that a
//     delivery to the many domains without MTA-STS does not cost a DNS
//     query each.
//   - When a domain announces a policy that cannot be fetched or parsed
//     and none is cached, Lookup returns the failure (RFC 8460 result
//     types sts-policy-fetch-error, sts-webpki-invalid,
//     sts-policy-invalid) and no policy: delivery goes on as if there were
//     none (§5), and the failure is reported. Failed fetches and DNS
//     failures are tried again after RetryInterval (at once after a failed
//     delivery attempt), so a broken policy host is not asked per message.
//   - A DNS failure (SERVFAIL, timeout) changes nothing cached; with
//     nothing cached, the domain has no policy and no failure.
//
// Concurrent Lookups of one domain share one lookup and fetch
// (golang.org/x/sync/singleflight). Times of the cache come from
// Options.Now.
package mtasts
