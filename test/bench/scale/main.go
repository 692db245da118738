package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
	"github.com/rukpak-kapp/rukpak-kapp/test/harness"
)

// benchAgent is the benchmark's own user agent, kept apart in the counts.
const benchAgent = "rukpak-kapp-bench"

func main() {
	n := flag.Int("n", 100, "bundles per system")
	idle := flag.Duration("idle", 10*time.Minute, "idle window measured after the install")
	systems := flag.String("systems", "rukpak-kapp,floor,rukpak", "systems to run, in order")
	check := flag.Bool("check", false, "exit non-zero unless every system installed everything (the smoke run in make test)")
	alone := flag.Bool("alone", false, "give each system a fresh control plane of its own, one after the other "+
		"(for an N whose idle costs together would fill the machine)")
	concurrency := flag.Int("concurrency", 10, "every kapp-controller's -concurrency (App workers); 10 is kapp-controller's default")
	shards := flag.Int("shards", 1, "spread rukpak-kapp's Apps (and the floor's) over this many namespaces, each with a kapp-controller of its own (config/sharding)")
	repairs := flag.Int("drift", 20, "installed objects to delete or edit, one after the other, timing each repair (rukpak-kapp and rukpak)")
	timeline := flag.Bool("timeline", false, "print every API request made during each single apply at rest, from the audit log: where its time goes")
	catalogN := flag.Int("catalog", 0, "measure publishing a catalog of this many bundles (made from the corpus) with an OperatorCatalog instead, then an idle window; run from the repository's root")
	catalogPackages := flag.Int("catalog-packages", 0, "with -catalog, spread the bundles over this many packages (0: three versions each)")
	catalogBase := flag.Int("catalog-base", 0, "with -catalog, build the catalog image on a base layer of this many MiB (opm's base image is tens of MiB)")
	standalone := flag.Bool("standalone", false, "measure N Bundles on their own (rukpak v0.16's Bundle API) instead: the adapter's unpack, an idle window and a restart, without kapp-controller")
	bundleMiB := flag.Int("bundle-mib", 0, "with -standalone, give each Bundle's image files of this many MiB of random bytes in all beside its manifests")
	registryRate := flag.Float64("registry-rate", 0, "with -standalone, the MiB a second each blob download from the registry gets (0: as fast as loopback goes)")
	failing := flag.Bool("failing", false, "measure N failing objects of every kind and source instead: the requests each server receives per object per minute and the adapter's connections to it, over -idle")
	kinds := flag.String("kinds", "", "with -failing, only these kinds (comma-separated: bundle, v1alpha1, v1alpha2, catalog)")
	flag.Parse()
	// The harness's clients log through controller-runtime; the benchmark
	// prints its own lines and keeps theirs out of the report.
	ctrllog.SetLogger(logr.Discard())
	setup := benchSetup{n: *n, idle: *idle, concurrency: *concurrency, shards: *shards, repairs: *repairs, timeline: *timeline}
	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt)
	defer cancel()
	if *catalogN > 0 {
		os.Exit(catalogMain(ctx, catalogShape{n: *catalogN, packages: *catalogPackages, baseMiB: *catalogBase}, *idle))
	}
	if *failing {
		os.Exit(failingMain(ctx, *n, *idle, *kinds))
	}
	if *standalone {
		os.Exit(standaloneMain(ctx, standaloneShape{n: *n, bundleMiB: *bundleMiB, rateMiB: *registryRate}, *idle, *check))
	}
	started := time.Now()
	var results []*result
	var err error
	if *alone {
		results, err = runAlone(ctx, setup, strings.Split(*systems, ","))
	} else {
		results, err = run(ctx, setup, strings.Split(*systems, ","), true)
	}
	fmt.Fprintf(os.Stderr, "benchmark ended after %s\n", time.Since(started).Round(time.Second))
	for _, r := range results {
		fmt.Println(r.summaryLine())
	}
	if len(results) > 0 {
		fmt.Print(tables(results))
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchmark:", err)
		os.Exit(1)
	}
	if *check {
		for _, r := range results {
			if r.Missing > 0 || r.Change == 0 {
				fmt.Fprintf(os.Stderr, "benchmark: %s left %d of %d not installed\n", r.System, r.Missing, r.N)
				os.Exit(1)
			}
			if r.Drift != nil && r.Drift.Missing > 0 {
				fmt.Fprintf(os.Stderr, "benchmark: %s did not repair %d of %d drifted objects\n", r.System, r.Drift.Missing, r.Drift.count())
				os.Exit(1)
			}
		}
	}
}

// benchSetup is what one run measures with.
type benchSetup struct {
	n           int
	idle        time.Duration
	concurrency int
	shards      int
	repairs     int
	timeline    bool
}

func (s benchSetup) String() string {
	return fmt.Sprintf("N=%d, kapp-controller -concurrency=%d, %d kapp-controller(s) for rukpak-kapp and the floor", s.n, s.concurrency, max(s.shards, 1))
}

