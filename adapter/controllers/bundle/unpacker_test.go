package bundle

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/contenturl"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/fetch"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/internal/scope"
	rukpakv1alpha1 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha1"
	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
	"github.com/rukpak-kapp/rukpak-kapp/test/fakekube"
)

const address = "https://rukpak-kapp-webhook.rukpak-system.svc"

var classes = map[string]string{
	rukpakv1alpha2.ClassPlain: rukpakv1alpha2.ClassPlain, rukpakv1alpha2.ClassRegistry: rukpakv1alpha2.ClassRegistry,
	"kapp-plain": rukpakv1alpha2.ClassPlain,
}

// fetcher serves one set of files for any source, pinning image tags to
// "@sha256:<digest>", and counts what it was asked for.
type fetcher struct {
	// gate, when set, holds every fetch until it is closed.
	gate   chan struct{}
	mu     sync.Mutex
	files  fetch.Files
	digest string
	err    error
	asked  []string
}

func (f *fetcher) Fetch(_ context.Context, bd *rukpakv1alpha2.BundleDeployment) (fetch.Files, *rukpakv1alpha2.BundleSource, error) {
	if f.gate != nil {
		<-f.gate
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	src := bd.Spec.Source.DeepCopy()
	f.asked = append(f.asked, src.Image.Ref)
	if f.err != nil {
		return nil, nil, f.err
	}
	if repo, _, ok := strings.Cut(src.Image.Ref, ":"); ok && !strings.Contains(src.Image.Ref, "@") {
		src.Image.Ref = repo + "@sha256:" + f.digest
	}
	return f.files, src, nil
}

func (f *fetcher) RemoteHead(context.Context, *rukpakv1alpha2.GitSource) (string, error) {
	return "", errors.New("not here")
}

func (f *fetcher) set(files fetch.Files, digest string, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.files, f.digest, f.err, f.asked = files, digest, err, nil
}

// expectFetched fails t unless the fetches since the last set asked for
// exactly refs, in order.
func (f *fetcher) expectFetched(t *testing.T, what string, refs ...string) {
	t.Helper()
	if got := f.fetched(); !slices.Equal(got, refs) {
		t.Fatalf("%s: fetched %q, want %q", what, got, refs)
	}
}

func (f *fetcher) fetched() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.asked...)
}

var valid = fetch.Files{"manifests/": nil, "manifests/ns.yaml": []byte("apiVersion: v1\nkind: Namespace\nmetadata: {name: combo}\n")}

func standaloneBundle(name, class, ref string) *rukpakv1alpha1.Bundle {
	return &rukpakv1alpha1.Bundle{
		ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID("uid-" + name), Generation: 1},
		Spec: rukpakv1alpha1.BundleSpec{ProvisionerClassName: class, Source: rukpakv1alpha1.BundleSource{
			Type: rukpakv1alpha1.SourceTypeImage, Image: &rukpakv1alpha1.ImageSource{Ref: ref}}},
	}
}

type world struct {
	k     *fakekube.Cluster
	f     *fetcher
	store *contenturl.Tarballs
	u     *Unpacker
}

func newWorld(t *testing.T, objs ...client.Object) *world {
	k := fakekube.New(nil, objs...)
	w := &world{k: k, f: &fetcher{files: valid, digest: "aaa"}}
	w.restart(t)
	return w
}

