package servemode

import (
	"context"
	"errors"
	"fmt"

	packagingv1alpha1 "carvel.dev/kapp-controller/pkg/apis/packaging/v1alpha1"
	datav1alpha1 "carvel.dev/kapp-controller/pkg/apiserver/apis/datapackaging/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/internal/kube"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/internal/scope"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/internal/store"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/packaging"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/packagingapi"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/status"
	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
)

// Install is the serve mode: the BundleDeployment's content is published as
// a Package and installed by a PackageInstall named like it, in the
// namespace of its App, whose App is the App mode's App (the same kapp
// app), so switching keeps every installed object. The order is
// load-bearing: publish, mirror, hand the App over, apply the
// PackageInstall.
func (m *PackageInstaller) Install(ctx context.Context, s *scope.Scope) scope.Outcome {
	bd, facts, live := s.View, s.Facts, s.Live
	f, gathered, stop := m.store.Gather(ctx, s)
	if stop {
		return gathered
	}
	timer := gathered.Timer
	set, err := m.desiredPackage(ctx, s, f)
	if err != nil {
		return scope.Outcome{Timer: timer, Err: err}
	}
	facts.Package = &status.PackageFacts{Version: set.version}
	if err := m.publish(ctx, bd.Name, set); err != nil {
		return scope.Outcome{Timer: timer, Err: err}
	}
	if err := kube.Mirror(ctx, m.client, s.Cfg.SystemNamespace, s.AppNS, bd); err != nil {
		return scope.Outcome{Timer: timer, Err: &scope.StepError{Step: scope.StepStore, Err: err}}
	}
	if live, err = m.takeApp(ctx, bd, live); err != nil {
		return scope.Outcome{Timer: timer, Err: err}
	}
	pi, err := m.livePackageInstall(ctx, s.AppNS, bd.Name)
	if err != nil {
		return scope.Outcome{Timer: timer, Err: err}
	}
	if facts.Package.Install, err = m.applyPackageInstall(ctx, set.install, pi); err != nil {
		return scope.Outcome{Timer: timer, Err: err}
	}
	if status.PackageInstallFailed(facts.Package.Install) {
		m.published.Delete(bd.Name)
	}
	facts.App = live
	var retry error
	deployed := status.PackageDeployed(facts.Package.Install, live, set.version)
	if _, pruned := m.pruned.get(bd.Name, set.key()); deployed && gathered.Failure == nil && !pruned {
		if err := m.pruneSuperseded(ctx, s, set, f); err != nil {
			facts.PruneFailure, retry = err.Error(), err
		} else {
			m.pruned.set(bd.Name, set.key(), "")
		}
	}
	if err := kube.ObserveWorkloads(ctx, m.client, bd, facts, deployed); err != nil {
		retry = err
	}
	return scope.Outcome{Timer: timer, Retry: retry, Failure: gathered.Failure}
}

// livePackageInstall is the PackageInstall ns/name from the informer
// cache; nil when there is none.
func (m *PackageInstaller) livePackageInstall(ctx context.Context, ns, name string) (*packagingv1alpha1.PackageInstall, error) {
	pi := &packagingv1alpha1.PackageInstall{}
	err := m.client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, pi)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, scope.InStep(scope.StepStore, "get PackageInstall %s/%s: %w", ns, name, err)
	}
	return pi, nil
}

// applyPackageInstall writes the PackageInstall only when it differs from
// the live one, so an unchanged BundleDeployment costs no API writes.
func (m *PackageInstaller) applyPackageInstall(ctx context.Context, desired, live *packagingv1alpha1.PackageInstall) (*packagingv1alpha1.PackageInstall, error) {
	if live != nil && live.DeletionTimestamp.IsZero() && packagingapi.LabelsHold(live, desired) &&
		apiequality.Semantic.DeepEqual(desired.Spec, live.Spec) && apiequality.Semantic.DeepEqual(desired.OwnerReferences, live.OwnerReferences) {
		if _, ok := live.Annotations[packagingDowngradable]; ok {
			return live, nil
		}
	}
	if live != nil && !live.DeletionTimestamp.IsZero() {
		return nil, scope.InStep(scope.StepStore, "PackageInstall %s/%s is being deleted; the adapter makes it again once it is gone", live.Namespace, live.Name)
	}
	applied := &packagingv1alpha1.PackageInstall{}
	if err := kube.ApplyAs(ctx, m.client, desired, applied); err != nil {
		return nil, scope.InStep(scope.StepStore, "apply PackageInstall %s/%s: %w", desired.Namespace, desired.Name, err)
	}
	return applied, nil
}

// pruneSuperseded removes what bd published for other versions, and the
// content Secrets only they read, once this version is installed.
func (m *PackageInstaller) pruneSuperseded(ctx context.Context, s *scope.Scope, set *packageSet, f store.Fetched) error {
	keepValues := ""
	if set.values != nil {
		keepValues = set.values.Name
	}
	if err := m.removePackaging(ctx, s.AppNS, s.View.Name, set.version, keepValues); err != nil {
		return err
	}
	return m.store.Prune(ctx, s.AppNS, s.View.Name, f.Packed())
}

// removePackaging deletes bdName's Packages in ns but the one of version,
// its values Secrets but keepValues, and, with no version kept, its
// PackageMetadata.
func (m *PackageInstaller) removePackaging(ctx context.Context, ns, bdName, version, keepValues string) error {
	refName := packaging.RefName(bdName)
	pkgs := &datav1alpha1.PackageList{}
	if err := m.direct.List(ctx, pkgs, client.InNamespace(ns)); err != nil {
		return packagingAPIError("list Packages", err)
	}
	var errs []error
	for i := range pkgs.Items {
		p := &pkgs.Items[i]
		if p.Spec.RefName != refName || p.Spec.Version == version || p.Labels[rukpakv1alpha2.LabelOwnerName] != bdName {
			continue
		}
		if err := m.client.Delete(ctx, p); client.IgnoreNotFound(err) != nil {
			errs = append(errs, packagingAPIError("delete superseded Package "+p.Name, err))
		}
	}
	if version == "" {
		meta := &datav1alpha1.PackageMetadata{}
		err := m.direct.Get(ctx, client.ObjectKey{Namespace: ns, Name: refName}, meta)
		if err == nil && meta.Labels[rukpakv1alpha2.LabelOwnerName] == bdName {
			err = m.client.Delete(ctx, meta)
		}
		if client.IgnoreNotFound(err) != nil {
			errs = append(errs, packagingAPIError("delete PackageMetadata "+refName, err))
		}
	}
	secrets := &corev1.SecretList{}
	if err := m.client.List(ctx, secrets, client.InNamespace(ns), client.MatchingLabels{
		rukpakv1alpha2.LabelOwnerName: bdName, LabelPackageValues: "true",
	}); err != nil {
		return errors.Join(append(errs, fmt.Errorf("list values secrets: %w", err))...)
	}
	for i := range secrets.Items {
		if secret := &secrets.Items[i]; secret.Name != keepValues {
			if err := m.client.Delete(ctx, secret); client.IgnoreNotFound(err) != nil {
				errs = append(errs, fmt.Errorf("delete values secret %s: %w", secret.Name, err))
			}
		}
	}
	return errors.Join(errs...)
}
