package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/mailroom/mailroom"
	"github.com/mailroom/mailroom/apikey"
	"github.com/mailroom/mailroom/audit"
	"github.com/mailroom/mailroom/cluster"
	"github.com/mailroom/mailroom/dashboard"
	mhttp "github.com/mailroom/mailroom/http"
	"github.com/mailroom/mailroom/inbound"
	"github.com/mailroom/mailroom/membudget"
	"github.com/mailroom/mailroom/mtasts"
	"github.com/mailroom/mailroom/mustache"
	"github.com/mailroom/mailroom/receiving"
	"github.com/mailroom/mailroom/sealer"
	"github.com/mailroom/mailroom/sqlite"
	"github.com/mailroom/mailroom/template"
	"github.com/mailroom/mailroom/tlscert"
	"github.com/mailroom/mailroom/webhook"
)

// serveConfig holds the flags of `mailroom serve` (docs/api.md "Command line").
type serveConfig struct {
	storageFlags
	domainFlags
	deliveryFlags
	webhookFlags
	inboundFlags
	submissionFlags
	httpsFlags
	requestMemoryFlags
	tlsRptFlags
	healthFlags
	dev           bool
	listen        string
	tlsCert       string
	tlsKey        string
	secretKey     string
	hostname      string
	publicURL     string
	metricsListen string
	logFormat     string
	maxTemplates  int
	// maxTemplateVersions is how many versions one template may have.
	maxTemplateVersions int
}

// returnPathKeyLabel names the key of return-path tokens among those
// derived from the secret key: changing it makes every token in flight
// unverifiable.
const returnPathKeyLabel = "mailroom return-path v1"

// The default HTTPS addresses: every interface in production, loopback
// only with --dev, whose printed key and self-signed certificate are for
// the developer's own machine, not for the network it sits on.
const (
	defaultListen    = ":8443"
	defaultDevListen = "127.0.0.1:8443"
)

func serveCommand(ctx context.Context, c0 *command, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet(c0.name)
	var c serveConfig
	c.storageFlags.register(fs)
	c.domainFlags.register(fs)
	c.deliveryFlags.register(fs)
	c.webhookFlags.register(fs)
	c.inboundFlags.register(fs)
	c.submissionFlags.register(fs)
	c.httpsFlags.register(fs)
	c.requestMemoryFlags.register(fs)
	c.tlsRptFlags.register(fs)
	c.healthFlags.register(fs)
	fs.BoolVar(&c.dev, "dev", false, "zero set-up: self-signed TLS, an account \"dev\" and a key with every scope printed on start, mail captured, HTTPS on 127.0.0.1 only")
	fs.StringVar(&c.listen, "listen", "", "the `HOST:PORT` the HTTPS API listens on (default \""+defaultListen+"\"; \""+defaultDevListen+"\" with --dev)")
	fs.StringVar(&c.tlsCert, "tls-cert", "", "certificate `FILE` (PEM); without it a self-signed one is made once in the data directory")
	fs.StringVar(&c.tlsKey, "tls-key", "", "private key `FILE` (PEM) of --tls-cert")
	secretFlag(fs, &c.secretKey, "secret-key", "`BASE64` of 32 bytes that encrypts DKIM keys and webhook secrets at rest; nodes sharing PostgreSQL need the same")
	fs.StringVar(&c.hostname, "hostname", defaultHostname(), "this host's fully qualified `NAME`: EHLO, Message-ID fallbacks, the self-signed certificate and the default SPF and MX records name it")
	fs.StringVar(&c.publicURL, "public-url", "", "the service's public HTTPS base `URL`, which marketing mail's one-click unsubscribe links point at (default https://<hostname>; with --dev, the address it serves)")
	fs.StringVar(&c.metricsListen, "metrics-listen", "127.0.0.1:9090", "the `HOST:PORT` of Prometheus metrics and pprof; empty disables")
	fs.IntVar(&c.maxTemplates, "max-templates", mailroom.DefaultMaxTemplates, "how many templates one account may have")
	fs.IntVar(&c.maxTemplateVersions, "max-template-versions", mailroom.DefaultMaxTemplateVersions, "how many versions one template may have: a save past it is refused, and every version stays readable")
	fs.StringVar(&c.logFormat, "log-format", "", "the log `FORMAT`, text or json (default: text with --dev, json otherwise)")
	rest, err := c0.parse(fs, args, stdout)
	if err != nil {
		return err
	}
	if len(rest) > 0 {
		return usageError{fmt.Sprintf("serve takes no arguments, got %q", rest)}
	}
	if (c.tlsCert == "") != (c.tlsKey == "") {
		return usageError{"--tls-cert and --tls-key go together"}
	}
	if c.listen == "" {
		c.listen = defaultListen
		if c.dev {
			c.listen = defaultDevListen
		}
	}
	if err := c.check(ctx); err != nil {
		return err
	}
	if c.dev {
		// A developer's receiver runs on the same machine, over http.
		c.webhookFlags.allowPrivate = true
	}
	log, err := newLogger(c.logFormat, c.dev, stderr)
	if err != nil {
		return err
	}
	slog.SetDefault(log)
	c.httpsFlags.warn(c.dev, c.listen, log)
	if problem := mailroom.HostnameProblem(c.hostname); problem != "" {
		// A warning, not a refusal: a laptop running --dev needs no DNS.
		log.Warn(fmt.Sprintf("--hostname %q %s: EHLO, the default SPF record (a:%s) and the return-path MX name it, and receivers cannot resolve it; "+
			"pass this host's fully qualified name, such as --hostname mail.example.net (or MAILROOM_HOSTNAME)", c.hostname, problem, c.hostname),
			"hostname", c.hostname)
	}
	return serve(ctx, c, log, stdout)
}