// restart is a new adapter process: nothing stored, nothing remembered.
func (w *world) restart(t *testing.T) {
	s, err := contenturl.NewTarballs(filepath.Join(t.TempDir(), "content"), 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	w.store = s
	w.u = New(w.k.Client, nil, NewURLSource(w.k.Direct, w.f, s, classes, "rukpak-system"), address)
}

func (w *world) reconcile(t *testing.T, name string) error {
	t.Helper()
	_, err := w.reconcileFor(t, name)
	return err
}

func (w *world) reconcileFor(t *testing.T, name string) (ctrl.Result, error) {
	t.Helper()
	return w.u.Reconcile(context.Background(), ctrl.Request{NamespacedName: types.NamespacedName{Name: name}})
}

// later moves the adapter's clock d on.
func (w *world) later(d time.Duration) {
	now := w.u.now
	w.u.now = func() time.Time { return now().Add(d) }
}

// retried checks that a reconcile reported a failure to retry at its
// backoff's time, about after from now, with no error.
func retried(t *testing.T, what string, res ctrl.Result, err error, after time.Duration) {
	t.Helper()
	if err != nil || res.RequeueAfter <= 0 || res.RequeueAfter > after {
		t.Fatalf("%s: result %+v, error %v: want the next look at the next attempt, within %s", what, res, err, after)
	}
}

func (w *world) bundle(t *testing.T, name string) *rukpakv1alpha1.Bundle {
	t.Helper()
	b := &rukpakv1alpha1.Bundle{}
	if err := w.k.Raw.Get(context.Background(), client.ObjectKey{Name: name}, b); err != nil {
		t.Fatal(err)
	}
	return b
}

func unpackedCondition(b *rukpakv1alpha1.Bundle) metav1.Condition {
	for _, c := range b.Status.Conditions {
		if c.Type == rukpakv1alpha1.TypeUnpacked {
			return c
		}
	}
	return metav1.Condition{}
}

func TestUnpack_ThenRestCostsNothing(t *testing.T) {
	w := newWorld(t, standaloneBundle("combo", rukpakv1alpha1.ClassPlain, "registry.example/combo:v1"))
	if err := w.reconcile(t, "combo"); err != nil {
		t.Fatal(err)
	}
	// A fetch that takes no time goes from no status to Unpacked in one write.
	w.k.ExpectWrites(t, "the unpack", "status-patch Bundle /combo")
	b := w.bundle(t, "combo")
	if b.Status.Phase != rukpakv1alpha1.PhaseUnpacked || b.Status.ResolvedSource.Image.Ref != "registry.example/combo@sha256:aaa" ||
		b.Status.ContentURL != address+"/bundles/combo.tgz" || b.Status.ObservedGeneration != 1 {
		t.Fatalf("status %+v", b.Status)
	}
	if c := unpackedCondition(b); c.Reason != "UnpackSuccessful" || c.Message != "Successfully unpacked the image Bundle" {
		t.Fatalf("condition %+v", c)
	}
	if stored, pinned := w.store.Has(bundleKey(b.UID, rukpakv1alpha2.ClassPlain, *b.Status.ResolvedSource)); !stored || !pinned {
		t.Fatal("the content is not kept")
	}

	// At rest: no fetch, no write.
	w.f.set(valid, "aaa", nil)
	for range 3 {
		if err := w.reconcile(t, "combo"); err != nil {
			t.Fatal(err)
		}
	}
	w.k.ExpectWrites(t, "at rest")
	w.f.expectFetched(t, "at rest")
}

func TestUnpack_ASlowFetchSaysUnpackingMeanwhile(t *testing.T) {
	w := newWorld(t, standaloneBundle("slow", rukpakv1alpha1.ClassPlain, "registry.example/slow:v1"))
	w.f.gate = make(chan struct{})
	woken := make(chan string, 1)
	w.u.fetches.requeue = func(_ context.Context, name string) { woken <- name }
	// The reconcile returns while the fetch goes on, having said so: the
	// status is written by reconciles only, never by the fetch.
	if err := w.reconcile(t, "slow"); err != nil {
		t.Fatal(err)
	}
	w.k.ExpectWrites(t, "a slow fetch", "status-patch Bundle /slow")
	c := unpackedCondition(w.bundle(t, "slow"))
	if c.Status != "False" || c.Reason != "Unpacking" || c.Message != "Unpacking the image Bundle: fetching image registry.example/slow:v1" {
		t.Fatalf("condition %+v", c)
	}
	// Another look meanwhile neither fetches again nor writes.
	if err := w.reconcile(t, "slow"); err != nil {
		t.Fatal(err)
	}
	w.k.ExpectWrites(t, "a look while the fetch runs")
	close(w.f.gate)
	select {
	case name := <-woken:
		if name != "slow" {
			t.Fatalf("the fetch's end woke %q", name)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the fetch's end woke nothing")
	}
	w.f.expectFetched(t, "one fetch", "registry.example/slow:v1")
	if err := w.reconcile(t, "slow"); err != nil {
		t.Fatal(err)
	}
	w.k.ExpectWrites(t, "the fetch's outcome", "status-patch Bundle /slow")
	if b := w.bundle(t, "slow"); b.Status.Phase != rukpakv1alpha1.PhaseUnpacked {
		t.Fatalf("status %+v", b.Status)
	}
	w.f.expectFetched(t, "its result taken, not fetched again", "registry.example/slow:v1")
}

func TestRestart_FetchesThePinnedSourceAgain(t *testing.T) {
	w := newWorld(t, standaloneBundle("combo", "kapp-plain", "registry.example/combo:v1"))
	if err := w.reconcile(t, "combo"); err != nil {
		t.Fatal(err)
	}
	w.k.Reset()
	// The tag moved since; a new process must serve what was unpacked.
	w.restart(t)
	w.f.set(valid, "bbb", nil)
	if err := w.reconcile(t, "combo"); err != nil {
		t.Fatal(err)
	}
	w.f.expectFetched(t, "a restart", "registry.example/combo@sha256:aaa")
	w.k.ExpectWrites(t, "a restart: the status already says it all")
	b := w.bundle(t, "combo")
	if stored, _ := w.store.Has(bundleKey(b.UID, rukpakv1alpha2.ClassPlain, *b.Status.ResolvedSource)); !stored {
		t.Fatal("not stored after the restart")
	}

	// The pinned digest is gone from the registry: never Unpacked without
	// content, and the retry asks for the pinned digest again, not the tag.
	w.restart(t)
	w.f.set(nil, "bbb", &scope.StepError{Step: scope.StepSource, Err: errors.New("MANIFEST_UNKNOWN: manifest unknown")})
	res, err := w.reconcileFor(t, "combo")
	retried(t, "a source failure", res, err, time.Second)
	w.f.expectFetched(t, "the failed fetch", "registry.example/combo@sha256:aaa")
	b = w.bundle(t, "combo")
	next := w.u.now().Add(res.RequeueAfter).UTC().Format(time.RFC3339)
	if c := unpackedCondition(b); b.Status.Phase != rukpakv1alpha1.PhaseFailing || c.Reason != "UnpackFailed" || b.Status.ResolvedSource != nil || b.Status.ContentURL != "" ||
		c.Message != "source bundle content: MANIFEST_UNKNOWN: manifest unknown (fetching image registry.example/combo@sha256:aaa); retrying with backoff, next attempt at "+next {
		t.Fatalf("status %+v, want the next attempt at %s", b.Status, next)
	}
	// Within the backoff (the fetch's wake, the status write's echo): the
	// failure stands, nothing is fetched or written.
	w.k.Reset()
	res, err = w.reconcileFor(t, "combo")
	retried(t, "within the backoff", res, err, time.Second)
	w.k.ExpectWrites(t, "the same failure again")
	w.f.expectFetched(t, "within the backoff", "registry.example/combo@sha256:aaa")
	// Its next attempt fails again: two seconds to the one after.
	w.later(time.Second)
	res, err = w.reconcileFor(t, "combo")
	retried(t, "the second failure", res, err, 2*time.Second)
	if res.RequeueAfter <= time.Second {
		t.Fatalf("the second failure waits %s, want twice the first", res.RequeueAfter)
	}
	w.f.expectFetched(t, "the second attempt", "registry.example/combo@sha256:aaa", "registry.example/combo@sha256:aaa")
	w.f.set(valid, "bbb", nil)
	w.later(2 * time.Second)
	if err := w.reconcile(t, "combo"); err != nil {
		t.Fatal(err)
	}
	w.f.expectFetched(t, "the retry", "registry.example/combo@sha256:aaa")
	if b = w.bundle(t, "combo"); b.Status.Phase != rukpakv1alpha1.PhaseUnpacked || b.Status.ResolvedSource.Image.Ref != "registry.example/combo@sha256:aaa" {
		t.Fatalf("status %+v", b.Status)
	}
}

func TestRestart_TakesOverRukpaksContentURL(t *testing.T) {
	b := standaloneBundle("combo", rukpakv1alpha1.ClassPlain, "registry.example/combo:v1")
	pinned := rukpakv1alpha1.BundleSource{Type: rukpakv1alpha1.SourceTypeImage, Image: &rukpakv1alpha1.ImageSource{Ref: "registry.example/combo@sha256:aaa"}}
	b.Status = rukpakv1alpha1.BundleStatus{Phase: rukpakv1alpha1.PhaseUnpacked, ResolvedSource: &pinned, ObservedGeneration: 1,
		ContentURL: "https://core.rukpak-system.svc/bundles/combo.tgz",
		Conditions: []metav1.Condition{{Type: "Unpacked", Status: "True", Reason: "UnpackSuccessful", Message: "Successfully unpacked the image Bundle", ObservedGeneration: 1}}}
	w := newWorld(t, b)
	if err := w.reconcile(t, "combo"); err != nil {
		t.Fatal(err)
	}
	w.k.ExpectWrites(t, "rukpak's contentURL replaced", "status-patch Bundle /combo")
	if got := w.bundle(t, "combo").Status.ContentURL; got != address+"/bundles/combo.tgz" {
		t.Fatalf("contentURL %s", got)
	}
}

func TestTakesRukpaksFinalizerOff(t *testing.T) {
	b := standaloneBundle("combo", rukpakv1alpha1.ClassPlain, "registry.example/combo:v1")
	b.Finalizers = []string{"core.rukpak.io/delete-cached-bundle", "example.com/keep"}
	gone := standaloneBundle("gone", rukpakv1alpha1.ClassPlain, "registry.example/combo:v1")
	gone.Finalizers = []string{"core.rukpak.io/delete-cached-bundle"}
	now := metav1.Now()
	gone.DeletionTimestamp = &now
	w := newWorld(t, b, gone)
	if err := w.reconcile(t, "combo"); err != nil {
		t.Fatal(err)
	}
	// The finalizer's step, then the one status write, locked by the
	// resourceVersion the step left: one reconcile, no conflict.
	w.k.ExpectWrites(t, "the finalizer released and the Bundle unpacked", "patch Bundle /combo", "status-patch Bundle /combo")
	if err := w.reconcile(t, "gone"); err != nil {
		t.Fatal(err)
	}
	w.k.ExpectWrites(t, "a deleted Bundle: its finalizer released, no status written", "patch Bundle /gone")
	if got := w.bundle(t, "combo"); len(got.Finalizers) != 1 || got.Finalizers[0] != "example.com/keep" || got.Status.Phase != rukpakv1alpha1.PhaseUnpacked {
		t.Fatalf("finalizers %v, status %+v", got.Finalizers, got.Status)
	}
	// A Bundle rukpak unpacked, deleted after rukpak stopped, goes.
	if err := w.k.Raw.Get(context.Background(), client.ObjectKey{Name: "gone"}, &rukpakv1alpha1.Bundle{}); err == nil {
		t.Fatal("a deleted Bundle is still held")
	}
	w.f.expectFetched(t, "a deleted Bundle is not unpacked", "registry.example/combo:v1")
}

func TestFailures(t *testing.T) {
	for _, tc := range []struct {
		name     string
		class    string
		files    fetch.Files
		err      error
		terminal bool
		message  string
	}{
		{"no manifests/", rukpakv1alpha1.ClassPlain, fetch.Files{"emptyfile": nil}, nil, true,
			"invalid bundle: readdir manifests: file does not exist"},
		{"an empty manifests/", rukpakv1alpha1.ClassPlain, fetch.Files{"manifests/": nil}, nil, true,
			"invalid bundle: found zero objects: plain+v0 bundles are required to contain at least one object"},
		{"a file that is no object", rukpakv1alpha1.ClassPlain, fetch.Files{"manifests/.gitignore": []byte("!.gitignore\n")}, nil, true,
			"json: cannot unmarshal string into Go value"},
		{"registry+v1 without a bundle", rukpakv1alpha1.ClassRegistry, valid, nil, true, "invalid bundle: "},
		{"the registry refuses", rukpakv1alpha1.ClassPlain, nil, &scope.StepError{Step: scope.StepSource, Err: errors.New("error fetching image descriptor: UNAUTHORIZED")}, false,
			"source bundle content: error fetching image descriptor: UNAUTHORIZED (fetching image registry.example/combo:v1); retrying with backoff"},
		{"not a tarball", rukpakv1alpha1.ClassPlain, nil, &scope.StepError{Step: scope.StepSource, Err: fetch.ErrInvalidContent}, true,
			"source bundle content: "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t, standaloneBundle("combo", tc.class, "registry.example/combo:v1"))
			w.f.set(tc.files, "aaa", tc.err)
			res, err := w.reconcileFor(t, "combo")
			if tc.terminal && !errors.Is(err, reconcile.TerminalError(nil)) {
				t.Fatalf("error %v, want terminal", err)
			}
			if !tc.terminal {
				retried(t, "a failure a retry can end", res, err, time.Second)
				// The Bundle read again (its fetch's wake, its status
				// write's echo) within the backoff: nothing fetched.
				res, err = w.reconcileFor(t, "combo")
				retried(t, "within the backoff", res, err, time.Second)
				w.f.expectFetched(t, "within the backoff", "registry.example/combo:v1")
			}
			b := w.bundle(t, "combo")
			c := unpackedCondition(b)
			if b.Status.Phase != rukpakv1alpha1.PhaseFailing || c.Status != "False" || c.Reason != "UnpackFailed" || !strings.Contains(c.Message, tc.message) {
				t.Fatalf("status %+v", b.Status)
			}
			if _, objects := w.store.Used(); objects != 0 {
				t.Fatal("failed content was stored")
			}
		})
	}
}

