package operatorinstall

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	packagingv1alpha1 "carvel.dev/kapp-controller/pkg/apis/packaging/v1alpha1"
	datav1alpha1 "carvel.dev/kapp-controller/pkg/apiserver/apis/datapackaging/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/catalog"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/controllers/operatorinstall/plan"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/packagingapi"
	catalogsv1alpha1 "github.com/rukpak-kapp/rukpak-kapp/api/catalogs/v1alpha1"
	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
	"github.com/rukpak-kapp/rukpak-kapp/convert"
)

// channels is a channel in memory.
type channels struct{ g packagingapi.Graph }

func (c channels) Channel(context.Context, string, string) (packagingapi.Graph, error) {
	return c.g, nil
}
func (c channels) Offers(context.Context, string, []string) ([]catalog.Offer, error) { return nil, nil }
func (channels) Sees(ns string, o client.Object) bool                                { return o.GetNamespace() == ns }
func (channels) InGlobal(client.Object) bool                                         { return false }
func (channels) Global() string                                                      { return "" }

// met is a cluster that meets every requirement.
type met struct{}

func (met) Unmet(context.Context, string, []convert.Dependency) ([]convert.Unmet, error) {
	return nil, nil
}

func stable(versions ...string) packagingapi.Graph {
	g := packagingapi.Graph{Retracted: map[string]string{}}
	prev := ""
	for _, v := range versions {
		e := catalog.Entry{Package: "efs", Channel: "stable", Bundle: "efs.v" + v, Version: v, Replaces: prev, RefName: "stable.efs.example.com"}
		g.Nodes = append(g.Nodes, catalog.Node{Entry: e, Image: "reg/efs:" + v})
		prev = e.Bundle
	}
	return g
}

type fixture struct {
	c      client.Client
	r      *Reconciler
	writes []string
}

func newFixture(t *testing.T, g packagingapi.Graph, objs ...client.Object) *fixture {
	t.Helper()
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{catalogsv1alpha1.AddToScheme, rukpakv1alpha2.AddToScheme, packagingv1alpha1.AddToScheme, datav1alpha1.AddToScheme, corev1.AddToScheme} {
		if err := add(scheme); err != nil {
			t.Fatal(err)
		}
	}
	f := &fixture{}
	base := fake.NewClientBuilder().WithScheme(scheme).WithObjects(objs...).WithStatusSubresource(&catalogsv1alpha1.OperatorInstall{}, &rukpakv1alpha2.BundleDeployment{}).Build()
	f.c = interceptor.NewClient(base.(client.WithWatch), interceptor.Funcs{
		Patch: func(ctx context.Context, c client.WithWatch, o client.Object, p client.Patch, opts ...client.PatchOption) error {
			f.writes = append(f.writes, "patch "+o.GetName())
			return c.Patch(ctx, o, p, opts...)
		},
		Apply: func(ctx context.Context, c client.WithWatch, obj runtime.ApplyConfiguration, opts ...client.ApplyOption) error {
			f.writes = append(f.writes, "apply")
			return c.Apply(ctx, obj, opts...)
		},
		Delete: func(ctx context.Context, c client.WithWatch, o client.Object, opts ...client.DeleteOption) error {
			f.writes = append(f.writes, "delete "+o.GetName())
			return c.Delete(ctx, o, opts...)
		},
		SubResourcePatch: func(ctx context.Context, c client.Client, sub string, o client.Object, p client.Patch, opts ...client.SubResourcePatchOption) error {
			f.writes = append(f.writes, "status "+o.GetName())
			return c.SubResource(sub).Patch(ctx, o, p, opts...)
		},
	})
	status := func(ctx context.Context, obj, before client.Object, _, _ []metav1.Condition) error {
		return f.c.Status().Patch(ctx, obj, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{}))
	}
	f.r = New(f.c, f.c, f.c, channels{g}, met{}, status, nil, 5*time.Minute)
	f.r.now = func() time.Time { return time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC) }
	return f
}

