package operatorcatalog

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	datav1alpha1 "carvel.dev/kapp-controller/pkg/apiserver/apis/datapackaging/v1alpha1"
	"github.com/operator-framework/operator-registry/alpha/declcfg"
	"github.com/operator-framework/operator-registry/alpha/property"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/catalog"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/fetch"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/packagingapi"
	catalogsv1alpha1 "github.com/rukpak-kapp/rukpak-kapp/api/catalogs/v1alpha1"
	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
)

// images is a registry in memory: a tag's digest and each digest's catalog.
type images struct {
	digest   string
	catalogs map[string]*declcfg.DeclarativeConfig
	pulls    int
	lookups  int
	err      error
	// unbounded says a request had no deadline within its timeout.
	unbounded bool
	// creds are the credentials of the last look-up.
	creds []byte
	// full, when set, says whether a pull finds the spools full.
	full func() bool
}

// memCatalog is a catalog read, in memory.
type memCatalog struct{ cfg *declcfg.DeclarativeConfig }

func (m memCatalog) Packages() []string {
	var out []string
	for _, p := range m.cfg.Packages {
		out = append(out, p.Name)
	}
	return out
}

func (m memCatalog) Package(name string) (*declcfg.DeclarativeConfig, error) {
	out := &declcfg.DeclarativeConfig{}
	for _, p := range m.cfg.Packages {
		if p.Name == name {
			out.Packages = append(out.Packages, p)
		}
	}
	for _, c := range m.cfg.Channels {
		if c.Package == name {
			out.Channels = append(out.Channels, c)
		}
	}
	for _, b := range m.cfg.Bundles {
		if b.Package == name {
			out.Bundles = append(out.Bundles, b)
		}
	}
	return out, nil
}

func (memCatalog) Close() error { return nil }

func (i *images) Resolve(ctx context.Context, _ string, creds []byte) (string, error) {
	i.creds = creds
	i.lookups++
	if d, ok := ctx.Deadline(); !ok || time.Until(d) > ResolveTimeout {
		i.unbounded = true
	}
	return "registry.example/catalog@" + i.digest, i.err
}

func (i *images) Pull(ctx context.Context, pinned string, _ []byte) (Catalog, error) {
	i.pulls++
	if i.full != nil && i.full() {
		return nil, fmt.Errorf("read the catalog of %s: %w", pinned, fetch.ErrSpoolFull)
	}
	if d, ok := ctx.Deadline(); !ok || time.Until(d) > PullTimeout {
		i.unbounded = true
	}
	cfg, ok := i.catalogs[strings.TrimPrefix(pinned, "registry.example/catalog@")]
	if !ok {
		return nil, fmt.Errorf("%w: no catalog", fetch.ErrInvalidContent)
	}
	return memCatalog{cfg}, nil
}

// catalogOf has one package with one channel holding the versions named.
func catalogOf(versions ...string) *declcfg.DeclarativeConfig {
	cfg := &declcfg.DeclarativeConfig{Packages: []declcfg.Package{{Schema: declcfg.SchemaPackage, Name: "p", DefaultChannel: "s"}}}
	ch := declcfg.Channel{Schema: declcfg.SchemaChannel, Package: "p", Name: "s"}
	for _, v := range versions {
		ch.Entries = append(ch.Entries, declcfg.ChannelEntry{Name: "p." + v})
		cfg.Bundles = append(cfg.Bundles, declcfg.Bundle{Schema: declcfg.SchemaBundle, Package: "p", Name: "p." + v, Image: "registry.example/p:" + v,
			Properties: []property.Property{property.MustBuildPackage("p", v)}})
	}
	cfg.Channels = []declcfg.Channel{ch}
	return cfg
}

type harness struct {
	client client.Client
	r      *OperatorCatalogReconciler
	images *images
	writes []string
	// failCreates fails that many creates with createErr (nil: as a
	// packaging API that is down).
	failCreates int
	createErr   error
	// clock is the reconciler's.
	clock time.Time
	// onCreate runs before each create; an error refuses it.
	onCreate func(ctx context.Context, c client.WithWatch, o client.Object) error
}

