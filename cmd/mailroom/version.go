package main

import (
	"context"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
)

// version is set at build time with -ldflags "-X main.version=…".
var version = ""

func versionString() string {
	v := version
	if v == "" {
		v = "(devel)"
		if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" {
			v = bi.Main.Version
		}
	}
	return fmt.Sprintf("mailroom %s %s/%s %s", v, runtime.GOOS, runtime.GOARCH, runtime.Version())
}

// versionCommand is `mailroom version`.
func versionCommand(_ context.Context, c *command, args []string, stdout, stderr io.Writer) error {
	rest, err := c.parse(newFlagSet(c.name), args, stdout)
	if err != nil {
		return err
	}
	if len(rest) > 0 {
		return usageError{fmt.Sprintf("version takes no arguments, got %q", rest)}
	}
	fmt.Fprintln(stdout, versionString())
	return nil
}

// shortVersion is the version alone, as a product token can carry it
// (User-Agent: Mailroom-Webhooks/<version>): "dev" for a build without one.
func shortVersion() string {
	v := version
	if v == "" {
		if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
			v = bi.Main.Version
		}
	}
	if v == "" {
		v = "dev"
	}
	return v
}