// check refuses every mistake in serve's flags that can be seen without
// storage, before serve touches the data directory: a command line that
// fails leaves nothing behind (no data directory, database or key made
// for a run that never started).
func (c *serveConfig) check(ctx context.Context) error {
	if err := c.httpsFlags.check(ctx, c.dev, c.listen); err != nil {
		return err
	}
	if c.metricsListen != "" {
		if err := checkListenAddr(ctx, "--metrics-listen", c.metricsListen); err != nil {
			return err
		}
	}
	if c.maxTemplates < 1 {
		return usageError{"--max-templates must be at least 1"}
	}
	if c.maxTemplateVersions < 1 {
		return usageError{"--max-template-versions must be at least 1"}
	}
	if c.secretKey != "" {
		if _, err := sealer.ParseKey(c.secretKey); err != nil {
			return usageError{"--secret-key: " + err.Error()}
		}
	}
	if _, err := c.resolvePublicURL(); err != nil {
		return err
	}
	for _, check := range []func() error{
		c.domainFlags.check,
		func() error { return c.deliveryFlags.check(c.dev) },
		c.webhookFlags.check,
		func() error { return c.inboundFlags.check(ctx) },
		func() error { return c.submissionFlags.check(ctx) },
		c.tlsRptFlags.check,
	} {
		if err := check(); err != nil {
			return err
		}
	}
	return nil
}