func newHarness(t *testing.T, objs ...client.Object) *harness {
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{datav1alpha1.AddToScheme, catalogsv1alpha1.AddToScheme, corev1.AddToScheme, rukpakv1alpha2.AddToScheme} {
		if err := add(scheme); err != nil {
			t.Fatal(err)
		}
	}
	cat := &catalogsv1alpha1.OperatorCatalog{ObjectMeta: metav1.ObjectMeta{Namespace: "ops", Name: "c", Generation: 1},
		Spec: catalogsv1alpha1.OperatorCatalogSpec{Image: "registry.example/catalog:latest"}}
	h := &harness{images: &images{digest: "sha256:1", catalogs: map[string]*declcfg.DeclarativeConfig{"sha256:1": catalogOf("1.0.0"), "sha256:2": catalogOf("1.0.1")}}}
	base := fake.NewClientBuilder().WithScheme(scheme).WithObjects(append(objs, cat)...).WithStatusSubresource(cat).Build()
	h.client = interceptor.NewClient(base.(client.WithWatch), interceptor.Funcs{
		Create: func(ctx context.Context, c client.WithWatch, o client.Object, opts ...client.CreateOption) error {
			if h.failCreates > 0 {
				h.failCreates--
				if h.createErr != nil {
					return h.createErr
				}
				return apierrors.NewServiceUnavailable("the packaging API is unavailable")
			}
			if h.onCreate != nil {
				if err := h.onCreate(ctx, c, o); err != nil {
					return err
				}
			}
			h.writes = append(h.writes, "create "+o.GetName())
			return c.Create(ctx, o, opts...)
		},
		Update: func(ctx context.Context, c client.WithWatch, o client.Object, opts ...client.UpdateOption) error {
			h.writes = append(h.writes, "update "+o.GetName())
			return c.Update(ctx, o, opts...)
		},
		Delete: func(ctx context.Context, c client.WithWatch, o client.Object, opts ...client.DeleteOption) error {
			h.writes = append(h.writes, "delete "+o.GetName())
			return c.Delete(ctx, o, opts...)
		},
		Patch: func(ctx context.Context, c client.WithWatch, o client.Object, p client.Patch, opts ...client.PatchOption) error {
			if _, ok := o.(*catalogsv1alpha1.OperatorCatalog); !ok {
				h.writes = append(h.writes, "patch "+o.GetName())
			}
			return c.Patch(ctx, o, p, opts...)
		},
		SubResourcePatch: func(ctx context.Context, c client.Client, sub string, o client.Object, p client.Patch, opts ...client.SubResourcePatchOption) error {
			h.writes = append(h.writes, "status")
			return c.SubResource(sub).Patch(ctx, o, p, opts...)
		},
	})
	// The adapter's writer (kube.ConditionsWriter) as this tier sees it: a
	// status patch locked by the resourceVersion read.
	h.r = New(h.client, h.client, h.client, h.images, func(ctx context.Context, obj, before client.Object, _, _ []metav1.Condition) error {
		return h.client.Status().Patch(ctx, obj, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{}))
	}, NewInstalls(h.client, h.client, ""), NewServed(nil, func(context.Context) bool { return false }))
	h.clock = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	h.r.now = func() time.Time { return h.clock }
	return h
}

// poll moves the reconciler's clock by a poll interval: the next look
// is the catalog's poll.
func (h *harness) poll() { h.clock = h.clock.Add(DefaultPoll) }

func (h *harness) reconcile(t *testing.T) (reconcile.Result, error) {
	t.Helper()
	h.writes = nil
	return h.r.Reconcile(context.Background(), reconcile.Request{NamespacedName: client.ObjectKey{Namespace: "ops", Name: "c"}})
}

func (h *harness) catalog(t *testing.T) *catalogsv1alpha1.OperatorCatalog {
	t.Helper()
	cat := &catalogsv1alpha1.OperatorCatalog{}
	if err := h.client.Get(context.Background(), client.ObjectKey{Namespace: "ops", Name: "c"}, cat); err != nil {
		t.Fatal(err)
	}
	return cat
}

