package servemode

import (
	"context"

	kappctrlv1alpha1 "carvel.dev/kapp-controller/pkg/apis/kappctrl/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/fieldowner"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/internal/kube"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/internal/scope"
	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
)

// Moving a BundleDeployment's install between its App and its
// PackageInstall, both ways, and out of the cluster.

// takeApp lets go of an App the App mode made (its controller owner
// reference to bd), without deleting it: kapp-controller's PackageInstall
// takes over only an App no other controller owns, and then updates it
// in place (pkg/packageinstall/app.go).
func (m *PackageInstaller) takeApp(ctx context.Context, bd *rukpakv1alpha2.BundleDeployment, live *kappctrlv1alpha1.App) (*kappctrlv1alpha1.App, error) {
	if live == nil || !metav1.IsControlledBy(live, bd) {
		return live, nil
	}
	before := live.DeepCopy()
	var kept []metav1.OwnerReference
	for _, ref := range live.OwnerReferences {
		if ref.UID != bd.UID {
			kept = append(kept, ref)
		}
	}
	live.OwnerReferences = kept
	// What the App mode recorded stops describing the App once the
	// PackageInstall rewrites its spec; a restarted adapter must not
	// recover content from it.
	for _, k := range []string{rukpakv1alpha2.AnnotationBundleGeneration, rukpakv1alpha2.AnnotationResolvedSource, rukpakv1alpha2.AnnotationBundleMetadata} {
		delete(live.Annotations, k)
	}
	if err := m.client.Patch(ctx, live, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{}), client.FieldOwner(fieldowner.Name)); err != nil {
		return nil, scope.InStep(scope.StepStore, "hand App %s/%s over to its PackageInstall: %w", live.Namespace, live.Name, err)
	}
	return live, nil
}

// Leave ends the serve mode for the BundleDeployment, if it was in it: the
// PackageInstall is told to leave what it installed in place
// (spec.noopDelete, which kapp-controller copies to its App before it
// deletes the App) and deleted, and what it published goes. kapp's record
// of the app stays in the namespace, so the App written next adopts every
// object. gone says the PackageInstall is gone and the App may be written.
func (m *PackageInstaller) Leave(ctx context.Context, s *scope.Scope) (bool, error) {
	bd := s.View
	pi, err := m.livePackageInstall(ctx, s.AppNS, bd.Name)
	if err != nil || pi == nil || !metav1.IsControlledBy(pi, bd) {
		return err == nil, err
	}
	m.Forget(bd.Name, bd.UID)
	if pi.DeletionTimestamp.IsZero() {
		if err := kube.DeleteLeaving(ctx, m.client, "PackageInstall", pi, &pi.Spec.NoopDelete, true); err != nil {
			return false, scope.InStep(scope.StepStore, "%w", err)
		}
	}
	return false, m.removePackaging(ctx, s.AppNS, bd.Name, "", "")
}

// Finalize deletes the BundleDeployment's PackageInstall, and so its App
// and everything installed, and waits for it through the PackageInstall
// watch; then it removes what was published. A delete that orphans
// dependents leaves what was installed in place (noopDelete), as does a
// switch to an App under way otherwise not. waits says the removal waits
// for the PackageInstall (its status is then reported from the scope's
// App); otherwise the App mode's removal goes on.
func (m *PackageInstaller) Finalize(ctx context.Context, s *scope.Scope) (bool, error) {
	bd := s.BD
	pi, err := m.livePackageInstall(ctx, s.AppNS, bd.Name)
	if err != nil {
		return true, err
	}
	if pi == nil || !(metav1.IsControlledBy(pi, bd) || kube.Orphaning(bd, pi) && metav1.GetControllerOf(pi) == nil) {
		if s.Mode != scope.InstallWithPackageInstall {
			return false, nil
		}
		m.Forget(bd.Name, bd.UID)
		return false, m.removePackaging(ctx, s.AppNS, bd.Name, "", "")
	}
	// kapp-controller copies the field to the App while it deletes the
	// PackageInstall: a switch to an App that was under way still removes
	// what was installed, an orphaning delete keeps it.
	return true, kube.DeleteLeaving(ctx, m.client, "PackageInstall", pi, &pi.Spec.NoopDelete, kube.Orphaning(bd, pi))
}
