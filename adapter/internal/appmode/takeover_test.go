package appmode

import (
	"context"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/internal/kube"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/status"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/takeover"
	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
	"github.com/rukpak-kapp/rukpak-kapp/test/fakekube"
)

// A take-over that must not start says why, and changes nothing: rukpak's
// release Secrets, its finalizers and its objects stay as they are.
func TestTakeOverBlocked(t *testing.T) {
	t.Parallel()
	bd := webBD()
	for _, tt := range []struct {
		name, state, bundle, message string
	}{
		{name: "the bundle now renders the Deployment with another selector", state: takeover.StatusDeployed,
			bundle: deployment("other", nil), message: "Deployment.apps apps/web differs"},
		{name: "rukpak's last release failed", state: "failed", bundle: deployment("web", nil), message: `is "failed", not deployed`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			release := releaseSecret(t, bd, "1", tt.state, deployment("web", bd))
			k := fakekube.New(kinds(), bd.DeepCopy(), release, bundleConfigMap(tt.bundle))
			live := read(t, k, webBD())

			sc := scopeOf(live, nil)
			o := fetchingMode(k).Install(context.Background(), sc)
			if o.Err != nil || o.Retry != nil {
				t.Fatalf("Install: %+v", o)
			}
			f := o.Failure
			if f == nil || f.Kind != status.TakeOverBlocked || f.Retrying || !strings.Contains(f.Message, tt.message) {
				t.Fatalf("failure %+v, want TakeOverBlocked saying %q", f, tt.message)
			}
			if got := k.Wrote(); len(got) != 0 {
				t.Errorf("a blocked take-over wrote %v", got)
			}
			if read(t, k, release.DeepCopy()) == nil {
				t.Error("rukpak's release Secret is gone")
			}
		})
	}
}

// A take-over deletes rukpak's release Secrets before the App is applied,
// so a rukpak still running cannot apply its release over kapp's; it
// removes rukpak's finalizers (and release Secrets rukpak wrote again) only
// once the App deployed.
func TestTakeOverProceeds(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	bd := webBD()
	release := releaseSecret(t, bd, "1", takeover.StatusDeployed, deployment("web", bd))
	k := fakekube.New(kinds(), bd.DeepCopy(), release, bundleConfigMap(deployment("web", nil)))
	m := fetchingMode(k)

	// The App is made of rukpak's release, and goes last.
	if o := m.Install(ctx, scopeOf(read(t, k, webBD()), nil)); o.Err != nil {
		t.Fatalf("Install: %v", o.Err)
	}
	deleted := k.Index(fakekube.Delete, "Secret", release.Name)
	applied := k.Index(fakekube.Apply, "App", bd.Name)
	if deleted < 0 || applied < 0 || deleted > applied {
		t.Fatalf("writes %v: the release Secret must be deleted before the App is applied", k.Wrote())
	}
	for i, w := range k.Writes() {
		if w.Kind == "BundleDeployment" {
			t.Errorf("write %d: %v before the App deployed", i, w)
		}
	}
	app := read(t, k, appOf(bd.Name))
	if app.Annotations[takeover.AnnotationTakenOver] != "1" || len(app.Spec.Fetch) != 1 || app.Spec.Fetch[0].Inline == nil {
		t.Fatalf("the take-over App: annotations %v, fetch %+v", app.Annotations, app.Spec.Fetch)
	}
	for _, p := range app.Spec.Fetch[0].Inline.PathsFrom {
		secret := &corev1.Secret{}
		if err := k.Raw.Get(ctx, client.ObjectKey{Namespace: systemNS, Name: p.SecretRef.Name}, secret); err != nil {
			t.Fatalf("content Secret %s: %v", p.SecretRef.Name, err)
		}
		if i := k.Index(fakekube.Create, "Secret", secret.Name); i < 0 || i > applied {
			t.Errorf("content Secret %s created at write %d, the App applied at %d", secret.Name, i, applied)
		}
	}

	// Not deployed yet: rukpak's finalizers stay.
	k.Reset()
	if o := m.Install(ctx, scopeOf(read(t, k, webBD()), app)); o.Err != nil {
		t.Fatalf("Install: %v", o.Err)
	}
	if got := k.Wrote(); len(got) != 0 {
		t.Errorf("before the App deployed: wrote %v", got)
	}

	// rukpak woke and wrote its release again; then the App deployed.
	again := releaseSecret(t, bd, "2", takeover.StatusDeployed, deployment("web", bd))
	if err := k.Raw.Create(ctx, again); err != nil {
		t.Fatal(err)
	}
	app = deployed(t, k, bd.Name, app.Generation)
	k.Reset()
	if o := m.Install(ctx, scopeOf(read(t, k, webBD()), app)); o.Err != nil {
		t.Fatalf("Install: %v", o.Err)
	}
	if got, want := k.Wrote(), []string{"delete Secret " + systemNS + "/" + again.Name, "patch BundleDeployment /web"}; !slices.Equal(got, want) {
		t.Errorf("once deployed: wrote %v, want %v", got, want)
	}
	now := read(t, k, webBD())
	if !slices.Equal(now.Finalizers, []string{kube.Finalizer}) {
		t.Errorf("finalizers %v, want only the adapter's", now.Finalizers)
	}

	// Done: nothing more to clear.
	k.Reset()
	if o := m.Install(ctx, scopeOf(now, app)); o.Err != nil {
		t.Fatalf("Install: %v", o.Err)
	}
	if got := k.Wrote(); len(got) != 0 {
		t.Errorf("after the clean-up: wrote %v", got)
	}
}