// serve runs the service on flags check accepted.
func serve(ctx context.Context, c serveConfig, log *slog.Logger, stdout io.Writer) error {
	if err := os.MkdirAll(c.dataDir, 0o700); err != nil {
		return fmt.Errorf("data directory: %w", err)
	}
	if c.databaseURL == "" {
		unlock, err := sqlite.LockForServe(c.dataDir)
		if err != nil {
			return err
		}
		defer unlock()
	}
	store, err := c.open(ctx)
	if err != nil {
		return err
	}
	// Closed last, after every goroutine that uses it has returned.
	defer store.Close()

	seal, created, err := sealer.LoadOrCreate(c.dataDir, c.secretKey)
	if err != nil {
		return fmt.Errorf("secret key: %w", err)
	}
	if err := checkSecretKey(ctx, store, seal, c.storageFlags, created, log); err != nil {
		return err
	}
	if created {
		fmt.Fprintf(stdout, "Made a secret key for data at rest in %s; keep a copy of it, apart from the store's backups.\n", c.dataDir)
	}
	domains, resolver, err := c.domainFlags.service(store, seal, c.hostname, log)
	if err != nil {
		return err
	}
	if domains.Health, err = c.healthFlags.health(resolver, c.hostname, domains.Settings.MXHost, c.sitesFlags.pools, &c.domainFlags); err != nil {
		return err
	}
	// Each site's limits are this node's share: the heartbeat keeps the
	// count of live nodes.
	var liveNodes atomic.Int64
	liveNodes.Store(1)
	siteState := c.sitesFlags.tracker(store, &liveNodes, log)
	var directSites mailroom.Sites
	if c.deliveryMode(c.dev) == "direct" {
		directSites = siteState
	}
	tlsPolicy := directTLS{
		mtasts:   mtasts.New(mtasts.Options{Resolver: resolver, Store: store, Log: log}),
		observer: c.tlsReportCollector(store, log),
	}
	transport, deliveryNote, err := c.deliveryFlags.transport(c.dev, resolver, c.hostname, directSites, tlsPolicy)
	if err != nil {
		return err
	}
	defer transport.Close()
	node := &mailroom.Node{ID: mailroom.NewID(mailroom.PrefixNode, time.Now()), Hostname: c.hostname, StartedAt: time.Now().UTC()}
	svc, err := c.deliveryFlags.services(store, domains, transport, directSites, c.hostname, node.ID, log)
	if err != nil {
		return err
	}
	returnPaths := inbound.ReturnPaths{Key: seal.DeriveKey(returnPathKeyLabel), BounceSubdomain: domains.ReturnPathDomain}
	svc.deliverer.ReturnPaths = returnPaths
	unsubscribes, err := c.unsubscribes(store, seal, svc.signer)
	if err != nil {
		return err
	}
	trackings, err := c.trackings(store, seal, svc.signer, log)
	if err != nil {
		return err
	}
	templates := &template.Service{Store: store, Engine: mustache.Engine{}, Now: time.Now, Max: c.maxTemplates, MaxVersions: c.maxTemplateVersions}
	svc.sender.Templates = templates
	hooks, err := c.webhookFlags.services(store, seal, resolver, node.ID, log)
	if err != nil {
		return err
	}
	// An accept writes email.queued events: both workers have work.
	queued := svc.sender.Queued
	svc.sender.Queued = func() { queued(); hooks.dispatcher.Wake() }

	cert, certNote, err := c.certificate()
	if err != nil {
		return err
	}

	var devKey string
	if c.dev {
		if devKey, err = ensureDevAccount(ctx, store, domains, c.dataDir, time.Now()); err != nil {
			return fmt.Errorf("dev set-up: %w", err)
		}
		domains.Sandbox = devSandboxDomain
	}

	registry := prometheus.NewRegistry()
	registry.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	svc.deliverer.Observe = deliveryMetrics(registry)
	svc.deliverer.ObserveDeferral = deferralMetrics(registry)
	siteState.Metrics(registry)
	hooks.dispatcher.Observe = webhook.Metrics(registry, store, log)
	limiter := newRateLimiter(ctx, store, registry, log)

	// Each heartbeat tells the rate limiter how many nodes share the
	// accounts' limits, and delivery that storage answers writes.
	onBeat := func(live int) { limiter.SetNodes(live); liveNodes.Store(int64(live)); svc.deliverer.StorageAnswered() }
	members, err := c.join(ctx, store, node, onBeat, log)
	if err != nil {
		return err
	}
	members.OnReleased = svc.deliverer.Wake
	svc.deliverer.Healthy = members.Healthy

	background, cancelBackground := context.WithCancel(context.WithoutCancel(ctx))
	var workers sync.WaitGroup
	// stopBackground stops the background work and waits for it, so that
	// none of it outlives serve (logs after serve returned, a store
	// closed under it), on a failed start as at the end.
	stopBackground := func() {
		cancelBackground()
		workers.Wait()
	}
	usage := apikey.NewUsage(store, log)
	workers.Go(func() { usage.Run(background) })
	workers.Go(func() { members.Run(background) })
	workers.Go(func() { limiter.Run(background, rateLimitReload) })
	workers.Go(func() { domains.RunRechecks(background, 30*time.Second) })
	workers.Go(func() { svc.retention.Run(background, time.Hour) })
	workers.Go(func() { siteState.Run(background) })
	c.startTLSReports(background, &workers, c.tlsReportCollector(store, log), registry, store, resolver,
		c.newReportMailer(store, domains, svc.sender.Queued), c.webhookFlags.allowPrivate, log)
	workers.Go(func() { c.reloadOnHangup(background, siteState, log) })
	if directSites != nil {
		workers.Go(func() { c.warnReverseDNS(background, resolver, c.hostname, log) })
	}
	// Delivery stops claiming when its context ends (SIGTERM, or the
	// HTTPS server failing), and drains.
	deliveryCtx, stopDelivery := context.WithCancel(ctx)
	defer stopDelivery()
	deliveryDone, webhooksDone := make(chan struct{}), make(chan struct{})
	if svc.deliverer.MaxMessages > 0 {
		go func() { svc.deliverer.Run(deliveryCtx); close(deliveryDone) }()
		go func() { hooks.dispatcher.Run(deliveryCtx); close(webhooksDone) }()
	} else {
		close(deliveryDone)
		close(webhooksDone)
	}
	// abandon undoes what has started when the start fails from here on:
	// delivery and the background work stop, and are waited for.
	abandon := func() {
		stopDelivery()
		<-deliveryDone
		<-webhooksDone
		stopBackground()
	}

	// One memory budget for the node, which the API and SMTP submission
	// both take from, and one count of its refusals.
	memory := c.requestMemoryFlags.budget(log)
	memoryRefusals := membudget.Metrics(registry, memory)
	api := &mhttp.Server{
		Store:          store,
		Auth:           &apikey.Authenticator{Keys: store, Usage: usage, Now: time.Now},
		Keys:           &apikey.Service{Store: store, Domains: domains, Now: time.Now},
		Domains:        domains,
		Sender:         svc.sender,
		Templates:      templates,
		Messages:       svc.messages,
		Scheduled:      svc.scheduled,
		Webhooks:       hooks.api,
		Audit:          &audit.Service{Store: store},
		Received:       &receiving.Mailbox{Store: store},
		Suppressions:   newSuppressions(store),
		Unsubscribes:   unsubscribes,
		Tracking:       trackings,
		Dashboard:      dashboard.New(),
		Limiter:        limiter,
		Memory:         memory,
		MemoryRefusals: memoryRefusals,
		Log:            log,
		Metrics:        registry,
		NoHSTS:         c.dev,
	}
	// Resend's attachments given by path are fetched as webhooks are sent.
	api.AttachmentFetcher = hooks.attachments

	reports := &inbound.Reports{Store: store, ReturnPaths: returnPaths, Unsubscribes: unsubscribes, Now: time.Now, Log: log}
	receiver := &receiving.Receiver{Store: store, Resolver: resolver, Hostname: c.hostname, Now: time.Now, Log: log}
	stopInbound, err := c.inboundFlags.startInbound(reports, receiver, tlscert.ServerConfig(cert), c.hostname, registry, log)
	if err != nil {
		abandon()
		return err
	}
	defer stopInbound()
	submissions := newSubmissions(store, api.Auth, domains, limiter, svc.sender.Queued)
	stopSubmission, err := c.submissionFlags.startSubmission(submissions, memory, memoryRefusals, tlscert.ServerConfig(cert), c.hostname, registry, log)
	if err != nil {
		abandon()
		return err
	}
	defer stopSubmission()

	ln, err := c.httpsFlags.listen(c.listen, registry)
	if err != nil {
		abandon()
		return fmt.Errorf("listen on %s: %w", c.listen, err)
	}
	srv := mhttp.NewHTTPServer(c.listen, api.Handler(), tlscert.ServerConfig(cert), log)

	stopMetrics, err := startMetrics(c.metricsListen, registry, sitesHandler(siteState), log)
	if err != nil {
		ln.Close()
		abandon()
		return err
	}

	serveErr := make(chan error, 1)
	go func() { serveErr <- srv.ServeTLS(ln, "", "") }()
	base := baseURL(ln.Addr())
	c.servedAt(unsubscribes, svc.signer, base)
	c.trackingServedAt(trackings, svc.signer, base)
	printBanner(stdout, c, base, certNote+"\nDelivery: "+deliveryNote, devKey)
	log.Info("listening", "url", base, "storage", c.describe(), "node", node.ID)

	select {
	case err = <-serveErr:
		err = fmt.Errorf("HTTPS server: %w", err)
		stopDelivery()
		<-deliveryDone
		<-webhooksDone
	case <-ctx.Done():
		err = drain(srv, deliveryDone, log)
		<-webhooksDone
	}
	stopMetrics()
	stopBackground()
	leaveCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if lerr := members.Leave(leaveCtx); lerr != nil {
		log.Warn("could not hand back this node's claims; other nodes take them within a minute", "err", lerr)
	}
	log.Info("stopped")
	return err
}