func TestUpload(t *testing.T) {
	b := standaloneBundle("up", rukpakv1alpha1.ClassPlain, "")
	b.Spec.Source = rukpakv1alpha1.BundleSource{Type: rukpakv1alpha1.SourceTypeUpload, Upload: &rukpakv1alpha1.UploadSource{}}
	w := newWorld(t, b)
	if err := w.reconcile(t, "up"); !errors.Is(err, reconcile.TerminalError(nil)) {
		t.Fatalf("error %v", err)
	}
	if c := unpackedCondition(w.bundle(t, "up")); !strings.Contains(c.Message, `source type "upload" is not served by rukpak-kapp`) {
		t.Fatalf("condition %+v", c)
	}
	w.f.expectFetched(t, "nothing to unpack")
}

func TestLeftAlone(t *testing.T) {
	yes := true
	mine := standaloneBundle("generated", rukpakv1alpha1.ClassPlain, "registry.example/combo:v1")
	mine.OwnerReferences = []metav1.OwnerReference{{APIVersion: "core.rukpak.io/v1alpha1", Kind: "BundleDeployment", Name: "bd", UID: "bd-uid", Controller: &yes}}
	other := standaloneBundle("other", "someone-elses", "registry.example/combo:v1")
	w := newWorld(t, mine, other)
	for _, name := range []string{"generated", "other", "gone"} {
		if err := w.reconcile(t, name); err != nil {
			t.Fatal(err)
		}
	}
	w.k.ExpectWrites(t, "a generated Bundle, another class's, one that is gone")
	w.f.expectFetched(t, "nothing to unpack")
}

