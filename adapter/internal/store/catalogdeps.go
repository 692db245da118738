package store

import (
	"context"
	"fmt"
	"slices"
	"strings"

	packagingv1alpha1 "carvel.dev/kapp-controller/pkg/apis/packaging/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/catalog"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/fieldowner"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/packaging"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/packagingapi"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/status"
	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
	"github.com/rukpak-kapp/rukpak-kapp/convert"
)

// catalogDeps meets a catalog bundle's unmet dependencies from the catalog
// it came from, as OLM v0 did: what the catalog's namespace already has a
// PackageInstall for is waited for, the rest is installed as PackageInstalls
// of its own (labelled with the PackageInstall that needs it), and what no
// Package of the catalog can meet is refused before anything is written.
// It reads the catalog's Packages through packages (as kapp-controller
// shows them to the namespace, from a cache made once its packaging API is
// served) and PackageInstalls from the API server (direct: a
// namespace lets the adapter read them only where it installs dependencies,
// and a dependency is resolved only while a bundle waits for one).
type catalogDeps struct {
	direct   client.Reader
	packages *packagingapi.Packages
	writer   client.Client
	// waitsOn says the bundle of the PackageInstall other (ns/name) waits
	// for the PackageInstall self: then the two need each other (nil:
	// never known).
	waitsOn func(other, self string) bool
}

// forbidden turns a refused read or write of PackageInstalls in ns into
// what to do about it.
func forbidden(err error, ns string) error {
	if !apierrors.IsForbidden(err) {
		return err
	}
	return fmt.Errorf("namespace %s does not let rukpak-kapp install a catalog bundle's dependencies there; let it with "+
		"kubectl create rolebinding %s -n %s --clusterrole %s --serviceaccount <the adapter's namespace, rukpak-system by default>:rukpak-kapp, "+
		"or set the value installDependencies: false to only wait for them: %w", ns, catalog.DependenciesRole, ns, catalog.DependenciesRole, err)
}

// requiredByDepth bounds the walk up the required-by labels when looking
// for a cycle.
const requiredByDepth = 16

// fromCatalog says bd is a catalog BundleDeployment that installs its
// dependencies from its catalog (its values did not opt out).
func fromCatalog(bd *rukpakv1alpha2.BundleDeployment) bool {
	_, ok := catalog.EntryOf(bd.Labels, bd.Annotations)
	return ok && bd.Annotations[catalog.AnnotationInstallDependencies] != "false" &&
		bd.Annotations[catalog.AnnotationPackagesNS] != "" && bd.Annotations[catalog.AnnotationInstall] != ""
}

// met is what meet found.
type met struct {
	// wait says what the bundle waits for (DependenciesInstalling) or why
	// it cannot be installed (DependenciesUnmet); nil: nothing to wait for
	// (a dependency cycle whose other end waits for this bundle).
	wait *status.Failure
	// waited are the PackageInstalls (ns/name) it waits for.
	waited []string
	// watched says that only a change the adapter watches can end the wait,
	// so it is not looked at again on a timer: a catalog Package (what no
	// Package meets), an App of an installed bundle (a PackageInstall that
	// installs a version out of range goes through its BundleDeployment's
	// App), or the bundle itself (what is invalid).
	watched bool
}

