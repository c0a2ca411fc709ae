// Package sealer encrypts secrets at rest: DKIM private keys and webhook
// signing secrets are stored sealed, so a copy of the database alone (a
// backup, a replica, a leaked dump) does not give away the power to sign
// mail as a customer's domain or to forge webhook deliveries.
//
// The key comes from --secret-key or, without it, from a file made once in
// the data directory. Nodes sharing one PostgreSQL database must all be
// given the same key, or each will fail to open what the others sealed.
package sealer
