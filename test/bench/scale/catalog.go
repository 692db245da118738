package main

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/operator-framework/operator-registry/alpha/declcfg"
	"github.com/operator-framework/operator-registry/alpha/property"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	datav1alpha1 "carvel.dev/kapp-controller/pkg/apiserver/apis/datapackaging/v1alpha1"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/fetch"
	catalogsv1alpha1 "github.com/rukpak-kapp/rukpak-kapp/api/catalogs/v1alpha1"
	"github.com/rukpak-kapp/rukpak-kapp/test/catalogtest"
	"github.com/rukpak-kapp/rukpak-kapp/test/harness"
)

// catalogResult is what publishing a catalog of N bundles with an
// OperatorCatalog costs, on kapp-controller's real packaging API.
type catalogResult struct {
	N, PackagesN, BaseMiB      int
	CatalogBytes               int
	Published                  time.Duration
	Packages, Metadatas        int
	StoredBytes, LargestObject int
	Publish, Idle              apiCount
	KappControllerIdle         apiCount
	IdleFor                    time.Duration
	RestRSS, PeakRSS, IdleRSS  float64
	// Moved is the tag moved to a catalog with one package changed: the
	// time to Published for it and the adapter's requests.
	MovedIn time.Duration
	Moved   apiCount
}

// catalogShape is the catalog a run publishes: n bundles in packages
// packages (0: three versions each), on a base layer of baseMiB.
type catalogShape struct{ n, packages, baseMiB int }

// catalogMain publishes a catalog of n bundles made from the corpus (each
// corpus bundle in three versions, or spread over packages) through an
// OperatorCatalog, on a base layer, keeps still for idle, polling the tag
// every 10 s, then moves the tag to the catalog with one package changed.
func catalogMain(ctx context.Context, shape catalogShape, idle time.Duration) int {
	res, err := runCatalog(ctx, shape, idle)
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchmark:", err)
		return 1
	}
	fmt.Print(res.report())
	return 0
}

func runCatalog(ctx context.Context, shape catalogShape, idle time.Duration) (*catalogResult, error) {
	n := shape.n
	corpus, err := catalogtest.Corpus(filepath.Join("test", "testdata", "registry-v1-corpus"))
	if err != nil {
		return nil, fmt.Errorf("read the corpus (run from the repository's root): %w", err)
	}
	env, err := harness.Start(ctx, harness.Options{KappController: true, PackagingAPI: true, Adapter: true, Servers: true, AuditLog: true, DefaultGC: true})
	if err != nil {
		return nil, fmt.Errorf("start local control plane: %w", err)
	}
	defer env.Stop()
	cfg := rest.CopyConfig(env.ControlPlane.Config)
	cfg.UserAgent = benchAgent
	c, err := client.New(cfg, client.Options{Scheme: env.Scheme})
	if err != nil {
		return nil, err
	}
	res := &catalogResult{N: n, BaseMiB: shape.baseMiB, IdleFor: idle}
	per := 3
	if shape.packages > 0 {
		per = max(n/shape.packages, 1)
	}
	fbc := catalogtest.Catalog(catalogtest.VersionsPer(corpus, n, per), "registry.example/corpus/")
	res.PackagesN = len(fbc.Packages)

	// The catalog image, as opm builds it: the FBC under /configs (one
	// directory per package), on opm's base image (its binaries: here as
	// many bytes of noise, which compress no better).
	base := filepath.Join(env.Dir, "catalog-base")
	if err := os.MkdirAll(filepath.Join(base, "bin"), 0o755); err != nil {
		return nil, err
	}
	noise := make([]byte, shape.baseMiB<<20)
	if _, err := rand.Read(noise); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(base, "bin", "opm"), noise, 0o755); err != nil {
		return nil, err
	}
	push := func(cfg *declcfg.DeclarativeConfig, name string) (string, int, error) {
		top := filepath.Join(env.Dir, name)
		if err := declcfg.WriteFS(*cfg, filepath.Join(top, "configs"), declcfg.WriteJSON, ".json"); err != nil {
			return "", 0, err
		}
		size := 0
		_ = filepath.WalkDir(top, func(_ string, d fs.DirEntry, _ error) error {
			if info, err := d.Info(); err == nil && !d.IsDir() {
				size += int(info.Size())
			}
			return nil
		})
		image, _, err := env.Registry.PushLayers("bench/catalog:latest", map[string]string{fetch.CatalogConfigsLabel: "/configs"}, base, top)
		return image, size, err
	}
	image, size, err := push(fbc, "catalog-image")
	if err != nil {
		return nil, err
	}
	res.CatalogBytes = size
	// The adapter at rest, before the catalog.
	time.Sleep(5 * time.Second)
	if res.RestRSS, err = rssMiB(env.Adapter.Pid()); err != nil {
		return nil, err
	}

	const ns = "bench-catalog"
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		return nil, err
	}
	cat := &catalogsv1alpha1.OperatorCatalog{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "bench"},
		Spec: catalogsv1alpha1.OperatorCatalogSpec{Image: image, PollInterval: &metav1.Duration{Duration: 10 * time.Second}}}
	fmt.Fprintf(os.Stderr, "%s: publishing a catalog of %d bundles in %d packages (%d bytes) on a base layer of %d MiB\n", time.Now().Format(time.TimeOnly), n, res.PackagesN, res.CatalogBytes, shape.baseMiB)
	start := time.Now()
	if err := c.Create(ctx, cat); err != nil {
		return nil, err
	}
	if err := waitPublished(ctx, c, cat, ""); err != nil {
		return nil, err
	}
	res.Published = time.Since(start)
	publishTo := time.Now()
	fmt.Fprintf(os.Stderr, "%s: published in %s\n", time.Now().Format(time.TimeOnly), res.Published.Round(10*time.Millisecond))

	// What kapp-controller stores, as the packaging API serves it.
	var pkgs datav1alpha1.PackageList
	if err := c.List(ctx, &pkgs, client.InNamespace(ns)); err != nil {
		return nil, err
	}
	var metas datav1alpha1.PackageMetadataList
	if err := c.List(ctx, &metas, client.InNamespace(ns)); err != nil {
		return nil, err
	}
	res.Packages, res.Metadatas = len(pkgs.Items), len(metas.Items)
	var objs []any
	for i := range pkgs.Items {
		objs = append(objs, &pkgs.Items[i])
	}
	for i := range metas.Items {
		objs = append(objs, &metas.Items[i])
	}
	for _, o := range objs {
		data, err := json.Marshal(o)
		if err != nil {
			return nil, err
		}
		res.StoredBytes += len(data)
		res.LargestObject = max(res.LargestObject, len(data))
	}

	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-time.After(idle):
	}
	idleTo := time.Now()
	if res.IdleRSS, err = rssMiB(env.Adapter.Pid()); err != nil {
		return nil, err
	}
	if res.PeakRSS, err = peakRSSMiB(env.Adapter.Pid()); err != nil {
		return nil, err
	}
	counts, err := countRequests(env.ControlPlane.AuditLog, start, publishTo)
	if err != nil {
		return nil, err
	}
	res.Publish = counts["adapter"]
	if counts, err = countRequests(env.ControlPlane.AuditLog, publishTo, idleTo); err != nil {
		return nil, err
	}
	res.Idle, res.KappControllerIdle = counts["adapter"], counts["kapp-controller"]

	// The tag moves to the catalog with one package changed (a version
	// added to its channel): only that package's objects are written.
	movedFrom := time.Now()
	if _, _, err := push(withNewVersion(fbc), "catalog-image-moved"); err != nil {
		return nil, err
	}
	if err := waitPublished(ctx, c, cat, cat.Status.ResolvedImage); err != nil {
		return nil, err
	}
	res.MovedIn = time.Since(movedFrom)
	movedTo := time.Now()
	if res.PeakRSS, err = peakRSSMiB(env.Adapter.Pid()); err != nil {
		return nil, err
	}
	if counts, err = countRequests(env.ControlPlane.AuditLog, movedFrom, movedTo); err != nil {
		return nil, err
	}
	res.Moved = counts["adapter"]
	return res, nil
}

