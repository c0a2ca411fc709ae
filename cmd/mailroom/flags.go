package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
)

// errHelpShown ends a command after --help printed its usage: exit 0.
var errHelpShown = errors.New("help shown")

// newFlagSet returns a flag set that neither prints nor exits: --help is
// answered by the command's own usage (command.printHelp), which writes
// flags as --flag the way the README does, and mistakes are reported once,
// by run.
func newFlagSet(name string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	return fs
}

// envName is a flag's environment twin: --data-dir is MAILROOM_DATA_DIR.
// The API key of send and messages, --key, is MAILROOM_API_KEY: the name
// a user looks for, and not to be taken for a signing or a TLS key.
func envName(flagName string) string {
	if flagName == "key" {
		return "MAILROOM_API_KEY"
	}
	return "MAILROOM_" + strings.ToUpper(strings.ReplaceAll(flagName, "-", "_"))
}

// parseFlags parses args, allowing flags before and after positional
// arguments (`accounts create acme --data-dir x`), then fills every flag
// not given on the command line from its environment twin, then reads the
// secret flags given as files (readSecretFiles). It returns the positional
// arguments, or flag.ErrHelp when -h or --help was given.
func parseFlags(fs *flag.FlagSet, args []string) ([]string, error) {
	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, err
			}
			return nil, usageError{flagError(err)}
		}
		args = fs.Args()
		if len(args) == 0 {
			break
		}
		positional = append(positional, args[0])
		args = args[1:]
	}
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	var err error
	fs.VisitAll(func(f *flag.Flag) {
		v, ok := os.LookupEnv(envName(f.Name))
		if given[f.Name] || !ok || err != nil {
			return
		}
		if e := fs.Set(f.Name, v); e != nil {
			err = usageError{fmt.Sprintf("%s: %v", envName(f.Name), e)}
		}
	})
	if err == nil {
		err = readSecretFiles(fs)
	}
	return positional, err
}

// flagError rewrites the flag package's messages, which name flags -flag,
// the way help writes them: "flag provided but not defined: -x" becomes
// "unknown flag --x", "invalid value … for flag -rate" names --rate.
func flagError(err error) string {
	msg := err.Error()
	if name, ok := strings.CutPrefix(msg, "flag provided but not defined: -"); ok {
		return "unknown flag --" + name
	}
	msg = strings.Replace(msg, "for flag -", "for flag --", 1)
	return strings.Replace(msg, "flag needs an argument: -", "flag needs an argument: --", 1)
}

// printFlags lists fs's flags as --name VALUE, each with what it does, its
// default and its environment twin; a usage ending in " (required)" says
// so among those notes. A `QUOTED` word of the usage text names
// the value, as in Go's flag package.
func printFlags(w io.Writer, fs *flag.FlagSet) {
	fs.VisitAll(func(f *flag.Flag) {
		value, usage := flag.UnquoteUsage(f)
		switch value {
		case "string":
			value = "VALUE"
		case "int", "float":
			value = "N"
		case "duration":
			value = "DURATION"
		}
		line := "  --" + f.Name
		if value != "" {
			line += " " + value
		}
		var notes []string
		if u, ok := strings.CutSuffix(usage, " (required)"); ok {
			usage, notes = u, append(notes, "required")
		}
		switch f.DefValue {
		case "", "0", "false", "0s":
		default:
			notes = append(notes, "default "+f.DefValue)
		}
		notes = append(notes, "env "+envName(f.Name))
		fmt.Fprintf(w, "%s\n        %s (%s)\n", line, usage, strings.Join(notes, "; "))
	})
}

// hasFlags reports whether fs defines any flag.
func hasFlags(fs *flag.FlagSet) bool {
	n := 0
	fs.VisitAll(func(*flag.Flag) { n++ })
	return n > 0
}
