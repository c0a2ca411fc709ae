package smtpserver

import (
	"fmt"
	"log/slog"
	"strings"
)

// smtpLog takes go-smtp's own error lines: a panic in a session is a bug
// and logged as an error; the rest (clients that reset the connection,
// failed handshakes) is the ordinary noise of a port on the internet.
type smtpLog struct {
	log    *slog.Logger
	prefix string
}

func (l smtpLog) Printf(format string, v ...any) { l.line(fmt.Sprintf(format, v...)) }
func (l smtpLog) Println(v ...any)               { l.line(fmt.Sprintln(v...)) }

func (l smtpLog) line(msg string) {
	msg = strings.TrimSpace(msg)
	switch {
	case strings.Contains(msg, "panic"):
		l.log.Error(l.prefix + msg)
	case strings.HasPrefix(msg, "accept error"):
		l.log.Warn(l.prefix + msg)
	default:
		l.log.Debug(l.prefix + msg)
	}
}