func TestReconcile_PublishesFollowsAndWithdraws(t *testing.T) {
	h := newHarness(t)
	res, err := h.reconcile(t)
	if err != nil || res.RequeueAfter != DefaultPoll {
		t.Fatalf("first publication: %v, %v", res, err)
	}
	if got := strings.Join(h.writes, ","); got != "create s.p.operators.rukpak-kapp.dev,create s.p.operators.rukpak-kapp.dev.1.0.0,status" {
		t.Errorf("writes %s", got)
	}
	cat := h.catalog(t)
	c := meta.FindStatusCondition(cat.Status.Conditions, catalogsv1alpha1.TypePublished)
	if c == nil || c.Status != metav1.ConditionTrue || c.ObservedGeneration != 1 || cat.Status.ResolvedImage != "registry.example/catalog@sha256:1" || cat.Status.Packages != 1 {
		t.Fatalf("status %+v", cat.Status)
	}

	if h.images.unbounded {
		t.Error("a request to the registry had no deadline, or a longer one than its timeout")
	}
	// At rest: the tag is looked up, nothing pulled or written.
	pulls := h.images.pulls
	if res, err := h.reconcile(t); err != nil || res.RequeueAfter != DefaultPoll || len(h.writes) != 0 || h.images.pulls != pulls {
		t.Errorf("at rest: %v, %v, writes %v, pulls %d", res, err, h.writes, h.images.pulls-pulls)
	}

	// The tag moved to a catalog without 1.0.0, which an install has: the
	// new version published, the old one kept for the install and marked
	// retracted; what did not change costs no request (a create refused as
	// existing would show).
	bd := installOf("1.0.0", "ops")
	if err := h.client.Create(context.Background(), bd); err != nil {
		t.Fatal(err)
	}
	h.images.digest = "sha256:2"
	h.poll()
	if _, err := h.reconcile(t); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(h.writes, ","); got != "create s.p.operators.rukpak-kapp.dev.1.0.1,update s.p.operators.rukpak-kapp.dev.1.0.0,status" {
		t.Errorf("writes after the move: %s", got)
	}
	if got := retracted(t, h); got != "1.0.0:registry.example/catalog@sha256:2,1.0.1:" {
		t.Errorf("Packages after the move (version:retracted in): %s; want 1.0.0 kept, marked, and 1.0.1", got)
	}
	if res, err := h.reconcile(t); err != nil || len(h.writes) != 0 {
		t.Errorf("again: %v, %v, writes %v: want the mark written once", res, err, h.writes)
	}

	// The install moves on: its catalog is woken and withdraws 1.0.0.
	moved := bd.DeepCopy()
	moved.Annotations = mustEntry("1.0.1").Annotations()
	moved.Annotations[catalog.AnnotationPackagesNS] = "ops"
	if !movedOff().Update(event.TypedUpdateEvent[*rukpakv1alpha2.BundleDeployment]{ObjectOld: bd, ObjectNew: moved}) ||
		movedOff().Update(event.TypedUpdateEvent[*rukpakv1alpha2.BundleDeployment]{ObjectOld: bd, ObjectNew: bd}) {
		t.Error("movedOff: want a change of entry passed, and nothing else")
	}
	if got := h.r.onInstall(context.Background(), moved); len(got) != 1 || got[0].Name != "c" {
		t.Errorf("onInstall queued %v, want the catalog that keeps its retracted Package", got)
	}
	if err := h.client.Update(context.Background(), moved); err != nil {
		t.Fatal(err)
	}
	if _, err := h.reconcile(t); err != nil || strings.Join(h.writes, ",") != "delete s.p.operators.rukpak-kapp.dev.1.0.0" {
		t.Errorf("after the install moved on: %v, writes %v", err, h.writes)
	}

	// The tag moves back: 1.0.0 is published again, 1.0.1 (installed now)
	// is kept, marked; forward again, 1.0.1 is written whole, unmarked.
	h.images.digest = "sha256:1"
	h.poll()
	if _, err := h.reconcile(t); err != nil {
		t.Fatal(err)
	}
	if got := retracted(t, h); got != "1.0.0:,1.0.1:registry.example/catalog@sha256:1" {
		t.Errorf("Packages after the move back: %s", got)
	}
	h.images.digest = "sha256:2"
	h.poll()
	if _, err := h.reconcile(t); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(h.writes, ","); got != "update s.p.operators.rukpak-kapp.dev.1.0.1,delete s.p.operators.rukpak-kapp.dev.1.0.0,status" {
		t.Errorf("writes forward again: %s", got)
	}
	if got := retracted(t, h); got != "1.0.1:" {
		t.Errorf("Packages forward again: %s", got)
	}
	var pkgs datav1alpha1.PackageList

	// Deleted: everything it published is withdrawn, then it goes.
	if err := h.client.Delete(context.Background(), h.catalog(t)); err != nil {
		t.Fatal(err)
	}
	if _, err := h.reconcile(t); err != nil {
		t.Fatal(err)
	}
	if err := h.client.List(context.Background(), &pkgs, client.InNamespace("ops")); err != nil || len(pkgs.Items) != 0 {
		t.Errorf("Packages after the delete: %d, %v", len(pkgs.Items), err)
	}
	if err := h.client.Get(context.Background(), client.ObjectKey{Namespace: "ops", Name: "c"}, &catalogsv1alpha1.OperatorCatalog{}); err == nil {
		t.Error("the OperatorCatalog is still there")
	}
}

func TestReconcile_Failures(t *testing.T) {
	t.Run("the tag cannot be looked up: backoff, said", func(t *testing.T) {
		h := newHarness(t)
		h.images.err = errors.New("dial tcp: connection refused")
		res, err := h.reconcile(t)
		if err != nil || res.RequeueAfter <= 0 || res.RequeueAfter > time.Second {
			t.Fatalf("%v, %v: want the next look at the next attempt, within a second", res, err)
		}
		c := meta.FindStatusCondition(h.catalog(t).Status.Conditions, catalogsv1alpha1.TypePublished)
		if c == nil || c.Reason != catalogsv1alpha1.ReasonPullFailed || !strings.Contains(c.Message, "connection refused") ||
			!strings.Contains(c.Message, "It is looked up again at "+time.Now().Add(res.RequeueAfter).UTC().Format("2006-01-02T15:04")) {
			t.Errorf("condition %+v", c)
		}
		// Its status write's echo, within the backoff: the registry is not
		// asked, nothing is written.
		h.writes = nil
		if res, err := h.reconcile(t); err != nil || res.RequeueAfter <= 0 || h.images.lookups != 1 || len(h.writes) != 0 {
			t.Errorf("within the backoff: %v, %v, %d lookups, writes %v", res, err, h.images.lookups, h.writes)
		}
	})
	t.Run("no catalog in the image: no hot retry, the next poll looks again", func(t *testing.T) {
		h := newHarness(t)
		h.images.digest = "sha256:none"
		h.poll()
		res, err := h.reconcile(t)
		if err != nil || res.RequeueAfter != DefaultPoll {
			t.Fatalf("%v, %v", res, err)
		}
		c := meta.FindStatusCondition(h.catalog(t).Status.Conditions, catalogsv1alpha1.TypePublished)
		if c == nil || c.Reason != catalogsv1alpha1.ReasonInvalid || !strings.Contains(c.Message, "Push a fixed catalog") {
			t.Errorf("condition %+v", c)
		}
		// Said once: the next poll looks the tag up, and neither pulls
		// the same digest again nor writes.
		pulls := h.images.pulls
		h.poll()
		if _, err := h.reconcile(t); err != nil || len(h.writes) != 0 || h.images.pulls != pulls || h.images.lookups != 2 {
			t.Errorf("again: %v, writes %v, pulls %d, lookups %d", err, h.writes, h.images.pulls-pulls, h.images.lookups)
		}
		// The tag moved: the new digest is pulled.
		h.images.digest = "sha256:other"
		h.poll()
		if _, err := h.reconcile(t); err != nil || h.images.pulls != pulls+1 {
			t.Errorf("a new digest: %v, pulls %d", err, h.images.pulls-pulls)
		}
	})
	t.Run("the poll interval has a floor", func(t *testing.T) {
		cat := &catalogsv1alpha1.OperatorCatalog{Spec: catalogsv1alpha1.OperatorCatalogSpec{PollInterval: &metav1.Duration{Duration: time.Second}}}
		if Poll(cat) != MinPoll {
			t.Errorf("Poll = %s", Poll(cat))
		}
	})
}