// runAlone runs each system on a control plane of its own. What a system
// leaves behind is not cleaned up but thrown away with its control plane:
// deleting 1,000 installs takes longer than measuring them, and objects
// left in the cluster would slow the systems after it (kapp lists every
// resource type cluster-wide by label).
func runAlone(ctx context.Context, setup benchSetup, names []string) ([]*result, error) {
	var results []*result
	for _, name := range names {
		r, err := run(ctx, setup, []string{name}, false)
		results = append(results, r...)
		if err != nil {
			return results, fmt.Errorf("%s on a control plane of its own: %w", name, err)
		}
	}
	return results, nil
}

// run installs N bundles with each of names on one control plane, then
// measures one idle window shared by all and one change each, then (with
// cleanup) deletes what each made.
func run(ctx context.Context, setup benchSetup, names []string, cleanup bool) ([]*result, error) {
	n := setup.n
	env, err := harness.Start(ctx, harness.Options{
		ControllerManager: true, FakeNodes: true, KappController: true, Adapter: true, Servers: true, AuditLog: true,
		// CPU and memory as a cluster's processes spend them.
		DefaultGC:                 true,
		KappControllerConcurrency: setup.concurrency,
		// The adapter's kapp-controller reconciles only the adapter's Apps,
		// not the floor's, which have a kapp-controller of their own.
		KappControllerNamespace: harness.SystemNamespace,
		// rukpak claims the built-in class, so the adapter takes an alias, as
		// on a cluster where both run while bundles move over; and it keeps
		// the product's template deadline, not the tests' short one.
		AdapterArgs: []string{"--classes", harness.AliasPlainClass + "=" + rukpakv1alpha2.ClassPlain, "--template-timeout", "2m"},
	})
	if err != nil {
		return nil, fmt.Errorf("start local control plane: %w", err)
	}
	defer env.Stop()
	if err := env.PointFinalizerPolicyAt(ctx, harness.AliasPlainClass); err != nil {
		return nil, err
	}
	cfg := rest.CopyConfig(env.ControlPlane.Config)
	cfg.UserAgent = benchAgent
	// The default client-side limit would make the benchmark the bottleneck.
	cfg.QPS, cfg.Burst = 500, 1000
	c, err := client.NewWithWatch(cfg, client.Options{Scheme: env.Scheme})
	if err != nil {
		return nil, err
	}
	// One Deployment per bundle and system, all installed at once: room for
	// N pods per system (a fake node takes 110) alongside the harness's node.
	for i := range len(names)*n/100 + 1 {
		if err := env.AddFakeNode(ctx, fmt.Sprintf("bench-node-%d", i)); err != nil {
			return nil, err
		}
	}
	refs, single, v2, err := pushBundles(env.Registry, filepath.Join(env.Dir, "bundles"), n)
	if err != nil {
		return nil, err
	}
	all := map[string]system{"rukpak-kapp": &rukpakKapp{env: env, shards: setup.shards}, "floor": &floor{env: env, shards: setup.shards}, "rukpak": &rukpak{env: env}}
	b := &bench{c: c, audit: env.ControlPlane.AuditLog, refs: refs, single: single, v2: v2, idle: setup.idle, installT: time.Duration(n)*2*time.Second + 5*time.Minute,
		controlPlane: procSet{"control plane": env.ControlPlane.Pids()}, repairs: min(setup.repairs, n-1), setup: setup}
	var runs []*running
	results := func() []*result {
		var out []*result
		for _, r := range runs {
			out = append(out, r.res)
		}
		return out
	}
	// The installs run one after the other, so each has the machine to
	// itself apart from the idle systems before it.
	for _, name := range names {
		s, ok := all[name]
		if !ok {
			return results(), fmt.Errorf("unknown system %q", name)
		}
		defer s.Stop()
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespaceOf(s)}}
		if err := c.Create(ctx, ns); client.IgnoreAlreadyExists(err) != nil {
			return results(), err
		}
		fmt.Fprintf(os.Stderr, "%s: %s: installing %d bundles\n", time.Now().Format(time.TimeOnly), name, n)
		r, err := b.install(ctx, s, runs)
		if err != nil {
			return results(), fmt.Errorf("%s: %w", name, err)
		}
		runs = append(runs, r)
		// Printed now, so a long run stopped later still leaves its installs.
		fmt.Fprintln(os.Stderr, r.res.installLine())
	}
	if err := b.rest(ctx, runs); err != nil {
		return results(), err
	}
	if !cleanup {
		return results(), nil
	}
	// Cleanup of a large N takes long; the numbers are complete already.
	fmt.Fprint(os.Stderr, tables(results()))
	// The systems delete side by side too: each waits only for its own.
	errs := make(chan error, len(runs))
	for _, r := range runs {
		go func() { errs <- b.cleanup(ctx, r.s) }()
	}
	var cleanupErr error
	for range runs {
		cleanupErr = errors.Join(cleanupErr, <-errs)
	}
	return results(), cleanupErr
}

func standaloneMain(ctx context.Context, shape standaloneShape, idle time.Duration, check bool) int {
	started := time.Now()
	r, err := runStandalone(ctx, shape, idle)
	fmt.Fprintf(os.Stderr, "benchmark ended after %s\n", time.Since(started).Round(time.Second))
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchmark:", err)
		return 1
	}
	fmt.Print(r.report())
	if check {
		if err := r.check(); err != nil {
			fmt.Fprintln(os.Stderr, "benchmark:", err)
			return 1
		}
	}
	return 0
}