func TestStoreFull(t *testing.T) {
	w := newWorld(t, standaloneBundle("big", rukpakv1alpha1.ClassPlain, "registry.example/big:v1"))
	s, err := contenturl.NewTarballs(filepath.Join(t.TempDir(), "small"), 64)
	if err != nil {
		t.Fatal(err)
	}
	w.u = New(w.k.Client, nil, NewURLSource(w.k.Direct, w.f, s, classes, "rukpak-system"), address)
	res, err := w.reconcileFor(t, "big")
	retried(t, "a full store", res, err, time.Second)
	if c := unpackedCondition(w.bundle(t, "big")); !strings.Contains(c.Message, "content store is full") || !strings.Contains(c.Message, "retrying with backoff") {
		t.Fatalf("condition %+v", c)
	}
}

func TestLookup(t *testing.T) {
	plain := standaloneBundle("combo", rukpakv1alpha1.ClassPlain, "registry.example/combo:v1")
	pending := standaloneBundle("pending", rukpakv1alpha1.ClassPlain, "registry.example/combo:v1")
	bd := &rukpakv1alpha2.BundleDeployment{
		ObjectMeta: metav1.ObjectMeta{Name: "bd", UID: "uid-bd", Generation: 1},
		Spec: rukpakv1alpha2.BundleDeploymentSpec{ProvisionerClassName: "kapp-plain", InstallNamespace: "default",
			Source: rukpakv1alpha2.BundleSource{Type: rukpakv1alpha2.SourceTypeImage, Image: &rukpakv1alpha2.ImageSource{Ref: "registry.example/combo:v2"}}},
		Status: rukpakv1alpha2.BundleDeploymentStatus{ContentURL: address + "/bundles/bundledeployments/bd.tgz",
			ResolvedSource: &rukpakv1alpha2.BundleSource{Type: rukpakv1alpha2.SourceTypeImage, Image: &rukpakv1alpha2.ImageSource{Ref: "registry.example/combo@sha256:ccc"}}},
	}
	w := newWorld(t, plain, pending, bd)
	if err := w.reconcile(t, "combo"); err != nil {
		t.Fatal(err)
	}
	content := w.u.source
	for _, tc := range []struct {
		kind contenturl.Kind
		name string
		want error
	}{
		{contenturl.KindBundle, "pending", contenturl.ErrNoContent},
		{contenturl.KindBundle, "missing", contenturl.ErrNoContent},
		{contenturl.KindBundleDeployment, "combo", contenturl.ErrNoContent},
	} {
		if _, err := content.Lookup(context.Background(), tc.kind, tc.name); !errors.Is(err, tc.want) {
			t.Errorf("%s %s: %v", tc.kind, tc.name, err)
		}
	}
	c, err := content.Lookup(context.Background(), contenturl.KindBundle, "combo")
	if err != nil {
		t.Fatal(err)
	}
	if stored, _ := w.store.Has(c.Key); !stored {
		t.Fatal("a Bundle's lookup names another key than its unpack stored")
	}
	w.f.set(valid, "zzz", nil)
	c, err = content.Lookup(context.Background(), contenturl.KindBundleDeployment, "bd")
	if err != nil {
		t.Fatal(err)
	}
	files, err := c.Fill(context.Background())
	if err != nil || len(files) != len(valid) {
		t.Fatalf("fill: %v, %v", files, err)
	}
	w.f.expectFetched(t, "a BundleDeployment's content: its resolved source", "registry.example/combo@sha256:ccc")

	// Fetched as every content is (store.Materialize): what does not lay
	// out as a bundle of its class is refused, not served.
	w.f.set(fetch.Files{"README.md": []byte("no manifests")}, "zzz", nil)
	if files, err := c.Fill(context.Background()); err == nil {
		t.Fatalf("fill of content that is no plain bundle served %v", files)
	}
}