// A Package another OperatorCatalog of the namespace publishes is left to
// it and named in the status (Conflict); the counts are what this catalog
// keeps; once the other releases it, this one publishes it.
func TestReconcile_Conflict(t *testing.T) {
	other := &datav1alpha1.Package{ObjectMeta: metav1.ObjectMeta{Namespace: "ops", Name: "s.p.operators.rukpak-kapp.dev.1.0.0", Labels: map[string]string{LabelCatalog: "other"}}}
	h := newHarness(t, other)
	if _, err := h.reconcile(t); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(h.writes, ","); got != "create s.p.operators.rukpak-kapp.dev,status" {
		t.Errorf("writes %s: want the other catalog's Package left alone", got)
	}
	cat := h.catalog(t)
	c := meta.FindStatusCondition(cat.Status.Conditions, catalogsv1alpha1.TypePublished)
	if c == nil || c.Status != metav1.ConditionFalse || c.Reason != catalogsv1alpha1.ReasonConflict || !strings.Contains(c.Message, "OperatorCatalog other") ||
		cat.Status.Packages != 0 || cat.Status.PackageMetadatas != 1 {
		t.Fatalf("status %+v", cat.Status)
	}

	// The other catalog withdraws it: the watch marks it, and this catalog
	// publishes it without a pull.
	if err := h.client.Delete(context.Background(), other); err != nil {
		t.Fatal(err)
	}
	q := &recorded{}
	h.r.changed(kindPackage, &metav1.PartialObjectMetadata{ObjectMeta: other.ObjectMeta}, true, q)
	if len(q.added) != 1 || q.added[0].Name != "c" {
		t.Fatalf("queued %v, want the catalog that wanted it", q.added)
	}
	pulls := h.images.pulls
	if _, err := h.reconcile(t); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(h.writes, ","); got != "create s.p.operators.rukpak-kapp.dev.1.0.0,status" || h.images.pulls != pulls {
		t.Errorf("writes %s, pulls %d", got, h.images.pulls-pulls)
	}
	if c := meta.FindStatusCondition(h.catalog(t).Status.Conditions, catalogsv1alpha1.TypePublished); c.Reason != catalogsv1alpha1.ReasonPublished {
		t.Errorf("condition %+v", c)
	}
}

// A published Package deleted or edited by hand is written again from the
// catalog read, without a pull; the catalog's own writes queue nothing.
func TestReconcile_Repair(t *testing.T) {
	h := newHarness(t)
	if _, err := h.reconcile(t); err != nil {
		t.Fatal(err)
	}
	pkg := &datav1alpha1.Package{}
	key := client.ObjectKey{Namespace: "ops", Name: "s.p.operators.rukpak-kapp.dev.1.0.0"}
	if err := h.client.Get(context.Background(), key, pkg); err != nil {
		t.Fatal(err)
	}
	q := &recorded{}
	h.r.changed(kindPackage, &metav1.PartialObjectMetadata{ObjectMeta: pkg.ObjectMeta}, false, q)
	if len(q.added) != 0 {
		t.Errorf("its own write queued %v", q.added)
	}
	if err := h.client.Delete(context.Background(), pkg); err != nil {
		t.Fatal(err)
	}
	h.r.changed(kindPackage, &metav1.PartialObjectMetadata{ObjectMeta: pkg.ObjectMeta}, true, q)
	pulls := h.images.pulls
	if _, err := h.reconcile(t); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(h.writes, ","); got != "create "+key.Name || h.images.pulls != pulls || len(q.added) != 1 {
		t.Errorf("writes %s, pulls %d, queued %v", got, h.images.pulls-pulls, q.added)
	}
	if err := h.client.Get(context.Background(), key, pkg); err != nil {
		t.Fatal(err)
	}
}

