package bundledeployment

import (
	"context"
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"
	"unsafe"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	kappctrlv1alpha1 "carvel.dev/kapp-controller/pkg/apis/kappctrl/v1alpha1"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/internal/kube"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/internal/scope"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/translate"
	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
)

// calls records what the fake modes were asked to do, in order.
type calls struct{ log []string }

func (c *calls) add(s string) { c.log = append(c.log, s) }

type fakeApp struct {
	*calls
	install      scope.Outcome
	releaseDone  bool
	finalizeGone bool
}

func (f fakeApp) Install(_ context.Context, s *scope.Scope) scope.Outcome {
	f.add("app.Install " + s.View.Spec.ProvisionerClassName)
	return f.install
}
func (f fakeApp) Release(context.Context, *scope.Scope) (bool, error) {
	f.add("app.Release")
	return f.releaseDone, nil
}
func (f fakeApp) Finalize(context.Context, *scope.Scope) (bool, error) {
	f.add("app.Finalize")
	return f.finalizeGone, nil
}

type fakeServe struct {
	*calls
	leaveGone, finalizeWaits bool
}

func (f fakeServe) Install(context.Context, *scope.Scope) scope.Outcome {
	f.add("serve.Install")
	return scope.Outcome{}
}
func (f fakeServe) Leave(context.Context, *scope.Scope) (bool, error) {
	f.add("serve.Leave")
	return f.leaveGone, nil
}
func (f fakeServe) Finalize(context.Context, *scope.Scope) (bool, error) {
	f.add("serve.Finalize")
	return f.finalizeWaits, nil
}
func (f fakeServe) Forget(name string, _ types.UID) { f.add("serve.Forget " + name) }

type fakeContent struct{ *calls }

func (f fakeContent) Forget(name string, _ types.UID) { f.add("content.Forget " + name) }
func (fakeContent) DependentsOf(context.Context, client.Object) []reconcile.Request {
	return nil
}

type kappAPI struct{ ready bool }

func (k kappAPI) Ready() bool { return k.ready }

func testScheme(t *testing.T) *runtime.Scheme {
	t.Helper()
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, rukpakv1alpha2.AddToScheme, kappctrlv1alpha1.AddToScheme} {
		if err := add(s); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

func newBD(name, class string, finalizers ...string) *rukpakv1alpha2.BundleDeployment {
	return &rukpakv1alpha2.BundleDeployment{
		ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID("uid-" + name), Generation: 1, Finalizers: finalizers},
		Spec: rukpakv1alpha2.BundleDeploymentSpec{ProvisionerClassName: class, InstallNamespace: "default",
			Source: rukpakv1alpha2.BundleSource{Type: rukpakv1alpha2.SourceTypeImage, Image: &rukpakv1alpha2.ImageSource{Ref: "registry.example/b:v1"}}},
	}
}

type fixture struct {
	c       client.Client
	r       *BundleDeploymentReconciler
	log     *calls
	patches int
}

func setup(t *testing.T, app fakeApp, serve fakeServe, objs []client.Object, funcs interceptor.Funcs) *fixture {
	t.Helper()
	f := &fixture{log: app.calls}
	patch := funcs.Patch
	funcs.Patch = func(ctx context.Context, c client.WithWatch, o client.Object, p client.Patch, opts ...client.PatchOption) error {
		f.patches++
		if patch != nil {
			return patch(ctx, c, o, p, opts...)
		}
		return c.Patch(ctx, o, p, opts...)
	}
	f.c = fake.NewClientBuilder().WithScheme(testScheme(t)).WithObjects(objs...).
		WithStatusSubresource(&rukpakv1alpha2.BundleDeployment{}).WithInterceptorFuncs(funcs).Build()
	classes, err := ParseClasses([]string{rukpakv1alpha2.ClassPlain, "kapp-plain=" + rukpakv1alpha2.ClassPlain})
	if err != nil {
		t.Fatal(err)
	}
	set := Settings{Config: translate.Config{SystemNamespace: "rukpak-system"}, Classes: classes}
	f.r = New(f.c, f.c, nil, set, app, serve, fakeContent{app.calls}, kappAPI{ready: true}, nil)
	return f
}

