package appmode

import (
	"context"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/content"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/internal/kube"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/internal/scope"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/status"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/takeover"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/translate"
	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
)

// takeOver installs what rukpak v0.24.0 installed for the BundleDeployment,
// in place: an as-bundled App applies rukpak's own release manifest
// (without the BundleDeployment owner references), so kapp adopts every
// object with its UID and nothing rolls; rukpak's release Secrets go first,
// so a rukpak still running cannot apply its release over kapp's.
// rukpak-kapp's own rendering takes over at the next generation. It reports
// false when there is nothing of rukpak's to take over.
func (m *AppInstaller) takeOver(ctx context.Context, s *scope.Scope) (bool, scope.Outcome) {
	bd, facts, live := s.View, s.Facts, s.Live
	if live != nil {
		if !takeover.KeepsRukpakRendering(bd, live.Annotations) {
			return false, scope.Outcome{}
		}
		facts.App = live
		if kube.DeployedCurrent(live) {
			return true, scope.Outcome{Err: m.clearRukpak(ctx, s)}
		}
		return true, scope.Outcome{}
	}
	in, err := TakeOverInput(ctx, m.client, m.client.RESTMapper(), m.store.Fetcher(), s.Cfg.SystemNamespace, bd, false)
	if err != nil {
		return true, scope.Outcome{Err: scope.InStep(scope.StepStore, "read what rukpak installed: %w", err)}
	}
	if len(in.Releases) == 0 && in.ReleaseErr == nil {
		return false, scope.Outcome{}
	}
	plan := takeover.Take(in)
	if plan.Blocked() {
		var msgs []string
		for _, b := range plan.Blockers {
			msgs = append(msgs, b.Message)
		}
		return true, scope.Outcome{Failure: &status.Failure{Kind: status.TakeOverBlocked, Message: strings.Join(msgs, "; ")}}
	}
	files, err := takeover.Files(takeover.AppObjects(in))
	if err != nil {
		return true, scope.Outcome{Err: err}
	}
	chunks, err := content.Pack(bd.Name, files)
	if err != nil {
		return true, scope.Outcome{Err: err}
	}
	refs := &translate.Packed{}
	for _, c := range chunks {
		if err := m.store.PutChunk(ctx, bd, s.AppNS, c); err != nil {
			return true, scope.Outcome{Err: scope.InStep(scope.StepStore, "%w", err)}
		}
		refs.Secrets = append(refs.Secrets, translate.ContentSecret{Name: c.Name, Dir: c.Dir})
	}
	if err := m.deleteReleaseSecrets(ctx, in.Releases); err != nil {
		return true, scope.Outcome{Err: err}
	}
	asPlain := bd.DeepCopy()
	asPlain.Spec.ProvisionerClassName = rukpakv1alpha2.ClassPlain
	desired, err := translate.AppInStyle(asPlain, s.Cfg, refs, translate.StyleAsBundled)
	if err != nil {
		return true, scope.Outcome{Err: err}
	}
	desired.Annotations[takeover.AnnotationTakenOver] = strconv.FormatInt(bd.Generation, 10)
	log.FromContext(ctx).Info("taking over what rukpak installed", "release", plan.Release, "objects", len(plan.Objects))
	facts.App, err = kube.ApplyApp(ctx, m.client, desired, nil)
	return true, scope.Outcome{Err: err}
}

// clearRukpak removes what rukpak keeps for the BundleDeployment once the
// App deployed it: release Secrets (rukpak writes them again if it still
// runs and wakes), and rukpak's finalizers, which would otherwise hold a
// delete forever.
func (m *AppInstaller) clearRukpak(ctx context.Context, s *scope.Scope) error {
	bd := s.View
	secrets := &corev1.SecretList{}
	if err := m.client.List(ctx, secrets, client.InNamespace(s.Cfg.SystemNamespace)); err != nil {
		return scope.InStep(scope.StepStore, "list release secrets: %w", err)
	}
	if err := m.deleteReleaseSecrets(ctx, takeover.ReleaseSecrets(bd, secrets.Items)); err != nil {
		return err
	}
	// The BundleDeployment as stored, not the view: for an alias class or
	// rukpak's first API the view is a copy, which the patch's response
	// would overwrite with the stored class and namespace, and the status
	// write after the step is locked by the resourceVersion the patch
	// leaves on Scope.BD (as the prepare step's finalizer patch leaves it).
	err := kube.PatchFinalizers(ctx, m.client, s.BD, func(o client.Object, _ string) bool { return takeover.StripRukpakFinalizers(o) })
	if err != nil {
		return scope.InStep(scope.StepStore, "remove rukpak's finalizers: %w", err)
	}
	return nil
}

func (m *AppInstaller) deleteReleaseSecrets(ctx context.Context, releases []corev1.Secret) error {
	for i := range releases {
		secret := &releases[i]
		if err := m.client.Delete(ctx, secret, client.Preconditions{UID: &secret.UID}); client.IgnoreNotFound(err) != nil {
			return scope.InStep(scope.StepStore, "delete rukpak's release secret %s: %w", secret.Name, err)
		}
	}
	return nil
}