// Once the taken-over App deployed, rukpak's finalizers come off the
// BundleDeployment as stored, not the view: for an alias class the view
// is a copy with the built-in class, which a patch's response would
// overwrite with the alias, and the status write after the step, locked by
// the BundleDeployment's resourceVersion, would then be refused once.
func TestClearRukpakPatchesTheBundleDeploymentNotTheView(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	const alias = "kapp-plain"
	bd := webBD()
	bd.Spec.ProvisionerClassName = alias
	k := fakekube.New(kinds(), bd)
	view := webBD()
	installed(t, k, view)
	app := read(t, k, appOf(bd.Name))
	app.Annotations[takeover.AnnotationTakenOver] = "1"
	if err := k.Raw.Update(ctx, app); err != nil {
		t.Fatal(err)
	}
	app = read(t, k, appOf(bd.Name))

	stored := read(t, k, webBD())
	// As the BundleDeployment reconciler's load makes it: the alias replaced on a copy.
	view = stored.DeepCopy()
	view.Spec.ProvisionerClassName = rukpakv1alpha2.ClassPlain
	s := scopeOf(stored, app)
	s.View = view
	k.Reset()
	if o := mode(t, k).Install(ctx, s); o.Err != nil || o.Failure != nil {
		t.Fatalf("Install: %+v", o)
	}
	if got, want := k.Wrote(), []string{"patch BundleDeployment /web"}; !slices.Equal(got, want) {
		t.Fatalf("wrote %v, want %v", got, want)
	}
	if got := read(t, k, webBD()).Finalizers; !slices.Equal(got, []string{kube.Finalizer}) {
		t.Errorf("finalizers %v, want only the adapter's", got)
	}
	if view.Spec.ProvisionerClassName != rukpakv1alpha2.ClassPlain {
		t.Errorf("the view was overwritten: class %q, want the built-in one", view.Spec.ProvisionerClassName)
	}
	// The status write that follows the step in the same reconcile goes
	// through at once.
	st := rukpakv1alpha2.BundleDeploymentStatus{Conditions: []metav1.Condition{{Type: rukpakv1alpha2.TypeInstalled, Status: metav1.ConditionTrue,
		Reason: rukpakv1alpha2.ReasonInstallationSucceeded, Message: "Installed.", LastTransitionTime: metav1.Now()}}}
	if err := kube.WriteStatus(ctx, k.Client, nil, s.BD, st); err != nil {
		t.Fatalf("the status write after the step: %v", err)
	}
}
