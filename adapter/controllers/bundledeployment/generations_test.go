package bundledeployment

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	kappctrlv1alpha1 "carvel.dev/kapp-controller/pkg/apis/kappctrl/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/internal/kube"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/internal/scope"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/translate"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/v1alpha1/deployments"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/v1alpha1/deployments/templates"
	rukpakv1alpha1 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha1"
	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
)

// fakeBundles is deployments' BundleSet over an in-memory list: the BundleDeployment reconciler
// runs with the v1alpha1 serving it is given in production, over Bundles
// that need no API server.
type fakeBundles struct {
	*calls
	listed  []rukpakv1alpha1.Bundle
	err     error
	blocked bool
	// reported is the last status Report was given.
	reported *rukpakv1alpha1.BundleStatus
}

func (f *fakeBundles) List(_ context.Context, bd *rukpakv1alpha1.BundleDeployment) (*scope.Generated, error) {
	f.add("store.List")
	g := &scope.Generated{BD: bd, Listed: f.listed}
	switch {
	case f.err != nil:
		g.Failure = f.err.Error()
		return g, f.err
	case f.blocked:
		g.Failure = templates.ErrMaxGenerated
		return g, nil
	}
	gen := templates.Generate(bd, f.listed)
	g.Bundle, g.Missing = gen.Current, gen.Create
	return g, nil
}

func (f *fakeBundles) Make(_ context.Context, g *scope.Generated, makeMissing bool) error {
	f.add(fmt.Sprintf("store.Make makeMissing=%v", makeMissing))
	if g.Missing != nil && makeMissing {
		g.Bundle, g.Missing = g.Missing, nil
		f.listed = append(f.listed, *g.Bundle)
		g.Listed = f.listed
	}
	return nil
}

func (f *fakeBundles) Report(_ context.Context, b *rukpakv1alpha1.Bundle, st rukpakv1alpha1.BundleStatus) error {
	f.add("store.Report " + st.Phase)
	f.reported = &st
	return nil
}

func (f *fakeBundles) Prune(_ context.Context, _ *rukpakv1alpha1.BundleDeployment, _ []rukpakv1alpha1.Bundle, current string) error {
	f.add("store.Prune")
	return nil
}

// deployingApp is an App mode whose App kapp-controller deployed (or not) for
// the scope's generation.
type deployingApp struct {
	fakeApp
	deployed bool
}

func (d deployingApp) Install(ctx context.Context, s *scope.Scope) scope.Outcome {
	d.fakeApp.Install(ctx, s)
	app := &kappctrlv1alpha1.App{ObjectMeta: metav1.ObjectMeta{Name: s.BD.Name, Generation: 1,
		Annotations: map[string]string{rukpakv1alpha2.AnnotationBundleGeneration: fmt.Sprint(s.BD.Generation)}}}
	app.Status.ObservedGeneration = 1
	if d.deployed {
		app.Status.Conditions = []kappctrlv1alpha1.Condition{{Type: kappctrlv1alpha1.ReconcileSucceeded, Status: corev1.ConditionTrue}}
	}
	s.Facts.App = app
	return scope.Outcome{}
}

// v1alpha1Fixture is a BundleDeploymentReconciler serving rukpak's first API, whose status
// writes at v1alpha1 (made through the conversion webhook on a real API
// server) are caught.
type v1alpha1Fixture struct {
	r        *BundleDeploymentReconciler
	c        client.Client
	log      *calls
	bundles  *fakeBundles
	written  *rukpakv1alpha1.BundleDeploymentStatus
	v1alpha2 int
}

