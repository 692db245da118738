package harness

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/operator-framework/operator-registry/alpha/declcfg"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	watchtools "k8s.io/client-go/tools/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/catalog"
	catalogsv1alpha1 "github.com/rukpak-kapp/rukpak-kapp/api/catalogs/v1alpha1"
	"github.com/rukpak-kapp/rukpak-kapp/test/catalogtest"
)

// ExampleCatalogNamespace holds make run's OperatorCatalog, its Packages
// and what the printed kctrl commands install.
const ExampleCatalogNamespace = "operators"

// exampleOperators are the corpus's bundles make run's catalog publishes:
// three small operators that install on fake nodes (the packaging suite
// installs each of them through kctrl's calls too).
var exampleOperators = []string{"headscale-operator/0.1.1", "aws-efs-operator/0.0.8", "ruptura-operator/0.9.1"}

// KctrlStep is one command make run prints for a user to try its catalog,
// with the calls kctrl makes for it, so the packaging suite runs exactly
// what a user is told to run.
type KctrlStep struct {
	Command string
	Run     func(ctx context.Context, cfg *rest.Config) error
}

// ExampleCatalog pushes three operators of the registry+v1 corpus and a
// catalog image of them to the harness's registry, creates an
// OperatorCatalog of that image in ExampleCatalogNamespace, waits until the
// adapter published it, and returns the kctrl commands that install one
// of its operators. It needs Servers, an adapter and the OperatorCatalog
// API.
func (e *Env) ExampleCatalog(ctx context.Context) ([]KctrlStep, error) {
	corpus := filepath.Join(e.Root, "test", "testdata", "registry-v1-corpus")
	all, err := catalogtest.Corpus(corpus)
	if err != nil {
		return nil, err
	}
	var bundles []catalogtest.Bundle
	for _, dir := range exampleOperators {
		at := slices.IndexFunc(all, func(b catalogtest.Bundle) bool { return b.Package+"/"+b.CSV.Spec.Version.String() == dir })
		if at < 0 {
			return nil, fmt.Errorf("bundle %s is not in the corpus", dir)
		}
		if _, _, err := e.Registry.PushDir(filepath.Join(corpus, dir), "examples/"+strings.Replace(dir, "/", ":", 1)); err != nil {
			return nil, fmt.Errorf("push bundle %s: %w", dir, err)
		}
		bundles = append(bundles, all[at])
	}
	cfg := catalogtest.Catalog(bundles, e.Registry.Host+"/examples/")
	cfg.Deprecations = nil // catalogtest deprecates its first bundle; the example offers all three
	image, err := e.PushCatalogImage(cfg, "examples/catalog:latest")
	if err != nil {
		return nil, err
	}

	if err := e.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ExampleCatalogNamespace}}); client.IgnoreAlreadyExists(err) != nil {
		return nil, fmt.Errorf("create namespace %s: %w", ExampleCatalogNamespace, err)
	}
	cat := &catalogsv1alpha1.OperatorCatalog{
		ObjectMeta: metav1.ObjectMeta{Namespace: ExampleCatalogNamespace, Name: "examples"},
		Spec:       catalogsv1alpha1.OperatorCatalogSpec{Image: image},
	}
	if err := e.Client.Create(ctx, cat); err != nil {
		return nil, fmt.Errorf("create OperatorCatalog %s: %w", cat.Name, err)
	}
	watcher, err := client.NewWithWatch(e.ControlPlane.Config, client.Options{Scheme: e.Scheme})
	if err != nil {
		return nil, err
	}
	if err := waitPublished(ctx, watcher, cat); err != nil {
		return nil, err
	}

	first := bundles[0]
	ref, err := catalog.RefName(first.Package, first.DefaultChannel, catalog.DefaultDomain)
	if err != nil {
		return nil, err
	}
	version := first.CSV.Spec.Version.String()
	ns := ExampleCatalogNamespace
	return []KctrlStep{
		{Command: "kctrl package available list -n " + ns, Run: func(ctx context.Context, cfg *rest.Config) error {
			// One PackageMetadata per channel of each operator.
			list, err := KctrlAvailableList(ctx, cfg, ns)
			if err == nil && !slices.ContainsFunc(list, func(p PackageSummary) bool { return p.Name == ref }) {
				err = fmt.Errorf("%s is not among the packages available: %+v", ref, list)
			}
			return err
		}},
		{Command: fmt.Sprintf("kctrl package available list -p %s -n %s", ref, ns), Run: func(ctx context.Context, cfg *rest.Config) error {
			versions, err := KctrlAvailableVersions(ctx, cfg, ns, ref)
			if err == nil && (len(versions) != 1 || versions[0].Version != version) {
				err = fmt.Errorf("versions of %s: %v, want %s", ref, versions, version)
			}
			return err
		}},
		{Command: fmt.Sprintf("kctrl package install -i headscale -p %s --version %s -n %s", ref, version, ns), Run: func(ctx context.Context, cfg *rest.Config) error {
			return KctrlPackageInstall(ctx, cfg, KctrlInstall{Namespace: ns, Name: "headscale", Package: ref, Version: version})
		}},
		{Command: "kctrl package installed list -n " + ns, Run: func(ctx context.Context, cfg *rest.Config) error {
			// kapp-controller looks at an install again after it succeeded, so
			// the row may say Reconciling; failed it must not.
			list, err := KctrlInstalledList(ctx, cfg, ns)
			if err == nil && (len(list) != 1 || list[0].Name != "headscale" || list[0].PackageVersion != version || list[0].Status == "Reconcile failed") {
				err = fmt.Errorf("installed: %+v, want headscale at %s", list, version)
			}
			return err
		}},
	}, nil
}