// drain is the orderly stop after SIGTERM or SIGINT (docs/api.md "Limits"): the
// listener closes and the requests in flight finish, while delivery (whose
// context has ended) claims nothing more, hands back what it had not
// started, and lets the SMTP exchanges in flight finish. Both are bounded
// by 30 s.
func drain(srv *http.Server, deliveryDone <-chan struct{}, log *slog.Logger) error {
	log.Info("shutting down: finishing requests and SMTP exchanges in flight")
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err := srv.Shutdown(shutdownCtx)
	if errors.Is(err, context.DeadlineExceeded) {
		log.Warn("requests still running after 30 s were cut off")
		err = nil
	}
	<-deliveryDone
	return err
}

// join registers this node. On SQLite, where this process holds the data
// directory alone, every claim left from before belonged to a process that
// is gone: it is released, and delivered at once.
func (c serveConfig) join(ctx context.Context, store mailroom.Store, node *mailroom.Node, onNodes func(int), log *slog.Logger) (*cluster.Membership, error) {
	if c.databaseURL == "" {
		n, err := store.ReleaseAllClaims(ctx)
		if err != nil {
			return nil, fmt.Errorf("release the claims left from before: %w", err)
		}
		if n > 0 {
			log.Info("released the claims left by the previous run; delivering them now", "recipients", n)
		}
	}
	m := &cluster.Membership{Store: store, Node: node, Log: log, OnNodes: onNodes}
	if err := m.Join(ctx); err != nil {
		return nil, fmt.Errorf("register this node: %w", err)
	}
	return m, nil
}