// A status write refused for a stale read (another writer first) is no
// error: the reconcile asks for another look, and that look writes the
// kept fetch's result without fetching again.
func TestUnpack_AConflictLooksAgainWithTheFetchKept(t *testing.T) {
	w := newWorld(t, standaloneBundle("raced", rukpakv1alpha1.ClassPlain, "registry.example/raced:v1"))
	refused := false
	w.k.Fail = func(c fakekube.Call) error {
		if c.Verb == fakekube.StatusPatch && !refused {
			refused = true
			return apierrors.NewConflict(schema.GroupResource{Group: "core.rukpak.io", Resource: "bundles"}, c.Name, errors.New("the object has been modified"))
		}
		return nil
	}
	res, err := w.u.Reconcile(context.Background(), ctrl.Request{NamespacedName: types.NamespacedName{Name: "raced"}})
	if err != nil || !res.Requeue {
		t.Fatalf("a refused status write: %+v, %v; want another look without an error", res, err)
	}
	if err := w.reconcile(t, "raced"); err != nil {
		t.Fatal(err)
	}
	if b := w.bundle(t, "raced"); b.Status.Phase != rukpakv1alpha1.PhaseUnpacked {
		t.Fatalf("after the second look: %+v", b.Status)
	}
	w.f.expectFetched(t, "a refused write and its retry", "registry.example/raced:v1")
}

