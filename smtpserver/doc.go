// Package smtpserver is the skeleton of every SMTP listener of the
// service: the return-path MX (package inbound) and SMTP submission
// (package submission) are each this skeleton plus the sessions that say
// what differs (inbound: RCPT only for bounce addresses, report parsing,
// no AUTH; submission: AUTH after TLS, failed-login limits, Submit).
//
// The skeleton holds what a listener on the open internet needs whatever
// it takes mail for: the lifecycle (Serve, Shutdown that lets messages in
// flight finish, Close), the caps on connections per client address and
// overall, refused inside Accept (conns.go), the DATA reader that bounds a
// message's size and time (message.go), the bounds of a session (junk
// commands, errors and its time; guard.go, guardsession.go), the limits
// and their defaults (limits.go), the replies both give (replies.go),
// go-smtp's error log (log.go) and the outcome counter (metrics.go). A
// client opening thousands of connections, trickling a message or sending
// commands that do nothing must cost it almost nothing.
//
// It imports the root package, for the error codes that make a
// failure temporary, and the leaf positive, never a listener's package.
package smtpserver