// CatalogConfigsLabel is the label opm gives a catalog image, naming the
// folder of its files: adapter/fetch.CatalogConfigsLabel, which the harness
// cannot import (that package's tests import the harness); a test there
// holds the two equal.
const CatalogConfigsLabel = "operators.operatorframework.io.index.configs.v1"

// PushCatalogImage pushes cfg to the harness's registry as opm lays out a
// catalog image: its files under /configs, named by the configs label.
func (e *Env) PushCatalogImage(cfg *declcfg.DeclarativeConfig, repoTag string) (string, error) {
	top, err := os.MkdirTemp(e.Dir, "catalog-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(top)
	if err := declcfg.WriteFS(*cfg, filepath.Join(top, "configs"), declcfg.WriteYAML, ".yaml"); err != nil {
		return "", fmt.Errorf("write catalog: %w", err)
	}
	ref, _, err := e.Registry.PushLayers(repoTag, map[string]string{CatalogConfigsLabel: "/configs"}, top)
	if err != nil {
		return "", fmt.Errorf("push catalog image: %w", err)
	}
	return ref, nil
}

// waitPublished waits, watching cat, until the adapter says its
// generation is published, and returns its last word when it does not say
// so in time. client-go's UntilWithSync lists before it watches, so a status
// written before it began is seen, and lists and watches again, with
// backoff, when the API server ends its watch.
func waitPublished(ctx context.Context, c client.WithWatch, cat *catalogsv1alpha1.OperatorCatalog) error {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	only := func(opts metav1.ListOptions) *client.ListOptions {
		opts.FieldSelector = fields.OneTermEqualSelector("metadata.name", cat.Name).String()
		return &client.ListOptions{Namespace: cat.Namespace, Raw: &opts}
	}
	lw := &toolscache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
			list := &catalogsv1alpha1.OperatorCatalogList{}
			return list, c.List(ctx, list, only(opts))
		},
		WatchFuncWithContext: func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
			return c.Watch(ctx, &catalogsv1alpha1.OperatorCatalogList{}, only(opts))
		},
	}
	last := "no status yet"
	_, err := watchtools.UntilWithSync(ctx, lw, &catalogsv1alpha1.OperatorCatalog{}, nil, func(ev watch.Event) (bool, error) {
		got, ok := ev.Object.(*catalogsv1alpha1.OperatorCatalog)
		if !ok {
			return false, nil
		}
		c := meta.FindStatusCondition(got.Status.Conditions, catalogsv1alpha1.TypePublished)
		if c == nil || c.ObservedGeneration != got.Generation {
			return false, nil
		}
		last = c.Reason + ": " + c.Message
		return c.Status == metav1.ConditionTrue, nil
	})
	if err != nil {
		return fmt.Errorf("OperatorCatalog %s/%s not published within two minutes (%s): %w", cat.Namespace, cat.Name, last, err)
	}
	return nil
}