// A look that reads the Bundle from a cache that has not seen the last
// status write writes nothing, fetches nothing and looks again; once the
// cache has the write, looks run (and at rest cost nothing).
func TestUnpack_ACacheBehindItsOwnStatusWriteWaits(t *testing.T) {
	w := newWorld(t, standaloneBundle("echo", rukpakv1alpha1.ClassPlain, "registry.example/echo:v1"))
	var stale *rukpakv1alpha1.Bundle
	behind := interceptor.NewClient(w.k.Client.(client.WithWatch), interceptor.Funcs{Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, o client.Object, opts ...client.GetOption) error {
		if b, ok := o.(*rukpakv1alpha1.Bundle); ok && stale != nil {
			stale.DeepCopyInto(b)
			return nil
		}
		return c.Get(ctx, key, o, opts...)
	}})
	w.u = New(behind, nil, w.u.source, address)
	before := w.bundle(t, "echo")
	if err := w.reconcile(t, "echo"); err != nil {
		t.Fatal(err)
	}
	if w.bundle(t, "echo").Status.Phase != rukpakv1alpha1.PhaseUnpacked {
		t.Fatal("not unpacked")
	}
	w.k.Reset()
	stale = before
	res, err := w.u.Reconcile(context.Background(), ctrl.Request{NamespacedName: types.NamespacedName{Name: "echo"}})
	if err != nil || !res.Requeue {
		t.Fatalf("a look from the cache behind the write: %+v, %v; want another look without an error", res, err)
	}
	w.k.ExpectWrites(t, "a look from the cache behind the write")
	w.f.expectFetched(t, "a look from the cache behind the write", "registry.example/echo:v1")
	stale = nil
	for range 2 {
		if res, err := w.u.Reconcile(context.Background(), ctrl.Request{NamespacedName: types.NamespacedName{Name: "echo"}}); err != nil || res.Requeue {
			t.Fatalf("a look once the cache has the write: %+v, %v", res, err)
		}
	}
	w.k.ExpectWrites(t, "at rest")
}

