// Package ratelimit enforces each account's request rate (docs/api.md "Limits") on
// one node, with a token bucket per account (golang.org/x/time/rate) kept
// in memory: deciding a request costs a map lookup and no database round
// trip, so that a client over its limit costs the service almost nothing.
//
// The limits themselves live in storage (accounts.request_rate and
// request_burst, set by `mailroom accounts update`); Run reloads them
// every few seconds, so a change reaches every running node without a
// restart.
//
// Nodes sharing PostgreSQL do not talk to each other per request. Each
// enforces its share of an account's limit instead, rate/n and burst/n for
// n live nodes (SetNodes), so that the account as a whole gets its limit
// when its requests are spread over the nodes, as a load balancer that
// balances requests (not connections) spreads them.
package ratelimit