// meet resolves unmet against bd's catalog.
func (c catalogDeps) meet(ctx context.Context, bd *rukpakv1alpha2.BundleDeployment, unmet []convert.Unmet) (met, error) {
	ns, self := bd.Annotations[catalog.AnnotationPackagesNS], bd.Annotations[catalog.AnnotationInstall]
	var needs []catalog.Need
	var others []string
	for _, u := range unmet {
		d := u.Dependency
		switch {
		case d.Invalid != "":
			others = append(others, u.Message)
		case d.Type == convert.DependencyPackage:
			needs = append(needs, catalog.Need{Package: d.Package, Range: d.VersionRange, What: d.String()})
		case d.Type == convert.DependencyGVK:
			needs = append(needs, catalog.Need{GVK: d.GVK, What: d.String()})
		default:
			others = append(others, u.Message)
		}
	}
	if len(needs) == 0 {
		// What is invalid changes only with the bundle.
		return met{wait: unmetFailure(others), watched: true}, nil
	}
	offers, present, err := c.read(ctx, ns, self, needs)
	if err != nil {
		return met{}, err
	}
	res := catalog.Resolve(needs, offers, present)
	if len(res.Refused) > 0 {
		return met{wait: &status.Failure{Kind: status.DependenciesUnmet, Message: fmt.Sprintf("what the bundle requires cannot be met from its catalog (the Packages seen from namespace %s%s), so nothing was installed for it: %s",
			ns, c.globalToo(), strings.Join(append(res.Refused, others...), "; "))}, watched: true}, nil
	}
	chain, err := c.requiredBy(ctx, ns, self)
	if err != nil {
		return met{}, err
	}
	if len(res.Install) > 0 {
		if f, err := c.serviceAccount(ctx, ns); f != nil || err != nil {
			return met{wait: f}, err
		}
	}
	var doing, waited []string
	for _, o := range res.Install {
		name, f, err := c.install(ctx, ns, self, o)
		if f != nil || err != nil {
			return met{wait: f}, err
		}
		waited = append(waited, ns+"/"+name)
		doing = append(doing, fmt.Sprintf("installing %s %s from the catalog as PackageInstall %s/%s (kctrl package installed get -i %s -n %s)",
			o.Entry.Package, o.Entry.Version, ns, name, name, ns))
	}
	for _, p := range res.Wait {
		switch {
		case slices.Contains(chain, p.Name):
			// A cycle: that PackageInstall waits for this one. OLM v0
			// installs a cycle together; this end goes first.
			continue
		case c.waitsOn != nil && c.waitsOn(ns+"/"+p.Name, ns+"/"+self):
			// Two PackageInstalls that need each other, made by users: the
			// other waits already, so this one goes first, as OLM v0
			// installs a cycle together.
			log.FromContext(ctx).Info("PackageInstalls need each other: this one installs first", "packageInstall", ns+"/"+self, "needs", ns+"/"+p.Name)
			continue
		}
		waited = append(waited, ns+"/"+p.Name)
		doing = append(doing, fmt.Sprintf("waiting for PackageInstall %s/%s to install %s", ns, p.Name, p.Package))
	}
	if len(others) > 0 {
		return met{wait: unmetFailure(append(others, doing...)), waited: waited}, nil
	}
	if len(doing) == 0 {
		return met{}, nil
	}
	return met{wait: &status.Failure{Kind: status.DependenciesInstalling, Message: strings.Join(doing, "; ")}, waited: waited}, nil
}

// globalToo names the global packaging namespace, whose Packages every
// namespace sees too.
func (c catalogDeps) globalToo() string {
	if g := c.packages.Global(); g != "" {
		return ", kapp-controller's global packaging namespace " + g + " included"
	}
	return ""
}

func unmetFailure(msgs []string) *status.Failure {
	return &status.Failure{Kind: status.DependenciesUnmet, Message: strings.Join(msgs, "; ")}
}

// read lists the offers of the catalog's Packages seen from ns that may
// meet needs (those of the packages named, unless an API is needed: then
// all of them, from memory) and the PackageInstalls of its packages in ns
// (but self's).
func (c catalogDeps) read(ctx context.Context, ns, self string, needs []catalog.Need) ([]catalog.Offer, []catalog.Present, error) {
	var pkgs []string
	if !slices.ContainsFunc(needs, func(n catalog.Need) bool { return n.Package == "" }) {
		pkgs = []string{}
		for _, n := range needs {
			pkgs = append(pkgs, n.Package)
		}
	}
	offers, err := c.packages.Offers(ctx, ns, pkgs)
	if err != nil {
		return nil, nil, fmt.Errorf("read the catalog's Packages seen from namespace %s to resolve dependencies: %w", ns, err)
	}
	packageOf := map[string]string{}
	for _, o := range offers {
		packageOf[o.Entry.RefName] = o.Entry.Package
	}
	var installs packagingv1alpha1.PackageInstallList
	if err := c.direct.List(ctx, &installs, client.InNamespace(ns)); err != nil {
		return nil, nil, forbidden(fmt.Errorf("list the PackageInstalls in namespace %s to resolve dependencies: %w", ns, err), ns)
	}
	var present []catalog.Present
	for _, pi := range installs.Items {
		if pi.Name == self || pi.Spec.PackageRef == nil || packageOf[pi.Spec.PackageRef.RefName] == "" {
			continue
		}
		version := pi.Status.Version
		if version == "" && pi.Spec.PackageRef.VersionSelection != nil {
			version = pi.Spec.PackageRef.VersionSelection.Constraints
		}
		present = append(present, catalog.Present{Name: pi.Name, Package: packageOf[pi.Spec.PackageRef.RefName], Version: version})
	}
	return offers, present, nil
}