// The read only reads: whatever the Bundle needs (rukpak's finalizer off,
// its content pinned, a fetch), load writes nothing to the cluster and
// marks nothing in the content store; the steps do.
func TestLoad_OnlyReads(t *testing.T) {
	b := standaloneBundle("combo", rukpakv1alpha1.ClassPlain, "registry.example/combo:v1")
	b.Finalizers = []string{"core.rukpak.io/delete-cached-bundle"}
	pinned := rukpakv1alpha1.BundleSource{Type: rukpakv1alpha1.SourceTypeImage, Image: &rukpakv1alpha1.ImageSource{Ref: "registry.example/combo@sha256:aaa"}}
	b.Status = rukpakv1alpha1.BundleStatus{Phase: rukpakv1alpha1.PhaseUnpacked, ResolvedSource: &pinned, ObservedGeneration: 1,
		ContentURL: address + "/bundles/combo.tgz",
		Conditions: []metav1.Condition{{Type: "Unpacked", Status: "True", Reason: "UnpackSuccessful", Message: "Successfully unpacked the image Bundle", ObservedGeneration: 1}}}
	w := newWorld(t, b, standaloneBundle("fresh", rukpakv1alpha1.ClassPlain, "registry.example/fresh:v1"))
	// A request fetched the content first: kept, not pinned.
	key := bundleKey(b.UID, rukpakv1alpha2.ClassPlain, pinned)
	if _, err := w.store.Put(key, valid, false); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{"combo": "Rest", "fresh": "Unpack"} {
		l, err := w.u.load(context.Background(), ctrl.Request{NamespacedName: types.NamespacedName{Name: name}})
		if err != nil || l == nil || l.step.String() != want {
			t.Fatalf("load %s: %+v, %v; want the step %s", name, l, err, want)
		}
	}
	w.k.ExpectWrites(t, "load")
	if _, kept := w.store.Has(key); kept {
		t.Fatal("load pinned the content")
	}
	w.f.expectFetched(t, "load")

	if err := w.reconcile(t, "combo"); err != nil {
		t.Fatal(err)
	}
	w.k.ExpectWrites(t, "at rest, but for rukpak's finalizer", "patch Bundle /combo")
	if _, kept := w.store.Has(key); !kept {
		t.Fatal("the content the status reports is not pinned as this replica's unpack's")
	}
	w.f.expectFetched(t, "at rest")
}