// certificate loads the operator's certificate or the self-signed one.
func (c serveConfig) certificate() (tls.Certificate, string, error) {
	if c.tlsCert != "" {
		cert, err := tlscert.LoadFiles(c.tlsCert, c.tlsKey)
		return cert, "TLS certificate: " + c.tlsCert, err
	}
	cert, created, err := tlscert.SelfSigned(c.dataDir, c.hostname, time.Now())
	if err != nil {
		return cert, "", fmt.Errorf("self-signed certificate: %w", err)
	}
	verb := "Using"
	if created {
		verb = "Made"
	}
	return cert, fmt.Sprintf("%s a self-signed TLS certificate: %s\n  SHA-256 fingerprint %s",
		verb, tlscert.CertPath(c.dataDir), tlscert.Fingerprint(cert)), nil
}

// baseURL is the address clients use: a wildcard listener is reached as
// localhost, which the self-signed certificate names.
func baseURL(addr net.Addr) string {
	host, port, _ := net.SplitHostPort(addr.String())
	if ip := net.ParseIP(host); ip == nil || ip.IsUnspecified() {
		host = "localhost"
	}
	return "https://" + net.JoinHostPort(host, port)
}

// printBanner tells the operator what runs where. Its last line, "Mailroom
// is serving URL", comes once everything above it is in place.
func printBanner(w io.Writer, c serveConfig, base, certNote, devKey string) {
	fmt.Fprintf(w, "%s\nStorage: %s\n%s\n", versionString(), c.describe(), certNote)
	if devKey != "" {
		cacert := ""
		if c.tlsCert == "" {
			cacert = "--cacert " + tlscert.CertPath(c.dataDir) + " "
		}
		fmt.Fprintf(w, "Development mode: account %q with the verified sandbox domain %s; its API key, with every scope:\n  %s\n",
			devAccountName, devSandboxDomain, devKey)
		fmt.Fprintf(w, "Try it:\n  curl %s-H 'Authorization: Bearer %s' %s/v1/api-keys\n", cacert, devKey, base)
		fmt.Fprintf(w, "Or open the dashboard at %s/ and paste the key.\n", base)
	} else {
		fmt.Fprintf(w, "Dashboard: %s/ (sign in with an API key)\n", base)
	}
	fmt.Fprintf(w, "Mailroom is serving %s\n", base)
}

func newLogger(format string, dev bool, w io.Writer) (*slog.Logger, error) {
	if format == "" {
		format = "json"
		if dev {
			format = "text"
		}
	}
	switch format {
	case "json":
		return slog.New(slog.NewJSONHandler(w, nil)), nil
	case "text":
		return slog.New(slog.NewTextHandler(w, nil)), nil
	}
	return nil, usageError{fmt.Sprintf("--log-format must be text or json, not %q", format)}
}

func defaultHostname() string {
	h, err := os.Hostname()
	if err != nil || h == "" {
		return "localhost"
	}
	return h
}