func reconcileBD(t *testing.T, f *fixture, name string) (ctrl.Result, error) {
	t.Helper()
	return f.r.Reconcile(context.Background(), ctrl.Request{NamespacedName: client.ObjectKey{Name: name}})
}

func get(t *testing.T, c client.Client, name string) *rukpakv1alpha2.BundleDeployment {
	t.Helper()
	bd := &rukpakv1alpha2.BundleDeployment{}
	if err := c.Get(context.Background(), client.ObjectKey{Name: name}, bd); err != nil {
		t.Fatal(err)
	}
	return bd
}

func expectCalls(t *testing.T, got *calls, want ...string) {
	t.Helper()
	if !reflect.DeepEqual(got.log, want) {
		t.Errorf("calls:\n got  %q\n want %q", got.log, want)
	}
}

func TestReconcile_InstallAppLeavesTheServeModeFirst(t *testing.T) {
	t.Parallel()
	log := &calls{}
	f := setup(t, fakeApp{calls: log}, fakeServe{calls: log, leaveGone: true}, []client.Object{newBD("a", "kapp-plain")}, interceptor.Funcs{})
	res, err := reconcileBD(t, f, "a")
	if err != nil {
		t.Fatal(err)
	}
	// The App mode sees the built-in class, never the alias.
	expectCalls(t, log, "serve.Leave", "app.Install "+rukpakv1alpha2.ClassPlain)
	bd := get(t, f.c, "a")
	if !strings.Contains(strings.Join(bd.Finalizers, ","), kube.Finalizer) {
		t.Errorf("finalizers %v lack %s", bd.Finalizers, kube.Finalizer)
	}
	if bd.Spec.ProvisionerClassName != "kapp-plain" {
		t.Errorf("the alias class was written back as %s", bd.Spec.ProvisionerClassName)
	}
	// A new generation in progress is held back, and looked at again
	// when the hold ends.
	if len(bd.Status.Conditions) != 0 || res.RequeueAfter == 0 {
		t.Errorf("status %+v, result %+v: want the progress held with a timer", bd.Status.Conditions, res)
	}
}

func TestReconcile_ServeModeLeaveNotDoneWaits(t *testing.T) {
	t.Parallel()
	log := &calls{}
	f := setup(t, fakeApp{calls: log}, fakeServe{calls: log}, []client.Object{newBD("a", rukpakv1alpha2.ClassPlain, kube.Finalizer)}, interceptor.Funcs{})
	if _, err := reconcileBD(t, f, "a"); err != nil {
		t.Fatal(err)
	}
	expectCalls(t, log, "serve.Leave")
}

func TestReconcile_ServeModeByAnnotation(t *testing.T) {
	t.Parallel()
	log := &calls{}
	bd := newBD("a", rukpakv1alpha2.ClassPlain, kube.Finalizer)
	bd.Annotations = map[string]string{rukpakv1alpha2.AnnotationInstallWith: "packageinstall"}
	f := setup(t, fakeApp{calls: log}, fakeServe{calls: log}, []client.Object{bd}, interceptor.Funcs{})
	if _, err := reconcileBD(t, f, "a"); err != nil {
		t.Fatal(err)
	}
	expectCalls(t, log, "serve.Install")
}