// serviceAccount is the failure of an install of dependencies in ns that
// has no ServiceAccount for them; nil when it has one.
func (c catalogDeps) serviceAccount(ctx context.Context, ns string) (*status.Failure, error) {
	err := c.direct.Get(ctx, client.ObjectKey{Namespace: ns, Name: catalog.DependenciesServiceAccount}, &corev1.ServiceAccount{})
	switch {
	case apierrors.IsNotFound(err):
		return unmetFailure([]string{fmt.Sprintf("the bundle's dependencies would be installed from the catalog with the ServiceAccount %s of namespace %s, which does not exist, so nothing was installed for it: "+
			"create it with the rights to install the catalog's operators (as for kctrl package install --service-account-name), or set the value installDependencies: false to only wait for them",
			catalog.DependenciesServiceAccount, ns)}), nil
	case err != nil:
		return nil, forbidden(fmt.Errorf("get ServiceAccount %s/%s: %w", ns, catalog.DependenciesServiceAccount, err), ns)
	}
	return nil, nil
}

// requiredBy are the PackageInstalls that (transitively) required self.
func (c catalogDeps) requiredBy(ctx context.Context, ns, self string) ([]string, error) {
	var chain []string
	for name := self; len(chain) < requiredByDepth; {
		pi := &packagingv1alpha1.PackageInstall{}
		if err := c.direct.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, pi); err != nil {
			if apierrors.IsNotFound(err) {
				return chain, nil
			}
			return nil, forbidden(fmt.Errorf("get PackageInstall %s/%s: %w", ns, name, err), ns)
		}
		next := pi.Labels[catalog.LabelRequiredBy]
		if next == "" || slices.Contains(chain, next) {
			return chain, nil
		}
		chain = append(chain, next)
		name = next
	}
	return chain, nil
}

// install makes the PackageInstall of o, named after its package, with
// the namespace's ServiceAccount for dependencies; one that exists already
// for that package is taken as it is (an earlier look made it). One of that
// name for another package is a failure naming it: nothing is written over
// it.
func (c catalogDeps) install(ctx context.Context, ns, self string, o catalog.Offer) (string, *status.Failure, error) {
	version, err := catalog.PackageVersion(o.Entry.Version)
	if err != nil {
		return "", nil, err
	}
	pi := &packagingv1alpha1.PackageInstall{
		ObjectMeta: metav1.ObjectMeta{Name: o.Entry.Package, Namespace: ns,
			Labels:      map[string]string{catalog.LabelRequiredBy: self},
			Annotations: map[string]string{catalog.LabelRequiredBy: fmt.Sprintf("installed by rukpak-kapp because PackageInstall %s needs package %s", self, o.Entry.Package)}},
		Spec: packagingv1alpha1.PackageInstallSpec{
			ServiceAccountName: catalog.DependenciesServiceAccount,
			PackageRef:         &packagingv1alpha1.PackageRef{RefName: o.Entry.RefName, VersionSelection: packaging.VersionSelection(version)},
		},
	}
	err = c.writer.Create(ctx, pi, client.FieldOwner(fieldowner.Name))
	switch {
	case apierrors.IsAlreadyExists(err):
		existing := &packagingv1alpha1.PackageInstall{}
		if err := c.direct.Get(ctx, client.ObjectKey{Namespace: ns, Name: pi.Name}, existing); err != nil {
			return "", nil, forbidden(fmt.Errorf("get PackageInstall %s/%s: %w", ns, pi.Name, err), ns)
		}
		if ref := existing.Spec.PackageRef; ref == nil || ref.RefName != o.Entry.RefName {
			return "", unmetFailure([]string{fmt.Sprintf("the bundle requires package %s, which rukpak-kapp would install from the catalog as PackageInstall %s/%s, "+
				"but a PackageInstall of that name installs something else, so nothing was installed for it: install %s yourself (kctrl package install -p %s -n %s), "+
				"or set the value installDependencies: false to only wait for it", o.Entry.Package, ns, pi.Name, o.Entry.Package, o.Entry.RefName, ns)}), nil
		}
	case err != nil:
		return "", nil, forbidden(fmt.Errorf("create PackageInstall %s/%s for dependency %s: %w", ns, pi.Name, o.Entry.Package, err), ns)
	}
	return pi.Name, nil, nil
}