// A private catalog is looked up with the Secret it names; a missing one
// is said, naming it.
func TestReconcile_PullSecret(t *testing.T) {
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "ops", Name: "pull"}, Type: corev1.SecretTypeDockerConfigJson,
		Data: map[string][]byte{corev1.DockerConfigJsonKey: []byte(`{"auths":{}}`)}}
	h := newHarness(t, secret)
	cat := h.catalog(t)
	cat.Spec.PullSecret = "missing"
	if err := h.client.Update(context.Background(), cat); err != nil {
		t.Fatal(err)
	}
	if _, err := h.reconcile(t); err != nil {
		t.Fatal(err)
	}
	c := meta.FindStatusCondition(h.catalog(t).Status.Conditions, catalogsv1alpha1.TypePublished)
	if c == nil || c.Reason != catalogsv1alpha1.ReasonPullFailed || !strings.Contains(c.Message, "pull secret missing (spec.pullSecret) is not in namespace ops") {
		t.Fatalf("condition %+v", c)
	}
	cat = h.catalog(t)
	cat.Spec.PullSecret = "pull"
	cat.Generation++
	if err := h.client.Update(context.Background(), cat); err != nil {
		t.Fatal(err)
	}
	if _, err := h.reconcile(t); err != nil {
		t.Fatal(err)
	}
	if string(h.images.creds) != `{"auths":{}}` {
		t.Errorf("looked up with %q", h.images.creds)
	}
}

// recorded is a queue that records what is added.
type recorded struct {
	queue
	added []reconcile.Request
}

func (r *recorded) Add(req reconcile.Request) { r.added = append(r.added, req) }

// A write the packaging API refused is said (WriteFailed, backoff through
// the error) and tried again from the catalog read, without another pull.
func TestReconcile_WriteFailedNoPullAgain(t *testing.T) {
	h := newHarness(t)
	h.failCreates, h.createErr = 1, apierrors.NewTooManyRequests("the API server is busy", 1)
	if _, err := h.reconcile(t); err == nil {
		t.Fatal("a failed write returned no error to back off with")
	}
	c := meta.FindStatusCondition(h.catalog(t).Status.Conditions, catalogsv1alpha1.TypePublished)
	if c == nil || c.Reason != catalogsv1alpha1.ReasonWriteFailed || !strings.Contains(c.Message, "may pass by itself") || !strings.Contains(c.Message, "the API server is busy") {
		t.Fatalf("condition %+v", c)
	}
	if len(h.catalog(t).Status.Refused) != 0 {
		t.Errorf("a transient failure counted as a refusal: %v", h.catalog(t).Status.Refused)
	}
	pulls := h.images.pulls
	if _, err := h.reconcile(t); err != nil {
		t.Fatal(err)
	}
	if h.images.pulls != pulls {
		t.Errorf("pulled again %d times", h.images.pulls-pulls)
	}
	cat := h.catalog(t)
	if c := meta.FindStatusCondition(cat.Status.Conditions, catalogsv1alpha1.TypePublished); c.Reason != catalogsv1alpha1.ReasonPublished || cat.Status.Packages != 1 {
		t.Errorf("status %+v", cat.Status)
	}
}

// An error that may pass by itself is no refusal of the object: a
// conflict, throttling, a timeout, a server error; a 400 or 422 is.
func TestTransient(t *testing.T) {
	t.Parallel()
	gr := schema.GroupResource{Group: "data.packaging.carvel.dev", Resource: "packages"}
	for _, tt := range []struct {
		err       error
		transient bool
	}{
		{apierrors.NewConflict(gr, "p", errors.New("changed")), true},
		{apierrors.NewTooManyRequests("busy", 1), true},
		{apierrors.NewTimeoutError("slow", 1), true},
		{apierrors.NewServerTimeout(gr, "create", 1), true},
		{apierrors.NewInternalError(errors.New("boom")), true},
		{apierrors.NewGenericServerResponse(502, "create", gr, "p", "bad gateway", 0, true), true},
		{context.DeadlineExceeded, true},
		{apierrors.NewBadRequest("no icons"), false},
		{apierrors.NewInvalid(schema.GroupKind{Group: gr.Group, Kind: "Package"}, "p", nil), false},
	} {
		if got := packagingapi.Transient(tt.err); got != tt.transient {
			t.Errorf("Transient(%v) = %v, want %v", tt.err, got, tt.transient)
		}
	}
}

// A packaging API that stops answering while catalogs are published is an
// outage: the catalog says PackagingAPIUnavailable, returns no error to
// retry hot, pulls nothing, and says it again at every look until the API
// answers; then it is published again, without a pull.
func TestReconcile_Outage(t *testing.T) {
	h := newHarness(t)
	if _, err := h.reconcile(t); err != nil {
		t.Fatal(err)
	}
	pulls := h.images.pulls
	h.failCreates = 1
	if err := h.client.Delete(context.Background(), &datav1alpha1.Package{ObjectMeta: metav1.ObjectMeta{Namespace: "ops", Name: "s.p.operators.rukpak-kapp.dev.1.0.0"}}); err != nil {
		t.Fatal(err)
	}
	h.r.changed(kindPackage, &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: "ops", Name: "s.p.operators.rukpak-kapp.dev.1.0.0"}}, true, &recorded{})
	if res, err := h.reconcile(t); err != nil || res != (reconcile.Result{}) {
		t.Fatalf("%v, %v: an outage waits for the API's return, it is not retried", res, err)
	}
	c := meta.FindStatusCondition(h.catalog(t).Status.Conditions, catalogsv1alpha1.TypePublished)
	if c == nil || c.Reason != catalogsv1alpha1.ReasonPackagingAPIUnavailable || h.r.served.Down() == "" || !strings.Contains(c.Message, "the packaging API is unavailable") ||
		!strings.Contains(c.Message, "stopped answering") {
		t.Fatalf("condition %+v, down %q: want the answer named", c, h.r.served.Down())
	}
	if _, err := h.reconcile(t); err != nil || len(h.writes) != 0 {
		t.Fatalf("a look during the outage: %v, writes %v", err, h.writes)
	}
	select {
	case <-h.r.served.Changes():
	default:
		t.Fatal("the outage woke no catalog")
	}
	h.r.served.down.Store(nil)
	if _, err := h.reconcile(t); err != nil {
		t.Fatal(err)
	}
	cat := h.catalog(t)
	if c := meta.FindStatusCondition(cat.Status.Conditions, catalogsv1alpha1.TypePublished); c.Reason != catalogsv1alpha1.ReasonPublished || cat.Status.Packages != 1 || h.images.pulls != pulls {
		t.Errorf("after the outage: status %+v, %d pulls", cat.Status, h.images.pulls-pulls)
	}
}

