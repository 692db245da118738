package adapter

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	packagingv1alpha1 "carvel.dev/kapp-controller/pkg/apis/packaging/v1alpha1"
	datav1alpha1 "carvel.dev/kapp-controller/pkg/apiserver/apis/datapackaging/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/packaging"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/status"
	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
)

// serveState is the serve mode's part of the Reconciler.
type serveState struct {
	// installDefault is --install-with; the annotation wins.
	installDefault InstallWith
	// pruned remembers, per BundleDeployment, the packageSet (its key)
	// beside which everything superseded was last removed, so an idle
	// install lists no Packages (an aggregated API call) on every
	// reconcile.
	pruned memo
	// published remembers, per BundleDeployment, the version its current
	// template was published under (keyed by the bundle's own version and
	// the template's content version), so an idle install reads no
	// Package or PackageMetadata either. It is forgotten when the
	// PackageInstall fails, which is how a Package removed by hand shows.
	published memo
}

// memo keeps one value per BundleDeployment, valid for one key.
type memo struct {
	mu sync.Mutex
	m  map[string][2]string
}

// get is name's value if it was set for key.
func (m *memo) get(name, key string) (string, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	e, ok := m.m[name]
	return e[1], ok && e[0] == key
}

// set records value for name under key.
func (m *memo) set(name, key, value string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.m == nil {
		m.m = map[string][2]string{}
	}
	m.m[name] = [2]string{key, value}
}

func (m *memo) forget(name string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.m, name)
}

// forget drops what is remembered of name's packaging.
func (s *serveState) forget(name string) {
	s.pruned.forget(name)
	s.published.forget(name)
}

// installPackage is the serve mode: bd's content is published as a
// Package and installed by a PackageInstall named like bd, in the
// namespace of bd's App (the system namespace, or its app namespace),
// whose App is the App mode's App (the same kapp app), so switching keeps
// every installed object.
func (r *Reconciler) installPackage(ctx context.Context, bd *rukpakv1alpha2.BundleDeployment, facts *status.Facts) (timer time.Duration, err, retry error) {
	live, err := r.liveApp(ctx, bd.Name)
	if err != nil {
		return 0, inStep(stepStore, "%w", err), nil
	}
	f, timer, stop, err := r.adapterContent(ctx, bd, facts)
	if stop {
		return timer, err, nil
	}
	set, err := r.desiredPackage(ctx, bd, f, live)
	if err != nil {
		return timer, err, nil
	}
	facts.Package = &status.PackageFacts{Version: set.version}
	if err := r.publish(ctx, bd.Name, set); err != nil {
		return timer, err, nil
	}
	if err := r.mirror(ctx, bd); err != nil {
		return timer, &stepError{step: stepStore, err: err}, nil
	}
	if live, err = r.releaseApp(ctx, bd, live); err != nil {
		return timer, err, nil
	}
	pi, err := r.livePackageInstall(ctx, bd.Name)
	if err != nil {
		return timer, err, nil
	}
	if facts.Package.Install, err = r.applyPackageInstall(ctx, set.install, pi); err != nil {
		return timer, err, nil
	}
	if status.PackageInstallFailed(facts.Package.Install) {
		r.serve.published.forget(bd.Name)
	}
	facts.App = live
	deployed := status.PackageDeployed(facts.Package.Install, live, set.version)
	if _, pruned := r.serve.pruned.get(bd.Name, set.key()); deployed && facts.Failure == nil && !pruned {
		if err := r.pruneSuperseded(ctx, bd, set, f); err != nil {
			facts.PruneFailure, retry = err.Error(), err
		} else {
			r.serve.pruned.set(bd.Name, set.key(), "")
		}
	}
	if err := r.observeWorkloads(ctx, bd, facts, deployed); err != nil {
		retry = err
	}
	return timer, nil, retry
}

// livePackageInstall is bd's PackageInstall from the informer cache; nil
// when there is none.
func (r *Reconciler) livePackageInstall(ctx context.Context, name string) (*packagingv1alpha1.PackageInstall, error) {
	pi := &packagingv1alpha1.PackageInstall{}
	ns := r.appNS(name)
	err := r.client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, pi)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, inStep(stepStore, "get PackageInstall %s/%s: %w", ns, name, err)
	}
	return pi, nil
}