func TestReconcile_InvalidInstallWithIsTerminal(t *testing.T) {
	t.Parallel()
	log := &calls{}
	bd := newBD("a", rukpakv1alpha2.ClassPlain)
	bd.Annotations = map[string]string{rukpakv1alpha2.AnnotationInstallWith: "helm"}
	f := setup(t, fakeApp{calls: log}, fakeServe{calls: log}, []client.Object{bd}, interceptor.Funcs{})
	_, err := reconcileBD(t, f, "a")
	if !errors.Is(err, reconcile.TerminalError(nil)) {
		t.Errorf("err = %v, want terminal", err)
	}
	expectCalls(t, log)
	c := apimeta.FindStatusCondition(get(t, f.c, "a").Status.Conditions, rukpakv1alpha2.TypeInstalled)
	if c == nil || c.Status != metav1.ConditionFalse || !strings.Contains(c.Message, rukpakv1alpha2.AnnotationInstallWith) {
		t.Errorf("Installed = %+v, want False naming the annotation", c)
	}
}

func TestReconcile_FinalizerConflictRequeues(t *testing.T) {
	t.Parallel()
	log := &calls{}
	conflict := interceptor.Funcs{Patch: func(context.Context, client.WithWatch, client.Object, client.Patch, ...client.PatchOption) error {
		return apierrors.NewConflict(schema.GroupResource{Resource: "bundledeployments"}, "a", errors.New("changed"))
	}}
	f := setup(t, fakeApp{calls: log}, fakeServe{calls: log, leaveGone: true}, []client.Object{newBD("a", rukpakv1alpha2.ClassPlain)}, conflict)
	res, err := reconcileBD(t, f, "a")
	if err != nil || !res.Requeue {
		t.Errorf("Reconcile = %+v, %v; want a requeue without an error", res, err)
	}
	expectCalls(t, log)
}

func TestReconcile_RemoveServeModeFirst(t *testing.T) {
	t.Parallel()
	deleting := func() *rukpakv1alpha2.BundleDeployment {
		bd := newBD("a", rukpakv1alpha2.ClassPlain, kube.Finalizer)
		bd.DeletionTimestamp = &metav1.Time{Time: metav1.Now().Time}
		return bd
	}
	t.Run("the PackageInstall is waited for", func(t *testing.T) {
		t.Parallel()
		log := &calls{}
		f := setup(t, fakeApp{calls: log}, fakeServe{calls: log, finalizeWaits: true}, []client.Object{deleting()}, interceptor.Funcs{})
		if _, err := reconcileBD(t, f, "a"); err != nil {
			t.Fatal(err)
		}
		expectCalls(t, log, "serve.Finalize")
		if c := apimeta.FindStatusCondition(get(t, f.c, "a").Status.Conditions, rukpakv1alpha2.TypeInstalled); c == nil || c.Reason != rukpakv1alpha2.ReasonDeleting {
			t.Errorf("Installed = %+v, want Deleting", c)
		}
	})
	t.Run("the App is waited for", func(t *testing.T) {
		t.Parallel()
		log := &calls{}
		f := setup(t, fakeApp{calls: log}, fakeServe{calls: log}, []client.Object{deleting()}, interceptor.Funcs{})
		if _, err := reconcileBD(t, f, "a"); err != nil {
			t.Fatal(err)
		}
		expectCalls(t, log, "serve.Finalize", "app.Finalize")
	})
	t.Run("gone: every memory forgotten, the finalizer removed", func(t *testing.T) {
		t.Parallel()
		log := &calls{}
		f := setup(t, fakeApp{calls: log, finalizeGone: true}, fakeServe{calls: log}, []client.Object{deleting()}, interceptor.Funcs{})
		if _, err := reconcileBD(t, f, "a"); err != nil {
			t.Fatal(err)
		}
		expectCalls(t, log, "serve.Finalize", "app.Finalize", "content.Forget a", "serve.Forget a")
		bd := &rukpakv1alpha2.BundleDeployment{}
		if err := f.c.Get(context.Background(), client.ObjectKey{Name: "a"}, bd); !apierrors.IsNotFound(err) {
			t.Errorf("the BundleDeployment is still there (%v): finalizers %v", err, bd.Finalizers)
		}
	})
}