// A published object deleted by hand while the publication still writes
// others is written again in the same look, and the counts are of what
// exists.
func TestReconcile_DeletedDuringThePublication(t *testing.T) {
	h := newHarness(t)
	metadataName := "s.p.operators.rukpak-kapp.dev"
	q := &recorded{}
	h.onCreate = func(ctx context.Context, c client.WithWatch, o client.Object) error {
		if _, ok := o.(*datav1alpha1.Package); !ok || h.onCreate == nil {
			return nil
		}
		h.onCreate = nil
		// The PackageMetadata was written first: deleted by hand now, and
		// the watch says so.
		m := &datav1alpha1.PackageMetadata{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: "ops", Name: metadataName}, m); err != nil {
			return err
		}
		if err := c.Delete(ctx, m); err != nil {
			return err
		}
		gone := metadataOf(kindMetadata)
		gone.ObjectMeta = m.ObjectMeta
		h.r.changed(kindMetadata, gone, true, q)
		return nil
	}
	if _, err := h.reconcile(t); err != nil {
		t.Fatal(err)
	}
	if err := h.client.Get(context.Background(), client.ObjectKey{Namespace: "ops", Name: metadataName}, &datav1alpha1.PackageMetadata{}); err != nil {
		t.Fatalf("the PackageMetadata deleted during the publication: %v", err)
	}
	cat := h.catalog(t)
	if c := meta.FindStatusCondition(cat.Status.Conditions, catalogsv1alpha1.TypePublished); c == nil || c.Reason != catalogsv1alpha1.ReasonPublished ||
		cat.Status.Packages != 1 || cat.Status.PackageMetadatas != 1 {
		t.Errorf("status %+v", cat.Status)
	}
}

// One object the packaging API refuses is a refusal of its own: the rest is
// written, the catalog says which and why, and it is written again after
// failedLookAgain, twice as long after each refusal in a row, and not
// before, whatever wakes the catalog.
func TestReconcile_OneRefusedObject(t *testing.T) {
	h := newHarness(t)
	refuse := true
	h.onCreate = func(_ context.Context, _ client.WithWatch, o client.Object) error {
		if _, ok := o.(*datav1alpha1.PackageMetadata); ok && refuse {
			return apierrors.NewBadRequest("admission webhook \"packages.example.com\" denied the request: no icons")
		}
		return nil
	}
	res, err := h.reconcile(t)
	if err != nil || res.RequeueAfter != failedLookAgain {
		t.Fatalf("%v, %v: want the refused object looked at again after %s", res, err, failedLookAgain)
	}
	cat := h.catalog(t)
	c := meta.FindStatusCondition(cat.Status.Conditions, catalogsv1alpha1.TypePublished)
	if c == nil || c.Reason != catalogsv1alpha1.ReasonPublished || cat.Status.Packages != 1 || cat.Status.PackageMetadatas != 0 ||
		len(cat.Status.Refused) != 1 || !strings.Contains(cat.Status.Refused[0], "PackageMetadata s.p.operators.rukpak-kapp.dev: the packaging API refused it") ||
		!strings.Contains(c.Message, "no icons") {
		t.Fatalf("status %+v", cat.Status)
	}
	h.clock = h.clock.Add(10 * time.Second)
	if res, err := h.reconcile(t); err != nil || len(h.writes) != 0 || res.RequeueAfter != failedLookAgain-10*time.Second {
		t.Fatalf("a look before its time: %v, %v, writes %v", res, err, h.writes)
	}
	h.clock = h.clock.Add(failedLookAgain)
	if res, err := h.reconcile(t); err != nil || res.RequeueAfter != 2*failedLookAgain {
		t.Fatalf("refused again: %v, %v: want twice as long", res, err)
	}
	refuse = false
	h.clock = h.clock.Add(2 * failedLookAgain)
	if res, err := h.reconcile(t); err != nil || res.RequeueAfter != DefaultPoll {
		t.Fatalf("%v, %v", res, err)
	}
	if cat := h.catalog(t); cat.Status.PackageMetadatas != 1 || len(cat.Status.Refused) != 0 {
		t.Errorf("after the API took it: status %+v", cat.Status)
	}
}

