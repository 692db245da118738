package servemode

import (
	"context"
	"testing"

	packagingv1alpha1 "carvel.dev/kapp-controller/pkg/apis/packaging/v1alpha1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/packaging"
	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
	"github.com/rukpak-kapp/rukpak-kapp/test/fakekube"
)

// served is bd installed in the serve mode, its PackageInstall held by
// kapp-controller's finalizer; noopDelete says a switch to an App was
// under way.
func served(t *testing.T, noopDelete bool) (*fakekube.Cluster, *PackageInstaller, *rukpakv1alpha2.BundleDeployment) {
	t.Helper()
	k, m, bd := appModeInstalled(t)
	if o := m.Install(context.Background(), scopeOf(t, k, bd)); o.Err != nil {
		t.Fatal(o.Err)
	}
	pi := readPI(t, k, bd)
	pi.Finalizers = []string{piFinalizer}
	pi.Spec.NoopDelete = noopDelete
	if err := k.Raw.Update(context.Background(), pi); err != nil {
		t.Fatal(err)
	}
	k.Reset()
	return k, m, bd
}

func readPI(t *testing.T, k *fakekube.Cluster, bd *rukpakv1alpha2.BundleDeployment) *packagingv1alpha1.PackageInstall {
	t.Helper()
	pi := &packagingv1alpha1.PackageInstall{}
	if err := k.Raw.Get(context.Background(), client.ObjectKey{Namespace: appNS, Name: bd.Name}, pi); err != nil {
		if client.IgnoreNotFound(err) != nil {
			t.Fatal(err)
		}
		return nil
	}
	return pi
}

func publishedWrites(bd *rukpakv1alpha2.BundleDeployment) []string {
	ref := packaging.RefName(bd.Name)
	return []string{"delete Package " + appNS + "/" + packaging.PackageName(ref, "1.0.0"), "delete PackageMetadata " + appNS + "/" + ref}
}

// Leaving the serve mode keeps what the PackageInstall installed: it is
// marked noopDelete before it is deleted, what was published goes, and
// the App may be written only once the PackageInstall is gone.
func TestLeaveKeepsWhatWasInstalled(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	k, m, bd := served(t, false)
	leave := func(step string, wantGone bool, want ...string) {
		t.Helper()
		if gone, err := m.Leave(ctx, scopeOf(t, k, bd)); err != nil || gone != wantGone {
			t.Fatalf("%s: gone %v, err %v, want gone %v", step, gone, err, wantGone)
		}
		k.ExpectWrites(t, step, want...)
	}

	pi := "PackageInstall " + appNS + "/" + bd.Name
	leave("served", false, append([]string{"patch " + pi, "delete " + pi}, publishedWrites(bd)...)...)
	if now := readPI(t, k, bd); now == nil || !now.Spec.NoopDelete || now.DeletionTimestamp.IsZero() {
		t.Fatalf("PackageInstall after Leave: %+v", now)
	}
	if m.published.Remembers(bd.Name) || m.pruned.Remembers(bd.Name) {
		t.Error("Leave kept what it remembered of the serve mode")
	}
	leave("kapp-controller not done", false)
	finish(t, k, readPI(t, k, bd))
	leave("PackageInstall gone", true)
}

// Removing a BundleDeployment whose switch to an App was under way still
// removes what it installed: noopDelete goes back to false before the
// PackageInstall is deleted, and the removal waits for it.
func TestFinalizeRemovesWhatWasInstalled(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	k, m, bd := served(t, true)
	finalize := func(step string, wantWaits bool, want ...string) {
		t.Helper()
		if waits, err := m.Finalize(ctx, scopeOf(t, k, bd)); err != nil || waits != wantWaits {
			t.Fatalf("%s: waits %v, err %v, want %v", step, waits, err, wantWaits)
		}
		k.ExpectWrites(t, step, want...)
	}

	pi := "PackageInstall " + appNS + "/" + bd.Name
	finalize("switching", true, "patch "+pi, "delete "+pi)
	if now := readPI(t, k, bd); now == nil || now.Spec.NoopDelete || now.DeletionTimestamp.IsZero() {
		t.Fatalf("PackageInstall after Finalize: %+v", now)
	}
	finalize("kapp-controller removing", true)
	finish(t, k, readPI(t, k, bd))
	finalize("PackageInstall gone", false, publishedWrites(bd)...)
}