func (f *fixture) reconcile(t *testing.T) reconcile.Result {
	t.Helper()
	f.writes = nil
	res, err := f.r.Reconcile(context.Background(), reconcile.Request{NamespacedName: client.ObjectKey{Namespace: "ops", Name: "efs"}})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func (f *fixture) install(t *testing.T) *catalogsv1alpha1.OperatorInstall {
	t.Helper()
	oi := &catalogsv1alpha1.OperatorInstall{}
	if err := f.c.Get(context.Background(), client.ObjectKey{Namespace: "ops", Name: "efs"}, oi); err != nil {
		t.Fatal(err)
	}
	return oi
}

func (f *fixture) bd(t *testing.T) *rukpakv1alpha2.BundleDeployment {
	t.Helper()
	bd := &rukpakv1alpha2.BundleDeployment{}
	if err := f.c.Get(context.Background(), client.ObjectKey{Name: "efs.ops"}, bd); err != nil {
		t.Fatal(err)
	}
	return bd
}

// deploy says, as the BundleDeployment reconciler would, that the
// BundleDeployment's generation is installed and healthy.
func (f *fixture) deploy(t *testing.T) {
	t.Helper()
	bd := f.bd(t)
	before := bd.DeepCopy()
	for _, c := range []string{rukpakv1alpha2.TypeInstalled, rukpakv1alpha2.TypeHealthy} {
		apimeta.SetStatusCondition(&bd.Status.Conditions, metav1.Condition{Type: c, Status: metav1.ConditionTrue, Reason: "Done", Message: c, ObservedGeneration: bd.Generation})
	}
	if err := f.c.Status().Patch(context.Background(), bd, client.MergeFrom(before)); err != nil {
		t.Fatal(err)
	}
}

func newInstall(version string) *catalogsv1alpha1.OperatorInstall {
	return &catalogsv1alpha1.OperatorInstall{ObjectMeta: metav1.ObjectMeta{Namespace: "ops", Name: "efs", Generation: 1, Labels: map[string]string{catalog.LabelPackage: "efs"}},
		Spec: catalogsv1alpha1.OperatorInstallSpec{PackageName: "efs", Channel: "stable", RefName: "stable.efs.example.com", Version: version, Bundle: "efs.v" + version,
			Image: "reg/efs:" + version, InstallNamespace: "efs-op"}}
}

func condition(oi *catalogsv1alpha1.OperatorInstall, t string) string {
	c := apimeta.FindStatusCondition(oi.Status.Conditions, t)
	if c == nil {
		return ""
	}
	return string(c.Status) + " " + c.Reason
}

// An install writes its BundleDeployment, records each step of a walk in
// its status before the BundleDeployment moves to it, reports Installed
// only once the BundleDeployment installed the version asked for, and on
// delete removes the BundleDeployment before it lets go.
func TestReconcile_InstallWalkDelete(t *testing.T) {
	t.Parallel()
	f := newFixture(t, stable("1.0.0", "1.1.0", "1.2.0"), newInstall("1.0.0"))
	f.reconcile(t)
	if got := strings.Join(f.writes, ","); got != "patch efs,status efs,apply" {
		t.Errorf("first look wrote %s: want the finalizer, what runs (nothing), then the BundleDeployment", got)
	}
	if bd := f.bd(t); bd.Spec.Source.Image.Ref != "reg/efs:1.0.0" || bd.Annotations[catalog.AnnotationOperatorInstall] != "ops/efs" {
		t.Fatalf("BundleDeployment %+v", bd.ObjectMeta)
	}
	if got := condition(f.install(t), catalogsv1alpha1.TypeInstalled); got != "Unknown Installing" {
		t.Errorf("Installed %s before the BundleDeployment installed anything", got)
	}
	f.deploy(t)
	f.reconcile(t)
	oi := f.install(t)
	if got := condition(oi, catalogsv1alpha1.TypeInstalled); got != "True InstallationSucceeded" || oi.Status.Installed.Version != "1.0.0" {
		t.Fatalf("Installed %s, installed %+v", got, oi.Status.Installed)
	}
	if got := condition(oi, catalogsv1alpha1.TypeUpgradeAvailable); got != "True UpgradeAvailable" {
		t.Errorf("UpgradeAvailable %s", got)
	}

	// kapp-controller's template moves the install to 1.2.0, two edges on.
	oi.Spec.Version, oi.Spec.Bundle, oi.Spec.Image, oi.Generation = "1.2.0", "efs.v1.2.0", "reg/efs:1.2.0", 2
	if err := f.c.Update(context.Background(), oi); err != nil {
		t.Fatal(err)
	}
	f.reconcile(t)
	if got := strings.Join(f.writes, ","); got != "status efs,apply" {
		t.Errorf("the walk's first step wrote %s: want the status first, then the BundleDeployment", got)
	}
	if bd := f.bd(t); bd.Spec.Source.Image.Ref != "reg/efs:1.1.0" {
		t.Fatalf("step %s, want 1.1.0", bd.Spec.Source.Image.Ref)
	}
	if got := condition(f.install(t), catalogsv1alpha1.TypeInstalled); got != "True InstallationSucceeded" {
		t.Errorf("Installed %s: the generation before stays said while the walk is under way", got)
	}
	f.deploy(t)
	f.reconcile(t)
	if bd := f.bd(t); bd.Spec.Source.Image.Ref != "reg/efs:1.2.0" {
		t.Fatalf("step %s, want 1.2.0", bd.Spec.Source.Image.Ref)
	}
	if oi := f.install(t); oi.Status.Installed.Version != "1.1.0" || oi.Status.Walk == nil || oi.Status.Walk.Step != 2 {
		t.Errorf("status %+v, walk %+v: 1.1.0 recorded installed before the BundleDeployment moved on", oi.Status.Installed, oi.Status.Walk)
	}
	f.deploy(t)
	f.reconcile(t)
	oi = f.install(t)
	installed := apimeta.FindStatusCondition(oi.Status.Conditions, catalogsv1alpha1.TypeInstalled)
	if installed.Status != metav1.ConditionTrue || installed.ObservedGeneration != 2 || !strings.Contains(installed.Message, "1.0.0 → 1.1.0 → 1.2.0") {
		t.Errorf("Installed %+v", installed)
	}
	if f.reconcile(t); len(f.writes) != 0 {
		t.Errorf("at rest the install wrote %v", f.writes)
	}

	// Deleted: the BundleDeployment goes first.
	if err := f.c.Delete(context.Background(), oi); err != nil {
		t.Fatal(err)
	}
	f.reconcile(t)
	if got := strings.Join(f.writes, ","); !strings.HasPrefix(got, "delete efs.ops") {
		t.Errorf("the delete wrote %s", got)
	}
	if err := f.c.Get(context.Background(), client.ObjectKey{Name: "efs.ops"}, &rukpakv1alpha2.BundleDeployment{}); !apierrors.IsNotFound(err) {
		t.Fatalf("BundleDeployment: %v", err)
	}
	f.reconcile(t)
	if err := f.c.Get(context.Background(), client.ObjectKey{Namespace: "ops", Name: "efs"}, &catalogsv1alpha1.OperatorInstall{}); !apierrors.IsNotFound(err) {
		t.Errorf("the install stays: %v", err)
	}
}

// A BundleDeployment a catalog Package's template made for the install's
// PackageInstall is adopted in place: its spec untouched, so its
// generation stays and its App is not written again; one of another
// install is left alone and named.
func TestReconcile_AdoptsWhatTheTemplateMade(t *testing.T) {
	t.Parallel()
	legacy := plan.BundleDeployment(newInstall("1.0.0"), plan.Step{Entry: catalog.Entry{Package: "efs", Channel: "stable", Bundle: "efs.v1.0.0", Version: "1.0.0"}, Image: "reg/efs:1.0.0"})
	delete(legacy.Annotations, catalog.AnnotationOperatorInstall)
	delete(legacy.Annotations, catalog.AnnotationOperatorInstallGeneration)
	legacy.Labels["kapp.k14s.io/app"] = "1234"
	legacy.Annotations[catalog.AnnotationPackagesNS], legacy.Annotations[catalog.AnnotationInstall] = "ops", "efs"
	legacy.Annotations[catalog.AnnotationUpgradeApproval] = "Automatic"
	legacy.Generation = 4
	legacy.Status.Conditions = []metav1.Condition{{Type: rukpakv1alpha2.TypeInstalled, Status: metav1.ConditionTrue, Reason: "Done", Message: "installed", ObservedGeneration: 4}}
	f := newFixture(t, stable("1.0.0"), newInstall("1.0.0"), legacy)
	f.reconcile(t)
	bd := f.bd(t)
	if bd.Annotations[catalog.AnnotationOperatorInstall] != "ops/efs" || bd.Labels["kapp.k14s.io/app"] != "" || bd.Annotations[catalog.AnnotationUpgradeApproval] != "" {
		t.Errorf("adopted %+v", bd.ObjectMeta)
	}
	if bd.Generation != 4 || bd.Spec.Source.Image.Ref != "reg/efs:1.0.0" {
		t.Errorf("generation %d, image %s: the spec changed", bd.Generation, bd.Spec.Source.Image.Ref)
	}
	oi := f.install(t)
	if oi.Status.Installed == nil || oi.Status.Installed.Version != "1.0.0" {
		t.Errorf("installed %+v: the adopted BundleDeployment's version runs", oi.Status.Installed)
	}

	other := legacy.DeepCopy()
	other.ResourceVersion = ""
	other.Annotations[catalog.AnnotationInstall] = "another"
	g := newFixture(t, stable("1.0.0"), newInstall("1.0.0"), other)
	g.reconcile(t)
	if got := condition(g.install(t), catalogsv1alpha1.TypeInstalled); got != "False InstallFailed" ||
		!strings.Contains(apimeta.FindStatusCondition(g.install(t).Status.Conditions, catalogsv1alpha1.TypeInstalled).Message, "is not this install's") {
		t.Errorf("Installed %s over another's BundleDeployment", got)
	}
	if bd := g.bd(t); bd.Annotations[catalog.AnnotationOperatorInstall] != "" {
		t.Error("another's BundleDeployment was written over")
	}
}

func TestLookAgain(t *testing.T) {
	now := time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)
	installed := func(st metav1.ConditionStatus, ago time.Duration) *catalogsv1alpha1.OperatorInstall {
		oi := &catalogsv1alpha1.OperatorInstall{ObjectMeta: metav1.ObjectMeta{Generation: 2}}
		oi.Status.Conditions = []metav1.Condition{{Type: catalogsv1alpha1.TypeInstalled, Status: st, ObservedGeneration: 2, LastTransitionTime: metav1.NewTime(now.Add(-ago))}}
		return oi
	}
	for _, tc := range []struct {
		name string
		oi   *catalogsv1alpha1.OperatorInstall
		p    plan.Plan
		o    plan.Outcome
		want time.Duration
	}{
		{name: "nothing to wait for", oi: installed(metav1.ConditionTrue, time.Hour)},
		{name: "a requirement no Package meets waits for a Package's event", oi: installed(metav1.ConditionFalse, time.Minute),
			o: plan.Outcome{Deps: plan.Dependencies{Unmet: "cannot be met", Refused: true}}},
		{name: "a ServiceAccount missing, just now", oi: installed(metav1.ConditionFalse, 0),
			o: plan.Outcome{Deps: plan.Dependencies{Unmet: "no ServiceAccount"}}, want: 10 * time.Second},
		{name: "a ServiceAccount missing for a minute", oi: installed(metav1.ConditionFalse, time.Minute),
			o: plan.Outcome{Deps: plan.Dependencies{Unmet: "no ServiceAccount"}}, want: time.Minute},
		{name: "a ServiceAccount missing for a day", oi: installed(metav1.ConditionFalse, 24*time.Hour),
			o: plan.Outcome{Deps: plan.Dependencies{Unmet: "no ServiceAccount"}}, want: 10 * time.Minute},
		{name: "an upgrade waiting for a dependency while the last generation runs", oi: installed(metav1.ConditionTrue, 24*time.Hour),
			o: plan.Outcome{Deps: plan.Dependencies{Installing: "waiting for PackageInstall"}}, want: 10 * time.Second},
		{name: "kapp-controller's pick awaited for 30 s", oi: installed(metav1.ConditionUnknown, 30*time.Second),
			p: plan.Plan{Waiting: "waiting for the pick", WaitingReason: catalogsv1alpha1.ReasonInstalling}, want: 30 * time.Second},
		{name: "kapp-controller's pick awaited while the last generation runs", oi: installed(metav1.ConditionTrue, 24*time.Hour),
			p: plan.Plan{Waiting: "waiting for the pick", WaitingReason: catalogsv1alpha1.ReasonInstalling}, want: time.Minute},
		{name: "a gate's bound comes first", oi: installed(metav1.ConditionUnknown, time.Hour),
			p: plan.Plan{LookAgain: 3 * time.Second}, o: plan.Outcome{Deps: plan.Dependencies{Installing: "waiting"}}, want: 3 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := (&Reconciler{}).lookAgain(plan.Facts{Install: tc.oi, Now: now}, tc.p, tc.o)
			if got != tc.want {
				t.Errorf("lookAgain = %v, want %v", got, tc.want)
			}
		})
	}
}