// While the packaging API is not served, every OperatorCatalog says so,
// once: a second look writes nothing.
func TestReportWaiting(t *testing.T) {
	h := newHarness(t)
	if _, err := h.reconcile(t); err != nil {
		t.Fatal(err)
	}
	write := func(ctx context.Context, obj, before client.Object, _, _ []metav1.Condition) error {
		return h.client.Status().Patch(ctx, obj, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{}))
	}
	h.writes = nil
	if err := ReportWaiting(context.Background(), h.client, write); err != nil {
		t.Fatal(err)
	}
	cat := h.catalog(t)
	c := meta.FindStatusCondition(cat.Status.Conditions, catalogsv1alpha1.TypePublished)
	if c == nil || c.Status != metav1.ConditionFalse || c.Reason != catalogsv1alpha1.ReasonPackagingAPIUnavailable || c.ObservedGeneration != cat.Generation ||
		!strings.Contains(c.Message, "v1alpha1.data.packaging.carvel.dev") || !strings.Contains(c.Message, "as soon as the API is back") {
		t.Fatalf("condition %+v", c)
	}
	h.writes = nil
	if err := ReportWaiting(context.Background(), h.client, write); err != nil || len(h.writes) != 0 {
		t.Errorf("a second look: %v, writes %v; want none", err, h.writes)
	}
	// The API back: the controller's next look says what it publishes.
	if _, err := h.reconcile(t); err != nil {
		t.Fatal(err)
	}
	if c := meta.FindStatusCondition(h.catalog(t).Status.Conditions, catalogsv1alpha1.TypePublished); c.Reason != catalogsv1alpha1.ReasonPublished {
		t.Errorf("after the API is back: %+v", c)
	}
}

// A new digest that does not fit alongside the catalog's own last spool lets
// that one go and is read again at once; one that does not fit alongside
// other catalogs' is retried with backoff, saying so.
func TestReconcile_SpoolFull(t *testing.T) {
	h := newHarness(t)
	if _, err := h.reconcile(t); err != nil {
		t.Fatal(err)
	}
	id := client.ObjectKey{Namespace: "ops", Name: "c"}
	// Full while the catalog's last spool is kept.
	h.images.full = func() bool { return h.r.publication(id) != nil }
	h.images.digest = "sha256:2"
	h.poll()
	pulls := h.images.pulls
	if _, err := h.reconcile(t); err != nil {
		t.Fatal(err)
	}
	cat := h.catalog(t)
	if h.images.pulls != pulls+2 || cat.Status.ResolvedImage != "registry.example/catalog@sha256:2" {
		t.Fatalf("pulls %d, status %+v: want the last spool let go and the new digest read again", h.images.pulls-pulls, cat.Status)
	}
	// Full whatever it lets go: PullFailed, with the next attempt.
	h.images.full = func() bool { return true }
	h.images.digest = "sha256:1"
	h.poll()
	res, err := h.reconcile(t)
	if err != nil || res.RequeueAfter <= 0 {
		t.Fatalf("%v, %v: want a retry with backoff", res, err)
	}
	c := meta.FindStatusCondition(h.catalog(t).Status.Conditions, catalogsv1alpha1.TypePublished)
	if c == nil || c.Reason != catalogsv1alpha1.ReasonPullFailed || !strings.Contains(c.Message, "spools are full") || !strings.Contains(c.Message, "pulled again at") {
		t.Errorf("condition %+v", c)
	}
}

// The status lists the first maxRefused refusals and counts them all, the
// catalog's and the packaging API's.
func TestReport_CountsEveryRefusal(t *testing.T) {
	r := New(nil, nil, nil, nil, nil, Installs{}, NewServed(nil, func(context.Context) bool { return false }))
	p := &publication{objects: map[objKey]*entry{{kindPackage, "ok"}: {pkg: "ok", rv: "1"}}, failed: map[objKey]string{}}
	for i := range 15 {
		p.refused = append(p.refused, catalog.Refusal{Package: fmt.Sprintf("bad-%02d", i), Reason: "no version"})
		k := objKey{kindPackage, fmt.Sprintf("refused-%02d", i)}
		p.objects[k] = &entry{pkg: "x", rv: "1"}
		p.failed[k] = "denied"
	}
	cat := &catalogsv1alpha1.OperatorCatalog{ObjectMeta: metav1.ObjectMeta{Generation: 1}}
	r.report(cat, "registry.example/catalog@sha256:1", p)
	c := meta.FindStatusCondition(cat.Status.Conditions, catalogsv1alpha1.TypePublished)
	if len(cat.Status.Refused) != maxRefused || c == nil || !strings.Contains(c.Message, "30 refused") || cat.Status.Packages != 1 {
		t.Errorf("refused %d, condition %+v, packages %d: want %d listed, 30 counted, 1 published", len(cat.Status.Refused), c, cat.Status.Packages, maxRefused)
	}
}

// mustEntry is version's entry of catalogOf's channel.
func mustEntry(version string) catalog.Entry {
	return catalog.Entry{Package: "p", Channel: "s", Bundle: "p." + version, Version: version, RefName: "s.p.operators.rukpak-kapp.dev"}
}