// waitPublished waits until cat is Published at a digest other than
// before.
func waitPublished(ctx context.Context, c client.Client, cat *catalogsv1alpha1.OperatorCatalog, before string) error {
	start := time.Now()
	for {
		if err := c.Get(ctx, client.ObjectKeyFromObject(cat), cat); err != nil {
			return err
		}
		if cond := meta.FindStatusCondition(cat.Status.Conditions, catalogsv1alpha1.TypePublished); cond != nil && cat.Status.ResolvedImage != before {
			if cond.Status != metav1.ConditionTrue {
				return fmt.Errorf("not published: %s", cond.Message)
			}
			return nil
		}
		if time.Since(start) > 20*time.Minute {
			return fmt.Errorf("not published after 20 minutes")
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// withNewVersion is cfg with a version added to its first package: its
// last bundle again as 99.0.0, replacing it.
func withNewVersion(cfg *declcfg.DeclarativeConfig) *declcfg.DeclarativeConfig {
	next := *cfg
	pkg := cfg.Packages[0].Name
	next.Bundles = slices.Clone(cfg.Bundles)
	next.Channels = slices.Clone(cfg.Channels)
	var last declcfg.Bundle
	for _, b := range cfg.Bundles {
		if b.Package == pkg {
			last = b
		}
	}
	b := last
	b.Name = pkg + ".v99"
	b.Properties = append([]property.Property{property.MustBuildPackage(pkg, "99.0.0")}, slices.DeleteFunc(slices.Clone(last.Properties), func(p property.Property) bool {
		return p.Type == property.TypePackage
	})...)
	next.Bundles = append(next.Bundles, b)
	for i, ch := range next.Channels {
		if ch.Package == pkg {
			ch.Entries = append(slices.Clone(ch.Entries), declcfg.ChannelEntry{Name: b.Name, Replaces: last.Name})
			next.Channels[i] = ch
		}
	}
	return &next
}

func (r *catalogResult) report() string {
	return fmt.Sprintf(`catalog of %d bundles in %d packages (%d bytes of FBC) on a base layer of %d MiB, published with an OperatorCatalog
published in:          %s
stored:                %d Packages, %d PackageMetadatas; %d bytes as JSON, the largest object %d bytes
adapter, publishing:   %d requests, %d writes (%s)
adapter, idle %s:     %d requests, %d writes (a tag lookup every 10 s goes to the registry, not the API server)
kapp-controller, idle: %d requests, %d writes
adapter RSS:           %.0f MiB at rest before, %.0f MiB at rest after, %.0f MiB peak (+%.0f MiB)
tag moved, one package changed: published in %s; adapter %d requests, %d writes (%s)
`, r.N, r.PackagesN, r.CatalogBytes, r.BaseMiB, r.Published.Round(10*time.Millisecond), r.Packages, r.Metadatas, r.StoredBytes, r.LargestObject,
		r.Publish.Requests, r.Publish.Writes, r.Publish.byKind(), r.IdleFor, r.Idle.Requests, r.Idle.Writes,
		r.KappControllerIdle.Requests, r.KappControllerIdle.Writes, r.RestRSS, r.IdleRSS, r.PeakRSS, r.PeakRSS-r.RestRSS,
		r.MovedIn.Round(10*time.Millisecond), r.Moved.Requests, r.Moved.Writes, r.Moved.byKind())
}
