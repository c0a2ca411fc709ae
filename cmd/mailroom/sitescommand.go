package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/mailroom/mailroom"
	"github.com/mailroom/mailroom/sites"
)

// sitesPath is where the metrics listener serves the sites' state.
const sitesPath = "/sites"

// sitesHandler serves the sites' state as JSON on the metrics listener,
// for `mailroom sites`.
func sitesHandler(t *sites.Tracker) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-store")
		_ = json.NewEncoder(w).Encode(t.Snapshot())
	})
}

// sitesCommand prints each site's state on a running node, read from its
// metrics listener (docs/api.md "How mail leaves").
func sitesCommand(ctx context.Context, c *command, args []string, stdout, _ io.Writer) error {
	fs := newFlagSet(c.name)
	asJSON := fs.Bool("json", false, "print the node's JSON")
	metricsURL := fs.String("metrics-url", "http://127.0.0.1:9090", "the running node's metrics listener (its --metrics-listen), as a `URL`")
	rest, err := c.parse(fs, args, stdout)
	if err != nil {
		return err
	}
	if len(rest) > 0 {
		return usageError{fmt.Sprintf("sites takes no arguments, got %q", rest)}
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimSuffix(*metricsURL, "/")+sitesPath, nil)
	if err != nil {
		return usageError{"--metrics-url: " + err.Error()}
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("no running node answered at %s (its --metrics-listen; give --metrics-url): %w", *metricsURL, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return fmt.Errorf("reading %s: %w", req.URL, err)
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s answered %s: is it a Mailroom node's metrics listener?", req.URL, resp.Status)
	}
	if *asJSON {
		_, err := stdout.Write(body)
		return err
	}
	var states []sites.State
	if err := json.Unmarshal(body, &states); err != nil {
		return fmt.Errorf("%s did not answer the sites' state: %w", req.URL, err)
	}
	printSites(stdout, states)
	return nil
}

// printSites writes states as a table, one line per site and source
// address, with its last throttling reply.
func printSites(w io.Writer, states []sites.State) {
	if len(states) == 0 {
		fmt.Fprintln(w, "No site was sent to in the last hour.")
		return
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "SITE\tSOURCE\tRATE/MIN\tCONNECTIONS\tSUSPENDED UNTIL\tLAST THROTTLE")
	for _, s := range states {
		source := s.Source
		if source == "" {
			source = "-"
		}
		rate := "unlimited"
		if s.Rate > 0 {
			rate = fmt.Sprintf("%.0f", s.Rate)
		}
		if s.MaxRate > 0 {
			rate += fmt.Sprintf(" of %.0f", s.MaxRate)
		}
		suspended := "-"
		if s.SuspendedUntil != nil {
			suspended = s.SuspendedUntil.UTC().Format(time.RFC3339)
		}
		last := "-"
		if n := len(s.RecentReplies); n > 0 {
			r := s.RecentReplies[n-1]
			last = strings.TrimSpace(fmt.Sprintf("%s %d %s %s", r.At.UTC().Format(time.RFC3339), r.Code, r.Enhanced, mailroom.Excerpt(r.Text, 60)))
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d of %d\t%s\t%s\n", s.Site, source, rate, s.Connections, s.MaxConnections, suspended, last)
	}
	_ = tw.Flush()
}