func TestReconcile_HandBack(t *testing.T) {
	t.Parallel()
	for _, done := range []bool{false, true} {
		log := &calls{}
		f := setup(t, fakeApp{calls: log, releaseDone: done}, fakeServe{calls: log}, []client.Object{newBD("a", "some-other-class", kube.Finalizer)}, interceptor.Funcs{})
		if _, err := reconcileBD(t, f, "a"); err != nil {
			t.Fatal(err)
		}
		bd := get(t, f.c, "a")
		if done {
			expectCalls(t, log, "app.Release", "content.Forget a", "serve.Forget a")
			if len(bd.Finalizers) != 0 {
				t.Errorf("finalizers %v left after the hand-back", bd.Finalizers)
			}
		} else {
			expectCalls(t, log, "app.Release")
		}
		if len(bd.Status.Conditions) != 0 {
			t.Errorf("a handed-back BundleDeployment got status %+v: it is the new owner's to write", bd.Status.Conditions)
		}
	}
}

func TestReconcile_OtherClassUntouched(t *testing.T) {
	t.Parallel()
	log := &calls{}
	f := setup(t, fakeApp{calls: log}, fakeServe{calls: log}, []client.Object{newBD("a", "some-other-class")}, interceptor.Funcs{})
	if _, err := reconcileBD(t, f, "a"); err != nil {
		t.Fatal(err)
	}
	expectCalls(t, log)
	if f.patches != 0 {
		t.Errorf("%d patches to a BundleDeployment of another class", f.patches)
	}
}

func TestReconcile_UnchangedInstallWritesNothing(t *testing.T) {
	t.Parallel()
	log := &calls{}
	f := setup(t, fakeApp{calls: log}, fakeServe{calls: log, leaveGone: true}, []client.Object{newBD("a", rukpakv1alpha2.ClassPlain)}, interceptor.Funcs{})
	if _, err := reconcileBD(t, f, "a"); err != nil {
		t.Fatal(err)
	}
	before := f.patches
	if _, err := reconcileBD(t, f, "a"); err != nil {
		t.Fatal(err)
	}
	if f.patches != before {
		t.Errorf("the second reconcile of an unchanged BundleDeployment patched %d times", f.patches-before)
	}
}

// TestMemories: finish forgets every memory the BundleDeploymentReconciler holds, so a field
// that remembers BundleDeployments and is missing from memories() fails.
func TestMemories(t *testing.T) {
	t.Parallel()
	log := &calls{}
	r := New(nil, nil, nil, Settings{}, fakeApp{calls: log}, fakeServe{calls: log}, fakeContent{log}, kappAPI{ready: true}, nil)
	listed := map[any]bool{}
	for _, m := range r.memories() {
		listed[m] = true
	}
	memory := reflect.TypeFor[Memory]()
	v := reflect.ValueOf(r).Elem()
	found := 0
	for i := range v.NumField() {
		field := v.Field(i)
		// The fields are unexported: reach them through their addresses.
		at := reflect.NewAt(field.Type(), unsafe.Pointer(field.UnsafeAddr()))
		var m any
		switch {
		case field.Type().Implements(memory):
			m = at.Elem().Interface()
		case at.Type().Implements(memory):
			m = at.Interface()
		default:
			continue
		}
		found++
		if !listed[m] {
			t.Errorf("BundleDeploymentReconciler.%s remembers BundleDeployments but finish does not forget it: add it to memories()", v.Type().Field(i).Name)
		}
	}
	if found != len(listed) {
		t.Errorf("%d memories among the fields, %d listed", found, len(listed))
	}
}

