package main

import (
	"context"
	"crypto/rand"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rukpakv1alpha1 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha1"
	"github.com/rukpak-kapp/rukpak-kapp/test/harness"
)

// standaloneShape is the Bundles measured: n of them, each image with
// files of bundleMiB random MiB in all (0: none), served at rateMiB a second per
// blob download (0: unthrottled).
type standaloneShape struct {
	n         int
	bundleMiB int
	rateMiB   float64
}

// standaloneResult is what N Bundles on their own cost the adapter.
type standaloneResult struct {
	N         int
	BundleMiB int
	RateMiB   float64
	// BlobsPeak is the most blob downloads the registry served at once.
	BlobsPeak int
	// All is from the first create until every Bundle said Unpacked;
	// Latencies are each Bundle's, from its create until it was seen
	// Unpacked (the list is polled every 100 ms).
	All       time.Duration
	Latencies []time.Duration
	Missing   int
	// Unpack, Idle and Restart are the adapter's requests in each window.
	Unpack, Idle, Restart apiCount
	IdleFor               time.Duration
	// Refetched is how long a restarted adapter took to hold every
	// Bundle's content again.
	Refetched time.Duration
	// PeakRSS is the adapter's high-water RSS over the unpack and the idle
	// window; RestartPeakRSS the restarted process's over its refetch.
	PeakRSS, RestartPeakRSS float64
	// ContentBytes is what the content directory held.
	ContentBytes int64
	CPU          float64
}