// A delete that orphans the install's dependents (the API server's
// finalizer orphan) leaves the BundleDeployment in place.
func TestReconcile_OrphaningDeleteKeepsTheBundleDeployment(t *testing.T) {
	t.Parallel()
	f := newFixture(t, stable("1.0.0"), newInstall("1.0.0"))
	f.reconcile(t)
	f.deploy(t)
	f.reconcile(t)
	oi := f.install(t)
	oi.Finalizers = append(oi.Finalizers, metav1.FinalizerOrphanDependents)
	if err := f.c.Update(context.Background(), oi); err != nil {
		t.Fatal(err)
	}
	if err := f.c.Delete(context.Background(), oi); err != nil {
		t.Fatal(err)
	}
	f.reconcile(t)
	if got := strings.Join(f.writes, ","); got != "patch efs" {
		t.Errorf("the orphaning delete wrote %s: want only the install's finalizer removed", got)
	}
	if bd := f.bd(t); !bd.DeletionTimestamp.IsZero() {
		t.Errorf("BundleDeployment deleted")
	}
	if oi := f.install(t); !slices.Equal(oi.Finalizers, []string{metav1.FinalizerOrphanDependents}) {
		t.Errorf("finalizers %v: the garbage collector's stays for it to remove", oi.Finalizers)
	}
}