func TestReconcile_WithoutKappControllerAPI(t *testing.T) {
	t.Parallel()
	t.Run("an install waits, saying what is missing and what to do", func(t *testing.T) {
		t.Parallel()
		log := &calls{}
		f := setup(t, fakeApp{calls: log}, fakeServe{calls: log, leaveGone: true}, []client.Object{newBD("a", rukpakv1alpha2.ClassPlain)}, interceptor.Funcs{})
		f.r.kapp = kappAPI{}
		res, err := reconcileBD(t, f, "a")
		if err != nil || res != (ctrl.Result{}) {
			t.Errorf("Reconcile = %+v, %v; want a wait without a retry or a timer (the API's arrival wakes it)", res, err)
		}
		expectCalls(t, log)
		bd := get(t, f.c, "a")
		c := apimeta.FindStatusCondition(bd.Status.Conditions, rukpakv1alpha2.TypeInstalled)
		if c == nil || c.Reason != rukpakv1alpha2.ReasonKappControllerMissing || !strings.Contains(c.Message, "install kapp-controller v0.53.1 or newer, watching namespace rukpak-system") {
			t.Errorf("Installed = %+v", c)
		}
		if !slices.Contains(bd.Finalizers, kube.Finalizer) {
			t.Errorf("finalizers %v: a claimed BundleDeployment gets the finalizer before it waits", bd.Finalizers)
		}
	})
	t.Run("a removal has no App or PackageInstall to wait for", func(t *testing.T) {
		t.Parallel()
		log := &calls{}
		bd := newBD("a", rukpakv1alpha2.ClassPlain, kube.Finalizer)
		bd.DeletionTimestamp = &metav1.Time{Time: metav1.Now().Time}
		f := setup(t, fakeApp{calls: log, finalizeGone: true}, fakeServe{calls: log, finalizeWaits: true}, []client.Object{bd}, interceptor.Funcs{})
		f.r.kapp = kappAPI{}
		if _, err := reconcileBD(t, f, "a"); err != nil {
			t.Fatal(err)
		}
		expectCalls(t, log, "app.Finalize", "content.Forget a", "serve.Forget a")
	})
}

// A look that reads the BundleDeployment from a cache that has not seen
// the adapter's last status write does nothing and looks again, where it
// would have written over that status (a write the optimistic lock
// refuses); once the cache has the write, the next look runs.
func TestReconcile_ACacheBehindItsOwnStatusWriteWaits(t *testing.T) {
	t.Parallel()
	log := &calls{}
	var stale *rukpakv1alpha2.BundleDeployment
	funcs := interceptor.Funcs{Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, o client.Object, opts ...client.GetOption) error {
		if bd, ok := o.(*rukpakv1alpha2.BundleDeployment); ok && stale != nil {
			stale.DeepCopyInto(bd)
			return nil
		}
		return c.Get(ctx, key, o, opts...)
	}}
	failing := scope.Outcome{Err: scope.InStep(scope.StepStore, "%w", errors.New("registry unreachable"))}
	f := setup(t, fakeApp{calls: log, install: failing}, fakeServe{calls: log, leaveGone: true},
		[]client.Object{newBD("a", rukpakv1alpha2.ClassPlain, kube.Finalizer)}, funcs)
	before := get(t, f.c, "a")
	if _, err := reconcileBD(t, f, "a"); err == nil {
		t.Fatal("the failing install returned no error")
	}
	if got := get(t, f.c, "a"); got.ResourceVersion == before.ResourceVersion || len(got.Status.Conditions) == 0 {
		t.Fatalf("the first look wrote no status: %+v", got.Status)
	}
	patches := f.patches
	stale = before
	res, err := reconcileBD(t, f, "a")
	if err != nil || !res.Requeue {
		t.Errorf("a look from the cache behind the write: %+v, %v; want a requeue without an error", res, err)
	}
	if f.patches != patches {
		t.Errorf("a look from the cache behind the write wrote %d times", f.patches-patches)
	}
	stale = nil
	if _, err := reconcileBD(t, f, "a"); err == nil {
		t.Error("the look after the cache caught up did not run the install")
	}
	// That look's status was the one stored: nothing was written, so the
	// next look is not held back either.
	if _, err := reconcileBD(t, f, "a"); err == nil {
		t.Error("a look after one that wrote nothing did not run the install")
	}
	expectCalls(t, log, "serve.Leave", "app.Install core-rukpak-io-plain", "serve.Leave", "app.Install core-rukpak-io-plain",
		"serve.Leave", "app.Install core-rukpak-io-plain")
}
