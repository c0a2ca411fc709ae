package main

import (
	"context"
	"fmt"
	"net"
	"time"
)

// checkListenAddr refuses a listen address that net.Listen could never
// take, a mistake in the command line (exit 2) found before serve touches
// the data directory: not HOST:PORT, or a port that is neither a number
// of 0..65535 nor a service name. A name that does not resolve, an address
// not on this host or a port in use are found when serve listens.
func checkListenAddr(ctx context.Context, flagName, addr string) error {
	_, port, err := net.SplitHostPort(addr)
	if err == nil {
		ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		_, err = net.DefaultResolver.LookupPort(ctx, "tcp", port)
	}
	if err != nil {
		return usageError{fmt.Sprintf("%s %q is not HOST:PORT (such as 127.0.0.1:8025, or :8025 for every interface): %v",
			flagName, addr, err)}
	}
	return nil
}