// installOf is a BundleDeployment that installs version of catalogOf's
// channel from the Packages of namespace ns.
func installOf(version, ns string) *rukpakv1alpha2.BundleDeployment {
	ann := mustEntry(version).Annotations()
	ann[catalog.AnnotationPackagesNS] = ns
	return &rukpakv1alpha2.BundleDeployment{ObjectMeta: metav1.ObjectMeta{Name: "p-install", Labels: map[string]string{catalog.LabelPackage: "p"}, Annotations: ann}}
}

// retracted lists the Packages in ops as version:revision that retracted
// it ("" none), by version.
func retracted(t *testing.T, h *harness) string {
	t.Helper()
	var pkgs datav1alpha1.PackageList
	if err := h.client.List(context.Background(), &pkgs, client.InNamespace("ops")); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, p := range pkgs.Items {
		out = append(out, p.Spec.Version+":"+p.Annotations[catalog.AnnotationRetracted])
	}
	slices.Sort(out)
	return strings.Join(out, ",")
}

// A Package the catalog's new revision no longer holds is kept while an
// install runs it, and only then: an install that asks for a version it
// does not run (kapp-controller's pick, held or not yet walked to) keeps
// nothing, so kapp-controller picks again among what is published; what a
// held install runs is kept; the step an install's BundleDeployment is
// writing is kept.
func TestRetract_KeepsWhatRunsOnly(t *testing.T) {
	install := func(name, runs, asks string) *catalogsv1alpha1.OperatorInstall {
		oi := &catalogsv1alpha1.OperatorInstall{ObjectMeta: metav1.ObjectMeta{Namespace: "ops", Name: name, Labels: map[string]string{catalog.LabelPackage: "p"}},
			Spec: catalogsv1alpha1.OperatorInstallSpec{PackageName: "p", Channel: "s", RefName: mustEntry(asks).RefName, Version: asks, Bundle: "p." + asks}}
		if runs != "" {
			oi.Status.Installed = &catalogsv1alpha1.BundleVersion{Bundle: "p." + runs, Version: runs}
		}
		return oi
	}
	writing := install("writing", "", "1.0.2")
	step := &rukpakv1alpha2.BundleDeployment{ObjectMeta: metav1.ObjectMeta{Name: "writing.ops", Labels: map[string]string{catalog.LabelPackage: "p"},
		Annotations: map[string]string{catalog.AnnotationOperatorInstall: "ops/writing", catalog.AnnotationBundle: "p.1.0.2", catalog.AnnotationVersion: "1.0.2"}}}
	h := newHarness(t, install("held", "1.0.0", "1.0.1"), writing, step)
	h.images.catalogs["sha256:1"] = catalogOf("1.0.0", "1.0.1", "1.0.2", "1.0.3")
	h.images.catalogs["sha256:2"] = catalogOf("1.1.0")
	if _, err := h.reconcile(t); err != nil {
		t.Fatal(err)
	}
	h.images.digest = "sha256:2"
	h.poll()
	if _, err := h.reconcile(t); err != nil {
		t.Fatal(err)
	}
	if got := retracted(t, h); got != "1.0.0:registry.example/catalog@sha256:2,1.0.2:registry.example/catalog@sha256:2,1.1.0:" {
		t.Errorf("Packages after the move (version:retracted in): %s; want 1.0.0 (held, runs) and 1.0.2 (being written) kept, 1.0.1 (only asked) and 1.0.3 withdrawn", got)
	}
}

// The tag is looked up at the catalog's poll and when its spec changes,
// not at every look: the looks an outage's end, a published object's event
// or a failed write make use the digest found last, so an API that fails
// every write while it answers the probe costs the registry nothing.
func TestReconcile_LooksUpAtPollOnly(t *testing.T) {
	h := newHarness(t)
	if _, err := h.reconcile(t); err != nil || h.images.lookups != 1 {
		t.Fatalf("%v, %d lookups", err, h.images.lookups)
	}
	unavailable := apierrors.NewServiceUnavailable("writes fail")
	for range 10 {
		// A write fails as the API goes; it answers again; the catalog is
		// woken and its write fails again.
		h.failCreates, h.createErr = 1, unavailable
		if err := h.client.Delete(context.Background(), &datav1alpha1.Package{ObjectMeta: metav1.ObjectMeta{Namespace: "ops", Name: "s.p.operators.rukpak-kapp.dev.1.0.0"}}); client.IgnoreNotFound(err) != nil {
			t.Fatal(err)
		}
		h.r.changed(kindPackage, &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: "ops", Name: "s.p.operators.rukpak-kapp.dev.1.0.0"}}, true, &recorded{})
		if _, err := h.reconcile(t); err != nil {
			t.Fatal(err)
		}
		h.r.served.down.Store(nil)
		h.clock = h.clock.Add(10 * time.Second)
	}
	if h.images.lookups != 1 {
		t.Errorf("%d lookups in ten outages within a poll, want 1", h.images.lookups)
	}
	h.poll()
	if _, err := h.reconcile(t); err != nil || h.images.lookups != 2 {
		t.Errorf("at the poll: %v, %d lookups, want 2", err, h.images.lookups)
	}
	cat := h.catalog(t)
	cat.Generation++
	if err := h.client.Update(context.Background(), cat); err != nil {
		t.Fatal(err)
	}
	if _, err := h.reconcile(t); err != nil || h.images.lookups != 3 {
		t.Errorf("after a spec change: %v, %d lookups, want 3", err, h.images.lookups)
	}
}