func v1alpha1Setup(t *testing.T, app AppMode, log *calls, b *fakeBundles, bd *rukpakv1alpha1.BundleDeployment) *v1alpha1Fixture {
	t.Helper()
	f := &v1alpha1Fixture{log: log, bundles: b}
	s := testScheme(t)
	if err := rukpakv1alpha1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	stored := rukpakv1alpha1.ToV1alpha2(bd)
	stored.Finalizers = []string{kube.Finalizer}
	f.c = fake.NewClientBuilder().WithScheme(s).WithObjects(stored).WithStatusSubresource(&rukpakv1alpha2.BundleDeployment{}).
		WithInterceptorFuncs(interceptor.Funcs{SubResourcePatch: func(ctx context.Context, c client.Client, sub string, o client.Object, p client.Patch, opts ...client.SubResourcePatchOption) error {
			switch o := o.(type) {
			case *rukpakv1alpha1.BundleDeployment:
				f.written = o.Status.DeepCopy()
				return nil
			case *rukpakv1alpha2.BundleDeployment:
				f.v1alpha2++
			}
			return c.SubResource(sub).Patch(ctx, o, p, opts...)
		}}).Build()
	classes, err := ParseClasses([]string{rukpakv1alpha2.ClassPlain, rukpakv1alpha2.ClassRegistry})
	if err != nil {
		t.Fatal(err)
	}
	set := Settings{Config: translate.Config{SystemNamespace: "rukpak-system"}, Classes: classes}
	f.r = New(f.c, f.c, nil, set, app, fakeServe{calls: log, leaveGone: true}, fakeContent{log}, kappAPI{ready: true}, nil).
		WithBundles(deployments.NewV1alpha1(f.c, nil, b, set.Config.SystemNamespace, set.Config.ContentAddress))
	return f
}

func v1alpha1Of(name string, src rukpakv1alpha1.BundleSource) *rukpakv1alpha1.BundleDeployment {
	return &rukpakv1alpha1.BundleDeployment{
		ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID("uid-" + name), Generation: 1},
		Spec: rukpakv1alpha1.BundleDeploymentSpec{ProvisionerClassName: rukpakv1alpha1.ClassPlain, Template: rukpakv1alpha1.BundleTemplate{
			Spec: rukpakv1alpha1.BundleSpec{ProvisionerClassName: rukpakv1alpha1.ClassRegistry, Source: src}}},
	}
}

var imageV1alpha1 = rukpakv1alpha1.BundleSource{Type: rukpakv1alpha1.SourceTypeImage, Image: &rukpakv1alpha1.ImageSource{Ref: "registry.example/b:v1"}}

func condOf(st *rukpakv1alpha1.BundleDeploymentStatus, t string) string {
	if st == nil {
		return "no status written"
	}
	c := apimeta.FindStatusCondition(st.Conditions, t)
	if c == nil {
		return "no " + t
	}
	return fmt.Sprintf("%s/%s: %s", c.Status, c.Reason, c.Message)
}

func TestReconcile_V1alpha1InstallsAfterItsBundleAndReportsAtV1alpha1(t *testing.T) {
	t.Parallel()
	log := &calls{}
	b := &fakeBundles{calls: log}
	bd := v1alpha1Of("a", imageV1alpha1)
	f := v1alpha1Setup(t, deployingApp{fakeApp: fakeApp{calls: log}, deployed: true}, log, b, bd)
	if _, err := f.r.Reconcile(context.Background(), reconcile.Request{NamespacedName: client.ObjectKey{Name: "a"}}); err != nil {
		t.Fatal(err)
	}
	// The App mode installs the template's class, as rukpak v0.16 wired
	// registry+v1; superseded Bundles go once the App deployed this one.
	expectCalls(t, log, "store.List", "store.Make makeMissing=true", "serve.Leave", "app.Install "+rukpakv1alpha2.ClassRegistry,
		"store.Report Unpacked", "store.Prune")
	name := templates.Desired(bd).Name
	if got := condOf(f.written, "Installed"); got != "True/InstallationSucceeded: Instantiated bundle "+name+" successfully" {
		t.Errorf("Installed: %s", got)
	}
	if got := condOf(f.written, "HasValidBundle"); !strings.HasPrefix(got, "True/UnpackSuccessful") {
		t.Errorf("HasValidBundle: %s", got)
	}
	if f.written.ActiveBundle != name || f.v1alpha2 != 0 {
		t.Errorf("activeBundle %q; %d status writes at v1alpha2", f.written.ActiveBundle, f.v1alpha2)
	}
}

