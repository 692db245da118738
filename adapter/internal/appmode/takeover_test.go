package appmode

import (
	"context"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/internal/kube"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/pure/status"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/pure/takeover"
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
