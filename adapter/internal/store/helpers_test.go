package store

import (
	"context"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/fetch"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/internal/scope"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/status"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/translate"
	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
	"github.com/rukpak-kapp/rukpak-kapp/convert"
	"github.com/rukpak-kapp/rukpak-kapp/test/fakekube"
)

const systemNS = "rukpak-system"

var testCfg = translate.Config{SystemNamespace: systemNS, ServiceAccountName: "installer", SyncPeriod: 10 * time.Minute, BranchSyncPeriod: time.Hour}

// fakeFetcher serves files as the bundle's content and head as a tracked
// branch's commit (the commit Fetch pins a git source to), counting calls.
type fakeFetcher struct {
	mu      sync.Mutex
	files   fetch.Files
	err     error
	head    string
	fetches int
	heads   int
}

func (f *fakeFetcher) Fetch(_ context.Context, bd *rukpakv1alpha2.BundleDeployment) (fetch.Files, *rukpakv1alpha2.BundleSource, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.fetches++
	if f.err != nil {
		return nil, nil, f.err
	}
	src := bd.Spec.Source.DeepCopy()
	if src.Git != nil {
		src.Git.Ref = rukpakv1alpha2.GitRef{Commit: f.head}
	}
	return maps.Clone(f.files), src, nil
}

func (f *fakeFetcher) RemoteHead(context.Context, *rukpakv1alpha2.GitSource) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.heads++
	return f.head, nil
}

func (f *fakeFetcher) set(files fetch.Files, head string, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.files, f.head, f.err = files, head, err
}

func (f *fakeFetcher) counts() (fetches, heads int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.fetches, f.heads
}

// fakeAPIs serves the kinds it holds.
type fakeAPIs struct {
	mu     sync.Mutex
	served map[schema.GroupVersionKind]bool
}

func (a *fakeAPIs) Serves(_ context.Context, gvk schema.GroupVersionKind) (bool, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.served[gvk], nil
}

func (a *fakeAPIs) serve(gvk schema.GroupVersionKind) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.served == nil {
		a.served = map[schema.GroupVersionKind]bool{}
	}
	a.served[gvk] = true
}

// plainFiles is a valid plain bundle of one ConfigMap named name.
func plainFiles(name string) fetch.Files {
	return fetch.Files{
		"manifests/":        nil,
		"manifests/cm.yaml": []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: " + name + "\n"),
	}
}

// noManifests is a plain bundle rukpak refuses: it has no manifests/.
var noManifests = fetch.Files{"README.md": []byte("nothing to install\n")}

// bdOf is a BundleDeployment of class with source; the adapter fetches
// every one of these itself.
func bdOf(name, class string, src rukpakv1alpha2.BundleSource) *rukpakv1alpha2.BundleDeployment {
	return &rukpakv1alpha2.BundleDeployment{
		ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID("uid-" + name), Generation: 1},
		Spec:       rukpakv1alpha2.BundleDeploymentSpec{ProvisionerClassName: class, InstallNamespace: "op-ns", Source: src},
	}
}

// plainBD is a plain bundle from an image with a per-bundle skip-verify,
// which only the adapter can fetch.
func plainBD(name string) *rukpakv1alpha2.BundleDeployment {
	return bdOf(name, rukpakv1alpha2.ClassPlain, rukpakv1alpha2.BundleSource{Type: rukpakv1alpha2.SourceTypeImage,
		Image: &rukpakv1alpha2.ImageSource{Ref: "registry.example/" + name + ":v1", InsecureSkipTLSVerify: true}})
}

// branchBD tracks branch main of a git repository with a per-bundle
// skip-verify.
func branchBD(name string) *rukpakv1alpha2.BundleDeployment {
	return bdOf(name, rukpakv1alpha2.ClassPlain, rukpakv1alpha2.BundleSource{Type: rukpakv1alpha2.SourceTypeGit,
		Git: &rukpakv1alpha2.GitSource{Repository: "https://git.example/" + name, Ref: rukpakv1alpha2.GitRef{Branch: "main"},
			Auth: rukpakv1alpha2.Authorization{InsecureSkipVerify: true}}})
}