// runStandalone makes N Bundles on their own (rukpak v0.16's Bundle API,
// each of its own image) on a control plane with the adapter and
// kapp-controller's API but no kapp-controller, which unpacking does not
// need, and measures the unpack, an idle window and a restart.
func runStandalone(ctx context.Context, shape standaloneShape, idle time.Duration) (*standaloneResult, error) {
	n := shape.n
	opts := harness.Options{KappControllerAPI: true, Adapter: true, Servers: true, AuditLog: true, DefaultGC: true}
	if shape.bundleMiB > 0 {
		// Every Bundle's content is kept: room for all of them, and a
		// tenth more for the tarballs' own bytes.
		opts.AdapterArgs = []string{fmt.Sprintf("--content-max-bytes=%dMi", shape.n*shape.bundleMiB*11/10+64)}
	}
	env, err := harness.Start(ctx, opts)
	if err != nil {
		return nil, fmt.Errorf("start local control plane: %w", err)
	}
	defer env.Stop()
	cfg := rest.CopyConfig(env.ControlPlane.Config)
	cfg.UserAgent = benchAgent
	cfg.QPS, cfg.Burst = 500, 1000
	c, err := client.New(cfg, client.Options{Scheme: env.Scheme})
	if err != nil {
		return nil, err
	}
	var refs []string
	if shape.bundleMiB > 0 {
		refs, err = pushLargeBundles(env.Registry, filepath.Join(env.Dir, "bundles"), n, shape.bundleMiB)
	} else {
		refs, _, _, err = pushBundles(env.Registry, filepath.Join(env.Dir, "bundles"), n)
	}
	if err != nil {
		return nil, err
	}
	env.Registry.Throttle(int64(shape.rateMiB * (1 << 20)))
	res := &standaloneResult{N: n, BundleMiB: shape.bundleMiB, RateMiB: shape.rateMiB, IdleFor: idle}
	pid := env.Adapter.Pid()
	cpu0, err := cpuSeconds(pid)
	if err != nil {
		return nil, err
	}

	fmt.Fprintf(os.Stderr, "%s: making %d Bundles\n", time.Now().Format(time.TimeOnly), n)
	created := map[string]time.Time{}
	start := time.Now()
	for i, ref := range refs {
		name := fmt.Sprintf("bench-bundle-%04d", i)
		b := &rukpakv1alpha1.Bundle{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: rukpakv1alpha1.BundleSpec{
			ProvisionerClassName: rukpakv1alpha1.ClassPlain, Source: rukpakv1alpha1.BundleSource{Type: rukpakv1alpha1.SourceTypeImage, Image: &rukpakv1alpha1.ImageSource{Ref: ref}}}}
		created[name] = time.Now()
		if err := c.Create(ctx, b); err != nil {
			return nil, fmt.Errorf("create %s: %w", name, err)
		}
	}
	seen := map[string]time.Time{}
	deadline := time.Now().Add(time.Duration(n)*time.Second + 2*time.Minute)
	for len(seen) < n && time.Now().Before(deadline) {
		list := &rukpakv1alpha1.BundleList{}
		if err := c.List(ctx, list); err != nil {
			return nil, err
		}
		now := time.Now()
		for _, b := range list.Items {
			if _, ok := seen[b.Name]; !ok && b.Status.Phase == rukpakv1alpha1.PhaseUnpacked {
				seen[b.Name] = now
			}
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
	res.Missing = n - len(seen)
	res.BlobsPeak = env.Registry.BlobsPeak()
	if res.Missing > 0 {
		// Say why, of the first few: a bench that counts nothing is no
		// measurement.
		list := &rukpakv1alpha1.BundleList{}
		if err := c.List(ctx, list); err == nil {
			shown := 0
			for _, b := range list.Items {
				if _, ok := seen[b.Name]; ok || shown == 3 {
					continue
				}
				shown++
				fmt.Fprintf(os.Stderr, "%s is %q: %+v\n", b.Name, b.Status.Phase, b.Status.Conditions)
			}
		}
	}
	for name, at := range seen {
		res.Latencies = append(res.Latencies, at.Sub(created[name]))
		res.All = max(res.All, at.Sub(start))
	}
	slices.Sort(res.Latencies)
	fmt.Fprintf(os.Stderr, "%s: %d of %d Unpacked in %s\n", time.Now().Format(time.TimeOnly), len(seen), n, res.All.Round(10*time.Millisecond))

	// The unpack ends with its last write in the audit log: every status
	// is (the poll saw it), but the Events go out asynchronously. The idle
	// window starts once one per unpacked Bundle is logged.
	var counts map[string]apiCount
	for {
		if counts, err = countRequests(env.ControlPlane.AuditLog, start, time.Now()); err != nil {
			return nil, err
		}
		if counts["adapter"].EventWrites >= len(seen) {
			break
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("the adapter recorded %d Events for %d unpacked Bundles", counts["adapter"].EventWrites, len(seen))
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
	idleFrom := time.Now()
	res.Unpack = counts["adapter"]
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-time.After(idle):
	}
	idleTo := time.Now()
	if res.PeakRSS, err = peakRSSMiB(pid); err != nil {
		return nil, err
	}
	cpu1, err := cpuSeconds(pid)
	if err != nil {
		return nil, err
	}
	res.CPU = cpu1 - cpu0
	if res.ContentBytes, err = dirBytes(filepath.Join(env.Dir, "adapter-content")); err != nil {
		return nil, err
	}

	fmt.Fprintf(os.Stderr, "%s: restarting the adapter\n", time.Now().Format(time.TimeOnly))
	restartFrom := time.Now()
	if err := env.Adapter.Restart(ctx); err != nil {
		return nil, err
	}
	for {
		files, err := contentFiles(filepath.Join(env.Dir, "adapter-content"))
		if err != nil {
			return nil, err
		}
		if files >= len(seen) {
			break
		}
		if time.Since(restartFrom) > time.Duration(n)*time.Second+2*time.Minute {
			return nil, fmt.Errorf("after a restart the adapter holds the content of %d of %d Bundles", files, len(seen))
		}
		time.Sleep(100 * time.Millisecond)
	}
	res.Refetched = time.Since(restartFrom)
	// A status write would follow each tarball within milliseconds: the
	// restart's window runs two seconds past the last one, for -check to see
	// none (a window over which nothing must happen, not a wait for
	// something to).
	time.Sleep(2 * time.Second)
	if res.RestartPeakRSS, err = peakRSSMiB(env.Adapter.Pid()); err != nil {
		return nil, err
	}
	if counts, err = countRequests(env.ControlPlane.AuditLog, idleFrom, idleTo); err != nil {
		return nil, err
	}
	res.Idle = counts["adapter"]
	if counts, err = countRequests(env.ControlPlane.AuditLog, restartFrom, time.Now()); err != nil {
		return nil, err
	}
	res.Restart = counts["adapter"]
	return res, nil
}

// contentFiles counts the tarballs in the adapter's content directory.
func contentFiles(dir string) (int, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".tgz") {
			n++
		}
	}
	return n, nil
}

func dirBytes(dir string) (int64, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return 0, err
	}
	var total int64
	for _, e := range entries {
		info, err := e.Info()
		if err != nil {
			return 0, err
		}
		total += info.Size()
	}
	return total, nil
}

// statusWrites are the adapter's writes of Bundles' status in c.
func statusWrites(c apiCount) int { return c.ByKind["patch bundles/status"] }