// applyPackageInstall writes the PackageInstall only when it differs from
// the live one, so an unchanged BundleDeployment costs no API writes.
func (r *Reconciler) applyPackageInstall(ctx context.Context, desired, live *packagingv1alpha1.PackageInstall) (*packagingv1alpha1.PackageInstall, error) {
	if live != nil && live.DeletionTimestamp.IsZero() && labelsHold(live, desired) &&
		apiequality.Semantic.DeepEqual(desired.Spec, live.Spec) && apiequality.Semantic.DeepEqual(desired.OwnerReferences, live.OwnerReferences) {
		if _, ok := live.Annotations[packagingDowngradable]; ok {
			return live, nil
		}
	}
	if live != nil && !live.DeletionTimestamp.IsZero() {
		return nil, inStep(stepStore, "PackageInstall %s/%s is being deleted; the adapter makes it again once it is gone", live.Namespace, live.Name)
	}
	applied := &packagingv1alpha1.PackageInstall{}
	if err := applyAs(ctx, r.client, desired, applied); err != nil {
		return nil, inStep(stepStore, "apply PackageInstall %s/%s: %w", desired.Namespace, desired.Name, err)
	}
	return applied, nil
}

// pruneSuperseded removes what bd published for other versions, and the
// content Secrets only they read, once this version is installed.
func (r *Reconciler) pruneSuperseded(ctx context.Context, bd *rukpakv1alpha2.BundleDeployment, set *packageSet, f fetched) error {
	keepValues := ""
	if set.values != nil {
		keepValues = set.values.Name
	}
	if err := r.removePackaging(ctx, bd.Name, set.version, keepValues); err != nil {
		return err
	}
	return r.pruneContent(ctx, bd.Name, f.content())
}

// removePackaging deletes bd's Packages but the one of version, its values
// Secrets but keepValues, and, with no version kept, its PackageMetadata.
func (r *Reconciler) removePackaging(ctx context.Context, bdName, version, keepValues string) error {
	refName, ns := packaging.RefName(bdName), r.appNS(bdName)
	pkgs := &datav1alpha1.PackageList{}
	if err := r.direct.List(ctx, pkgs, client.InNamespace(ns)); err != nil {
		return packagingAPIError("list Packages", err)
	}
	var errs []error
	for i := range pkgs.Items {
		p := &pkgs.Items[i]
		if p.Spec.RefName != refName || p.Spec.Version == version || p.Labels[rukpakv1alpha2.LabelOwnerName] != bdName {
			continue
		}
		if err := r.client.Delete(ctx, p); client.IgnoreNotFound(err) != nil {
			errs = append(errs, packagingAPIError("delete superseded Package "+p.Name, err))
		}
	}
	if version == "" {
		meta := &datav1alpha1.PackageMetadata{}
		err := r.direct.Get(ctx, client.ObjectKey{Namespace: ns, Name: refName}, meta)
		if err == nil && meta.Labels[rukpakv1alpha2.LabelOwnerName] == bdName {
			err = r.client.Delete(ctx, meta)
		}
		if client.IgnoreNotFound(err) != nil {
			errs = append(errs, packagingAPIError("delete PackageMetadata "+refName, err))
		}
	}
	secrets := &corev1.SecretList{}
	if err := r.client.List(ctx, secrets, client.InNamespace(ns), client.MatchingLabels{
		rukpakv1alpha2.LabelOwnerName: bdName, LabelPackageValues: "true",
	}); err != nil {
		return errors.Join(append(errs, fmt.Errorf("list values secrets: %w", err))...)
	}
	for i := range secrets.Items {
		if s := &secrets.Items[i]; s.Name != keepValues {
			if err := r.client.Delete(ctx, s); client.IgnoreNotFound(err) != nil {
				errs = append(errs, fmt.Errorf("delete values secret %s: %w", s.Name, err))
			}
		}
	}
	return errors.Join(errs...)
}

// packageInstallApp maps an App a PackageInstall controls to the
// BundleDeployment of the same name: the serve mode's App is not bd's to
// own, yet its status is what bd reports.
func packageInstallApp(_ context.Context, o client.Object) []reconcile.Request {
	ref := metav1.GetControllerOf(o)
	if ref == nil || ref.Kind != "PackageInstall" || ref.APIVersion != packagingv1alpha1.SchemeGroupVersion.String() {
		return nil
	}
	return []reconcile.Request{{NamespacedName: client.ObjectKey{Name: o.GetName()}}}
}