// registryBD is a registry+v1 bundle from an image.
func registryBD(name string) *rukpakv1alpha2.BundleDeployment {
	return bdOf(name, rukpakv1alpha2.ClassRegistry, rukpakv1alpha2.BundleSource{Type: rukpakv1alpha2.SourceTypeImage,
		Image: &rukpakv1alpha2.ImageSource{Ref: "registry.example/" + name + ":v1"}})
}

// webhookBundle is cluster-aas-operator 0.1.5 from the registry+v1
// corpus: a validating and a mutating webhook served by its operator's
// Deployment, and an olm.gvk dependency on argoproj.io/v1alpha1
// Application.
func webhookBundle(t *testing.T) fetch.Files {
	t.Helper()
	files, err := convert.ReadDir(os.DirFS(filepath.Join("..", "..", "..", "test", "testdata", "registry-v1-corpus", "cluster-aas-operator", "0.1.5")))
	if err != nil {
		t.Fatal(err)
	}
	return files
}

var argoApplication = schema.GroupVersionKind{Group: "argoproj.io", Version: "v1alpha1", Kind: "Application"}

// scopeOf is one reconcile of bd with its App in the system namespace.
func scopeOf(bd *rukpakv1alpha2.BundleDeployment) *scope.Scope {
	return &scope.Scope{BD: bd, View: bd, Mode: scope.InstallWithApp, AppNS: systemNS, Cfg: testCfg,
		Facts: &status.Facts{BD: bd, Now: time.Now()}, Now: time.Now()}
}

// gathered is the scope one Gather ran on, with the Outcome it handed back.
type gathered struct {
	*scope.Scope
	scope.Outcome
}

// gather runs one Gather of bd on s and fails the test on an error.
func gather(t *testing.T, s *Store, bd *rukpakv1alpha2.BundleDeployment) (Fetched, gathered, bool) {
	t.Helper()
	sc := scopeOf(bd)
	f, o, stop := s.Gather(context.Background(), sc)
	if o.Err != nil {
		t.Fatalf("Gather: %v", o.Err)
	}
	return f, gathered{sc, o}, stop
}

// contentSecrets are the names of bd's content Secrets in ns, sorted.
func contentSecrets(t *testing.T, c client.Reader, ns, bd string) []string {
	t.Helper()
	list := &corev1.SecretList{}
	if err := c.List(context.Background(), list, client.InNamespace(ns), client.MatchingLabels{LabelContent: "true", rukpakv1alpha2.LabelOwnerName: bd}); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, s := range list.Items {
		out = append(out, s.Name)
	}
	slices.Sort(out)
	return out
}

func names(f Fetched) []string {
	var out []string
	for _, s := range f.Secrets {
		out = append(out, s.Name)
	}
	slices.Sort(out)
	return out
}

// installedBeforeRestart is what an adapter that has since restarted
// fetched for bd, with the App it wrote for it.
func installedBeforeRestart(t *testing.T, k *fakekube.Cluster, bd *rukpakv1alpha2.BundleDeployment) Fetched {
	t.Helper()
	f, _, _ := gather(t, New(k.Client, testCfg, &fakeFetcher{files: plainFiles("one")}, &fakeAPIs{}), bd)
	writeApp(t, k.Raw, bd, f)
	return f
}

// writeApp stores the App the App mode writes for bd and f, as a running
// adapter did before it restarted.
func writeApp(t *testing.T, c client.Client, bd *rukpakv1alpha2.BundleDeployment, f Fetched) {
	t.Helper()
	cfg := testCfg
	cfg.AppNamespace = systemNS
	app, err := translate.AppInStyle(bd, cfg, f.Packed(), translate.StyleAsBundled)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Create(context.Background(), app); err != nil {
		t.Fatal(err)
	}
}

// storeOf is a Store over an empty cluster, fetching files.
func storeOf(files fetch.Files) (*fakekube.Cluster, *fakeFetcher, *Store) {
	k := fakekube.New(nil)
	fetcher := &fakeFetcher{files: files}
	return k, fetcher, New(k.Client, testCfg, fetcher, &fakeAPIs{})
}