func TestReconcile_V1alpha1NotYetDeployedKeepsTheOldBundle(t *testing.T) {
	t.Parallel()
	log := &calls{}
	b := &fakeBundles{calls: log}
	f := v1alpha1Setup(t, deployingApp{fakeApp: fakeApp{calls: log}}, log, b, v1alpha1Of("a", imageV1alpha1))
	if _, err := f.r.Reconcile(context.Background(), reconcile.Request{NamespacedName: client.ObjectKey{Name: "a"}}); err != nil {
		t.Fatal(err)
	}
	// The BundleDeployment's progress is held, as any; its new Bundle says
	// Pending at once. Nothing is pruned.
	expectCalls(t, log, "store.List", "store.Make makeMissing=true", "serve.Leave", "app.Install "+rukpakv1alpha2.ClassRegistry, "store.Report Pending")
	if f.written != nil {
		t.Errorf("progress written: %+v", f.written)
	}
}

func TestReconcile_V1alpha1UploadIsRefusedOnTheBundle(t *testing.T) {
	t.Parallel()
	log := &calls{}
	b := &fakeBundles{calls: log}
	upload := rukpakv1alpha1.BundleSource{Type: rukpakv1alpha1.SourceTypeUpload, Upload: &rukpakv1alpha1.UploadSource{}}
	f := v1alpha1Setup(t, fakeApp{calls: log}, log, b, v1alpha1Of("a", upload))
	_, err := f.r.Reconcile(context.Background(), reconcile.Request{NamespacedName: client.ObjectKey{Name: "a"}})
	if !errors.Is(err, reconcile.TerminalError(nil)) {
		t.Fatalf("err = %v, want terminal: only a new template helps", err)
	}
	expectCalls(t, log, "store.List", "store.Make makeMissing=true", "store.Report Failing")
	if got := condOf(f.written, "HasValidBundle"); !strings.HasPrefix(got, "False/UnpackFailed: Failed to unpack the") || !strings.Contains(got, `"upload" is not served`) {
		t.Errorf("HasValidBundle: %s", got)
	}
	if got := condOf(f.written, "Installed"); got != "no Installed" {
		t.Errorf("Installed: %s", got)
	}
}

func TestReconcile_V1alpha1WithoutItsBundleInstallsNothing(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		bundles  *fakeBundles
		wantErr  bool
		wantCond string
		// A read that fails makes nothing: the run stops before any step.
		wantCalls []string
	}{
		{name: "the Bundle limit", bundles: &fakeBundles{blocked: true}, wantCond: "Unknown/ReconcileFailed: " + templates.ErrMaxGenerated,
			wantCalls: []string{"store.List", "store.Make makeMissing=true"}},
		{name: "a failed read", bundles: &fakeBundles{err: errors.New("etcd is slow")}, wantErr: true, wantCond: "Unknown/ReconcileFailed: etcd is slow",
			wantCalls: []string{"store.List"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			log := &calls{}
			tc.bundles.calls = log
			f := v1alpha1Setup(t, fakeApp{calls: log}, log, tc.bundles, v1alpha1Of("a", imageV1alpha1))
			_, err := f.r.Reconcile(context.Background(), reconcile.Request{NamespacedName: client.ObjectKey{Name: "a"}})
			if (err != nil) != tc.wantErr || errors.Is(err, reconcile.TerminalError(nil)) {
				t.Fatalf("err = %v", err)
			}
			expectCalls(t, log, tc.wantCalls...)
			if got := condOf(f.written, "HasValidBundle"); got != tc.wantCond {
				t.Errorf("HasValidBundle: %s", got)
			}
		})
	}
}

func TestReconcile_V1alpha2IsNotGenerated(t *testing.T) {
	t.Parallel()
	log := &calls{}
	b := &fakeBundles{calls: log}
	f := v1alpha1Setup(t, fakeApp{calls: log}, log, b, v1alpha1Of("other", imageV1alpha1))
	v2 := newBD("a", rukpakv1alpha2.ClassPlain, kube.Finalizer)
	if err := f.c.Create(context.Background(), v2); err != nil {
		t.Fatal(err)
	}
	if _, err := f.r.Reconcile(context.Background(), reconcile.Request{NamespacedName: client.ObjectKey{Name: "a"}}); err != nil {
		t.Fatal(err)
	}
	expectCalls(t, log, "serve.Leave", "app.Install "+rukpakv1alpha2.ClassPlain)
}