func (r *standaloneResult) report() string {
	var b strings.Builder
	q := func(p float64) time.Duration {
		if len(r.Latencies) == 0 {
			return 0
		}
		return r.Latencies[min(len(r.Latencies)-1, int(p*float64(len(r.Latencies))))]
	}
	fmt.Fprintf(&b, "\n| N Bundles on their own | all Unpacked | p50 | p95 | max | adapter writes (unpack) | of them status | Events | adapter CPU s | adapter peak RSS MiB | content on disk |\n|---|---|---|---|---|---|---|---|---|---|---|\n")
	fmt.Fprintf(&b, "| %d | %s | %s | %s | %s | %d (%.2f per Bundle) | %d | %d | %.1f | %.0f | %.0f KiB |\n",
		r.N, secs(r.All), secs(q(0.5)), secs(q(0.95)), secs(q(1)), r.Unpack.Writes, float64(r.Unpack.Writes)/float64(max(r.N, 1)),
		statusWrites(r.Unpack), r.Unpack.EventWrites, r.CPU, r.PeakRSS, float64(r.ContentBytes)/(1<<10))
	fmt.Fprintf(&b, "\nAt rest for %s: the adapter made %d requests and %d writes. A restart: every Bundle's content held again in %s, "+
		"with %d requests and %d writes (%d of Bundles' status); the restarted adapter's peak RSS %.0f MiB.\n",
		r.IdleFor, r.Idle.Requests, r.Idle.Writes, secs(r.Refetched), r.Restart.Requests, r.Restart.Writes, statusWrites(r.Restart), r.RestartPeakRSS)
	if r.BundleMiB > 0 {
		rate := "as fast as loopback goes"
		if r.RateMiB > 0 {
			rate = fmt.Sprintf("at %.1f MiB/s each", r.RateMiB)
		}
		fmt.Fprintf(&b, "\nEach Bundle's image held %d MiB of random bytes beside its manifests, served %s: the registry served at most %d blob downloads at once.\n",
			r.BundleMiB, rate, r.BlobsPeak)
	}
	if len(r.Unpack.ByKind) > 0 {
		fmt.Fprintf(&b, "\nThe unpack's writes: %s.\n", r.Unpack.byKind())
	}
	return b.String()
}

// check fails a smoke run that did not unpack everything, or whose rest
// or restart wrote a Bundle's status.
func (r *standaloneResult) check() error {
	switch {
	case r.Missing > 0:
		return fmt.Errorf("%d of %d Bundles were not unpacked", r.Missing, r.N)
	case r.Idle.Writes > 0:
		return fmt.Errorf("the adapter wrote %d times at rest: %v", r.Idle.Writes, r.Idle.Written)
	case statusWrites(r.Restart) > 0:
		return fmt.Errorf("a restart wrote %d Bundle statuses: %v", statusWrites(r.Restart), r.Restart.Written)
	}
	return nil
}

// pushLargeBundles pushes n bundles, each its manifests and files of mib
// MiB of random bytes in all (distinct per bundle, so no download is shared),
// two at a time, and returns their references.
func pushLargeBundles(reg *harness.Registry, dir string, n, mib int) ([]string, error) {
	refs := make([]string, n)
	errs := make(chan error, n)
	slots := make(chan struct{}, 2)
	for i := range n {
		go func() {
			slots <- struct{}{}
			defer func() { <-slots }()
			d := filepath.Join(dir, fmt.Sprintf("large%04d", i))
			if err := os.MkdirAll(filepath.Join(d, "manifests"), 0o755); err != nil {
				errs <- err
				return
			}
			if err := os.WriteFile(filepath.Join(d, "manifests", "objects.yaml"), []byte(bundleYAML(i, 1)), 0o644); err != nil {
				errs <- err
				return
			}
			// In files of 4 MiB: a bundle's file may be at most 8 MiB.
			for j := 0; j*4 < mib; j++ {
				noise := make([]byte, min(4, mib-j*4)<<20)
				if _, err := rand.Read(noise); err != nil {
					errs <- err
					return
				}
				if err := os.WriteFile(filepath.Join(d, fmt.Sprintf("blob%02d.bin", j)), noise, 0o644); err != nil {
					errs <- err
					return
				}
			}
			ref, _, err := reg.PushDir(d, fmt.Sprintf("bench/large-%04d:v1", i))
			refs[i] = ref
			errs <- err
		}()
	}
	for range n {
		if err := <-errs; err != nil {
			return nil, err
		}
	}
	return refs, nil
}
