package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/operator-framework/operator-registry/alpha/declcfg"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	datav1alpha1 "carvel.dev/kapp-controller/pkg/apiserver/apis/datapackaging/v1alpha1"

	catalogsv1alpha1 "github.com/rukpak-kapp/rukpak-kapp/api/catalogs/v1alpha1"
	"github.com/rukpak-kapp/rukpak-kapp/test/catalogtest"
	"github.com/rukpak-kapp/rukpak-kapp/test/harness"
)

// catalogResult is what publishing a catalog of N bundles with an
// OperatorCatalog costs, on kapp-controller's real packaging API.
type catalogResult struct {
	N                          int
	CatalogBytes               int
	Published                  time.Duration
	Packages, Metadatas        int
	StoredBytes, LargestObject int
	Publish, Idle              apiCount
	KappControllerIdle         apiCount
	IdleFor                    time.Duration
	PeakRSS                    float64
}

// catalogMain publishes a catalog of n bundles made from the corpus (each
// corpus bundle in three versions) through an OperatorCatalog, then keeps
// still for idle, polling the tag every 10 s.
func catalogMain(ctx context.Context, n int, idle time.Duration) int {
	res, err := runCatalog(ctx, n, idle)
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchmark:", err)
		return 1
	}
	fmt.Print(res.report())
	return 0
}

func runCatalog(ctx context.Context, n int, idle time.Duration) (*catalogResult, error) {
	corpus, err := catalogtest.Corpus(filepath.Join("test", "testdata", "registry-v1-corpus"))
	if err != nil {
		return nil, fmt.Errorf("read the corpus (run from the repository's root): %w", err)
	}
	env, err := harness.Start(ctx, harness.Options{KappController: true, PackagingAPI: true, Adapter: true, Servers: true, AuditLog: true})
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
	res := &catalogResult{N: n, IdleFor: idle}

	// The catalog image, as opm lays it out: the FBC under /configs.
	build := filepath.Join(env.Dir, "catalog-image")
	if err := os.MkdirAll(filepath.Join(build, "catalog"), 0o755); err != nil {
		return nil, err
	}
	f, err := os.Create(filepath.Join(build, "catalog", "catalog.json"))
	if err != nil {
		return nil, err
	}
	if err := declcfg.WriteJSON(*catalogtest.Catalog(catalogtest.Versions(corpus, n), "registry.example/corpus/"), f); err != nil {
		return nil, err
	}
	if err := f.Close(); err != nil {
		return nil, err
	}
	if st, err := os.Stat(filepath.Join(build, "catalog", "catalog.json")); err == nil {
		res.CatalogBytes = int(st.Size())
	}
	dockerfile := "FROM scratch\nADD catalog /configs\nLABEL operators.operatorframework.io.index.configs.v1=/configs\n"
	if err := os.WriteFile(filepath.Join(build, "Dockerfile"), []byte(dockerfile), 0o644); err != nil {
		return nil, err
	}
	image, _, err := env.Registry.PushDockerContext(build, "bench/catalog:latest")
	if err != nil {
		return nil, err
	}

	const ns = "bench-catalog"
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		return nil, err
	}
	cat := &catalogsv1alpha1.OperatorCatalog{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "bench"},
		Spec: catalogsv1alpha1.OperatorCatalogSpec{Image: image, PollInterval: &metav1.Duration{Duration: 10 * time.Second}}}
	fmt.Fprintf(os.Stderr, "%s: publishing a catalog of %d bundles (%d bytes)\n", time.Now().Format(time.TimeOnly), n, res.CatalogBytes)
	start := time.Now()
	if err := c.Create(ctx, cat); err != nil {
		return nil, err
	}
	for {
		if err := c.Get(ctx, client.ObjectKeyFromObject(cat), cat); err != nil {
			return nil, err
		}
		if cond := meta.FindStatusCondition(cat.Status.Conditions, catalogsv1alpha1.TypePublished); cond != nil {
			if cond.Status != metav1.ConditionTrue {
				return nil, fmt.Errorf("not published: %s", cond.Message)
			}
			break
		}
		if time.Since(start) > 10*time.Minute {
			return nil, fmt.Errorf("not published after 10 minutes")
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
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
	return res, nil
}

func (r *catalogResult) report() string {
	return fmt.Sprintf(`catalog of %d bundles (%d bytes of FBC), published with an OperatorCatalog
published in:          %s
stored:                %d Packages, %d PackageMetadatas; %d bytes as JSON, the largest object %d bytes
adapter, publishing:   %d requests, %d writes (%s)
adapter, idle %s:     %d requests, %d writes (a tag lookup every 10 s goes to the registry, not the API server)
kapp-controller, idle: %d requests, %d writes
adapter peak RSS:      %.0f MiB
`, r.N, r.CatalogBytes, r.Published.Round(10*time.Millisecond), r.Packages, r.Metadatas, r.StoredBytes, r.LargestObject,
		r.Publish.Requests, r.Publish.Writes, r.Publish.byKind(), r.IdleFor, r.Idle.Requests, r.Idle.Writes,
		r.KappControllerIdle.Requests, r.KappControllerIdle.Writes, r.PeakRSS)
}
