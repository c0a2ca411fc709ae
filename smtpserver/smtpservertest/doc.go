// Package smtpservertest is the test harness of the SMTP listeners built
// on smtpserver (inbound, submission, and smtpserver's own tests): serving
// on loopback, a raw client for what a well-behaved one would not send,
// deadline polling, and the flood and malformed-input scenarios every
// listener must survive.
package smtpservertest
