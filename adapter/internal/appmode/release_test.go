package appmode

import (
	"context"
	"slices"
	"testing"

	kappctrlv1alpha1 "carvel.dev/kapp-controller/pkg/apis/kappctrl/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/internal/kube"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/translate"
	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
	"github.com/rukpak-kapp/rukpak-kapp/test/fakekube"
)

// The hand-back, one reconcile at a time: the App is re-applied released
// (noopDelete, Helm's metadata put back) and nothing is deleted; once
// kapp-controller deployed that, the App is deleted; once it is gone, what
// the adapter stored goes and the BundleDeployment may go.
func TestReleaseHandsBack(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	bd := imageBD("web")
	certs := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: systemNS, Name: "web-webhook-certs"}}
	k := fakekube.New(nil, bd.DeepCopy(), contentSecret("web", "web-content-1"), contentSecret("web", "web-content-2"),
		contentSecret("other", "other-content"), certs)
	installed(t, k, bd)
	m := mode(t, k)
	k.Reset()
	release := func(step string, wantDone bool, want ...string) {
		t.Helper()
		live, err := kube.LiveApp(ctx, k.Raw, k.Raw, client.ObjectKeyFromObject(appOf("web")))
		if err != nil {
			t.Fatal(err)
		}
		done, err := m.Release(ctx, scopeOf(bd, live))
		if err != nil || done != wantDone {
			t.Fatalf("%s: done %v, err %v, want done %v", step, done, err, wantDone)
		}
		k.ExpectWrites(t, step, want...)
	}

	release("not yet released", false, "apply App "+systemNS+"/web")
	app := read(t, k, appOf("web"))
	if app.Annotations[translate.AnnotationReleased] != translate.ReleasedAdoptable || !app.Spec.NoopDelete {
		t.Fatalf("released App: annotations %v, noopDelete %v", app.Annotations, app.Spec.NoopDelete)
	}
	if !slices.Contains(app.Finalizers, translate.KappControllerFinalizer) {
		t.Errorf("the release took kapp-controller's finalizer off: %v", app.Finalizers)
	}

	bump(t, k, "web", 2)
	release("released, kapp-controller not done", false)
	deployed(t, k, "web", 2)
	release("released and deployed", false, "delete App "+systemNS+"/web")
	release("kapp-controller lets the App go", false)

	app = read(t, k, appOf("web"))
	app.Finalizers = nil
	if err := k.Raw.Update(ctx, app); err != nil {
		t.Fatal(err)
	}
	release("App gone", true, "delete Secret "+systemNS+"/web-content-1", "delete Secret "+systemNS+"/web-content-2",
		"delete Secret "+systemNS+"/web-webhook-certs")
	if read(t, k, contentSecret("other", "other-content")) == nil {
		t.Error("another BundleDeployment's content went too")
	}
}

// staleRelease is an installed, deployed App "web" and the copy of it a
// cache that fell behind holds; run marks the App as the API server has it
// as under a run of kapp-controller's (Reconciling); release hands back
// from the stale copy.
type staleRelease struct {
	t     *testing.T
	k     *fakekube.Cluster
	m     *AppInstaller
	bd    *rukpakv1alpha2.BundleDeployment
	stale *kappctrlv1alpha1.App
}

func newStaleRelease(t *testing.T) *staleRelease {
	bd := imageBD("web")
	k := fakekube.New(nil, bd.DeepCopy())
	installed(t, k, bd)
	return &staleRelease{t: t, k: k, m: mode(t, k), bd: bd, stale: deployed(t, k, "web", 1)}
}

func (r *staleRelease) run() {
	app := read(r.t, r.k, appOf("web"))
	app.Status.Conditions = []kappctrlv1alpha1.Condition{{Type: kappctrlv1alpha1.Reconciling, Status: corev1.ConditionTrue}}
	if err := r.k.Raw.Status().Update(context.Background(), app); err != nil {
		r.t.Fatal(err)
	}
}

func (r *staleRelease) release() {
	if done, err := r.m.Release(context.Background(), scopeOf(r.bd, r.stale)); err != nil || done {
		r.t.Fatalf("done %v, err %v", done, err)
	}
}

// A run the cache has not shown yet is stopped before the hand-back, not
// waited behind: the App as the API server has it decides, whatever the
// stale copy the reconcile read says.
func TestReleaseStopsARunTheCacheHasNotShown(t *testing.T) {
	t.Parallel()
	r := newStaleRelease(t)
	r.run()
	r.k.Reset()
	r.release()
	r.k.ExpectWrites(t, "a run in flight the cache missed", "apply App "+systemNS+"/web")
	app := read(t, r.k, appOf("web"))
	if !app.Spec.Canceled {
		t.Error("the run in flight was not stopped")
	}
	if _, released := app.Annotations[translate.AnnotationReleased]; released {
		t.Error("handed back behind a run in flight")
	}
}

// A cache that has not seen the hand-back yet: the App the API server has
// is released and deploying it; the run is the hand-back's own, and is not
// stopped.
func TestReleaseLeavesAHandBackTheCacheHasNotShown(t *testing.T) {
	t.Parallel()
	r := newStaleRelease(t)
	r.release()
	r.run()
	r.k.Reset()
	r.release()
	r.k.ExpectWrites(t, "the hand-back's own run, read from a stale cache")
	if app := read(t, r.k, appOf("web")); app.Spec.Canceled || app.Annotations[translate.AnnotationReleased] != translate.ReleasedAdoptable {
		t.Errorf("the hand-back was undone: canceled %v, annotations %v", app.Spec.Canceled, app.Annotations)
	}
}