// A finalizer step refused (another writer first) ends the run: nothing
// is fetched or reported, and another look follows without an error.
func TestReleaseConflict_LooksAgainWithoutAReport(t *testing.T) {
	b := standaloneBundle("combo", rukpakv1alpha1.ClassPlain, "registry.example/combo:v1")
	b.Finalizers = []string{"core.rukpak.io/delete-cached-bundle"}
	w := newWorld(t, b)
	w.k.Fail = func(c fakekube.Call) error {
		if c.Verb == fakekube.Patch {
			return apierrors.NewConflict(schema.GroupResource{Group: "core.rukpak.io", Resource: "bundles"}, c.Name, errors.New("the object has been modified"))
		}
		return nil
	}
	res, err := w.reconcileFor(t, "combo")
	if err != nil || !res.Requeue {
		t.Fatalf("a refused finalizer patch: %+v, %v; want another look without an error", res, err)
	}
	w.k.ExpectWrites(t, "a refused finalizer patch", "patch Bundle /combo")
	w.f.expectFetched(t, "a refused finalizer patch")
	w.k.Fail = nil
	if err := w.reconcile(t, "combo"); err != nil {
		t.Fatal(err)
	}
	w.k.ExpectWrites(t, "the next look", "patch Bundle /combo", "status-patch Bundle /combo")
}

// A fetch that ended has stored its content before it wakes its Bundle:
// what it holds in memory is given up within its slot, so MaxFetches
// bounds the memory of fetches however long Bundles wait for a worker.
func TestUnpack_AFetchStoresItsContentWithinItsSlot(t *testing.T) {
	w := newWorld(t, standaloneBundle("big", rukpakv1alpha1.ClassPlain, "registry.example/big:v1"))
	w.f.gate = make(chan struct{})
	woken := make(chan string, 1)
	w.u.fetches.requeue = func(_ context.Context, name string) { woken <- name }
	if err := w.reconcile(t, "big"); err != nil {
		t.Fatal(err)
	}
	if _, n := w.store.Used(); n != 0 {
		t.Fatalf("%d tarballs stored while the fetch waits", n)
	}
	close(w.f.gate)
	select {
	case <-woken:
	case <-time.After(10 * time.Second):
		t.Fatal("the fetch's end woke nothing")
	}
	// No reconcile has taken the result yet.
	if bytes, n := w.store.Used(); n != 1 || bytes == 0 {
		t.Fatalf("the ended fetch left %d tarballs (%d bytes) stored, want its own", n, bytes)
	}
	if err := w.reconcile(t, "big"); err != nil {
		t.Fatal(err)
	}
	if b := w.bundle(t, "big"); b.Status.Phase != rukpakv1alpha1.PhaseUnpacked {
		t.Fatalf("status %+v", b.Status)
	}
	if _, n := w.store.Used(); n != 1 {
		t.Fatalf("%d tarballs after the status, want 1", n)
	}
}
