package main

import (
	"flag"
	"fmt"
	"os"
	"strings"
)

// secretFlag registers --NAME, whose value is a secret (a key, or a URL
// holding a password), and its file form --NAME-file. A process's command
// line is readable by every local user (/proc/PID/cmdline, ps); its
// environment (/proc/PID/environ) only by its own user and root, and a
// file by whom its permissions say: docs/api.md "Command line" recommends
// the file or the environment.
func secretFlag(fs *flag.FlagSet, p *string, name, usage string) {
	fs.StringVar(p, name, "", usage)
	fs.Var(&secretFile{fills: p, name: name}, name+"-file",
		"a `FILE` holding --"+name+", one trailing line break dropped; unlike the flag, not shown to other local users in the process list")
}

// secretFile is the value of a --NAME-file flag: the file's path, read by
// readSecretFiles once the command line and the environment are parsed.
type secretFile struct {
	path  string
	fills *string // the --NAME value it supplies
	name  string  // NAME
}

func (f *secretFile) String() string {
	if f == nil {
		return ""
	}
	return f.path
}

func (f *secretFile) Set(path string) error { f.path = path; return nil }

// readSecretFiles fills every secret flag given in its file form from the
// file. Both forms at once (from the command line or the environment, in
// any mix) is a mistake in the command line, not a choice to guess at.
func readSecretFiles(fs *flag.FlagSet) error {
	var err error
	fs.VisitAll(func(fl *flag.Flag) {
		f, ok := fl.Value.(*secretFile)
		if !ok || f.path == "" || err != nil {
			return
		}
		if *f.fills != "" {
			err = usageError{fmt.Sprintf("give --%s or --%s-file, not both (%s and %s count as given)",
				f.name, f.name, envName(f.name), envName(f.name+"-file"))}
			return
		}
		b, e := os.ReadFile(f.path)
		if e != nil {
			err = fmt.Errorf("--%s-file: %w", f.name, e)
			return
		}
		v, found := strings.CutSuffix(string(b), "\r\n")
		if !found {
			v = strings.TrimSuffix(v, "\n")
		}
		if v == "" {
			err = fmt.Errorf("--%s-file: %s is empty", f.name, f.path)
			return
		}
		*f.fills = v
	})
	return err
}
