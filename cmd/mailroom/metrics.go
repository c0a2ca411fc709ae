package main

import (
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	runtimepprof "runtime/pprof"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// startMetrics serves metricsHandler on addr (--metrics-listen), unless it
// is empty, and returns a function that stops it. Its default,
// 127.0.0.1:9090, is a port other programs like too (Prometheus itself):
// when it is taken, the error names the flag that moves it and the value
// that turns it off, rather than serve choosing another port the
// operator's scraper would not know of.
func startMetrics(addr string, reg *prometheus.Registry, sites http.Handler, log *slog.Logger) (stop func(), err error) {
	if addr == "" {
		return func() {}, nil
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("the metrics listener (--metrics-listen %s): %w; give --metrics-listen another HOST:PORT, "+
			"or --metrics-listen '' to serve no metrics", addr, err)
	}
	mux := metricsHandler(reg)
	// `mailroom sites` reads the sites' state here (docs/api.md "How mail
	// leaves"): the operator's listener, not the API.
	mux.Handle(sitesPath, sites)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	log.Info("metrics listening", "addr", ln.Addr().String())
	return func() { _ = srv.Close() }, nil
}

// metricsHandler serves the operator's listener (loopback by default):
// Prometheus metrics at /metrics and Go's profiles at /debug/pprof/, for
// finding where time goes on a live node (docs/api.md "Metrics").
//
// It serves nothing that shows the command line or the environment, where
// --secret-key and the passwords of --database-url and --relay-url may be:
// pprof's cmdline handler is not mounted (redacting it would mean knowing
// every secret flag forever; leaving it out needs no such list), and
// neither is http.DefaultServeMux, where expvar (imported by the
// Prometheus client) serves os.Args at /debug/vars and net/http/pprof
// registers cmdline. The profiles served hold no memory contents: heap
// and allocation profiles are stack traces and sizes, goroutine dumps show
// arguments only as machine words (a string as its pointer and length),
// and execution traces record scheduling events and stacks.
func metricsHandler(reg *prometheus.Registry) *http.ServeMux {
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	mux.HandleFunc("/debug/pprof/{$}", profileIndex)
	// pprof.Index serves /debug/pprof/NAME for the runtime's named
	// profiles (heap, goroutine, allocs, …) and 404 for any other name,
	// cmdline included.
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	return mux
}

// profileIndex lists the profiles served, in place of pprof.Index's page,
// which offers cmdline too.
func profileIndex(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	fmt.Fprintln(w, "Profiles (go tool pprof URL):")
	for _, p := range runtimepprof.Profiles() {
		fmt.Fprintf(w, "  /debug/pprof/%s\t%d\n", p.Name(), p.Count())
	}
	fmt.Fprintln(w, "  /debug/pprof/profile?seconds=N\tCPU profile\n  /debug/pprof/trace?seconds=N\texecution trace\n  /debug/pprof/symbol\tsymbol lookup")
}
