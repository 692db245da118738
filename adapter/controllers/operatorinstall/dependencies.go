package operatorinstall

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	packagingv1alpha1 "carvel.dev/kapp-controller/pkg/apis/packaging/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/catalog"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/controllers/operatorinstall/plan"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/fieldowner"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/packaging"
	catalogsv1alpha1 "github.com/rukpak-kapp/rukpak-kapp/api/catalogs/v1alpha1"
	"github.com/rukpak-kapp/rukpak-kapp/convert"
)

// Cluster checks requirements against the cluster (store.Dependencies):
// the APIs it serves, the packages the other BundleDeployments installed.
type Cluster interface {
	Unmet(ctx context.Context, except string, deps []convert.Dependency) ([]convert.Unmet, error)
}

// dependencies meets what a bundle requires from the catalog it came
// from, as OLM v0 did: what the cluster meets already is met; what the
// namespace has a PackageInstall of is waited for; the rest is installed
// as PackageInstalls of its own (labelled with the install that needs it),
// with the namespace's ServiceAccount for dependencies; what no Package of
// the catalog meets is refused before anything is written. The catalog's
// Packages are read as the namespace sees them (Channels), the
// PackageInstalls from the API server (direct: a namespace lets the
// adapter read them only where it installs dependencies, and they are read
// only while a bundle waits for one).
type dependencies struct {
	cluster  Cluster
	channels Channels
	direct   client.Reader
	installs client.Reader
	writer   client.Writer
}

// notAllowedError is a read or write the namespace's RBAC refused: what
// the install waits for, said with what to do about it.
type notAllowedError struct {
	ns  string
	err error
}

func (e *notAllowedError) Error() string {
	return fmt.Sprintf("namespace %s does not let rukpak-kapp install a catalog bundle's dependencies there; let it with "+
		"kubectl create rolebinding %s -n %s --clusterrole %s --serviceaccount <the adapter's namespace, rukpak-system by default>:rukpak-kapp, "+
		"or set the value installDependencies: false to only wait for them: %v", e.ns, catalog.DependenciesRole, e.ns, catalog.DependenciesRole, e.err)
}

func (e *notAllowedError) Unwrap() error { return e.err }

// forbidden turns a refused read or write in ns into what to do about it.
func forbidden(err error, ns string) error {
	if !apierrors.IsForbidden(err) {
		return err
	}
	return &notAllowedError{ns: ns, err: err}
}

// meet meets step's requirements for oi. A failed read or write is err;
// what the namespace lacks to let it (RBAC) is said as what it waits for.
func (d dependencies) meet(ctx context.Context, oi *catalogsv1alpha1.OperatorInstall, step plan.Step) (plan.Dependencies, error) {
	if len(step.Requires) == 0 {
		return plan.Dependencies{}, nil
	}
	ns, self := oi.Namespace, oi.Name
	deps := make([]convert.Dependency, len(step.Requires))
	for i, n := range step.Requires {
		deps[i] = dependencyOf(n)
	}
	unmet, err := d.cluster.Unmet(ctx, plan.BundleDeploymentName(oi), deps)
	if err != nil {
		return plan.Dependencies{}, fmt.Errorf("check the bundle's requirements against the cluster: %w", err)
	}
	var out plan.Dependencies
	var needs []catalog.Need
	for _, n := range step.Requires {
		if slices.ContainsFunc(unmet, func(u convert.Unmet) bool { return u.Dependency.String() == dependencyOf(n).String() }) {
			needs = append(needs, n)
			continue
		}
		out.List = append(out.List, catalogsv1alpha1.Dependency{Package: n.Package, Requirement: n.What, Installed: true})
	}
	if len(needs) == 0 {
		return out, nil
	}
	offers, present, err := d.read(ctx, ns, self, needs)
	if err != nil {
		return d.waitOn(out, err)
	}
	res := catalog.Resolve(needs, offers, present)
	if len(res.Refused) > 0 {
		out.Unmet = fmt.Sprintf("what the bundle requires cannot be met from its catalog (the Packages seen from namespace %s%s), so nothing was installed for it: %s",
			ns, d.globalToo(), strings.Join(res.Refused, "; "))
		out.Refused = true
		return out, nil
	}
	chain, err := d.requiredBy(ctx, ns, self)
	if err != nil {
		return d.waitOn(out, err)
	}
	if len(res.Install) > 0 {
		if msg, err := d.serviceAccount(ctx, ns); msg != "" || err != nil {
			if err != nil {
				return d.waitOn(out, err)
			}
			out.Unmet = msg
			return out, nil
		}
	}
	var doing []string
	for _, o := range res.Install {
		name, msg, err := d.install(ctx, ns, self, o)
		switch {
		case err != nil:
			return d.waitOn(out, err)
		case msg != "":
			out.Unmet = msg
			return out, nil
		}
		out.List = append(out.List, catalogsv1alpha1.Dependency{Package: o.Entry.Package, Requirement: requirementOf(needs, o), PackageInstall: name})
		doing = append(doing, fmt.Sprintf("installing %s %s from the catalog as PackageInstall %s/%s (kctrl package installed get -i %s -n %s)",
			o.Entry.Package, o.Entry.Version, ns, name, name, ns))
	}
	for _, p := range res.Wait {
		out.List = append(out.List, catalogsv1alpha1.Dependency{Package: p.Package, Requirement: requirementOfPackage(needs, p.Package), PackageInstall: p.Name})
		switch waits, err := d.waitsFor(ctx, ns, p.Name, self); {
		case err != nil:
			return d.waitOn(out, err)
		case slices.Contains(chain, p.Name), waits:
			// A cycle: that install needs this one. OLM v0 installs a cycle
			// together; this end goes first.
			log.FromContext(ctx).Info("installs need each other: this one installs first", "operatorInstall", ns+"/"+self, "needs", ns+"/"+p.Name)
			continue
		}
		doing = append(doing, fmt.Sprintf("waiting for PackageInstall %s/%s to install %s", ns, p.Name, p.Package))
	}
	out.Installing = strings.Join(doing, "; ")
	return out, nil
}

// waitOn says a failed read or write: RBAC the namespace lacks is what the
// install waits for (a sentence to act on), anything else an error to
// retry with backoff.
func (d dependencies) waitOn(out plan.Dependencies, err error) (plan.Dependencies, error) {
	var refused *notAllowedError
	if errors.As(err, &refused) {
		out.Installing = err.Error()
		return out, nil
	}
	return out, err
}

func dependencyOf(n catalog.Need) convert.Dependency {
	if n.Package != "" {
		return convert.Dependency{Type: convert.DependencyPackage, Package: n.Package, VersionRange: n.Range}
	}
	return convert.Dependency{Type: convert.DependencyGVK, GVK: n.GVK}
}

// requirementOf names the needs o meets.
func requirementOf(needs []catalog.Need, o catalog.Offer) string {
	var out []string
	for _, n := range needs {
		if n.Package == o.Entry.Package || n.Package == "" && slices.Contains(o.Provides, n.GVK) {
			out = append(out, n.What)
		}
	}
	return strings.Join(out, ", ")
}

func requirementOfPackage(needs []catalog.Need, pkg string) string {
	var out []string
	for _, n := range needs {
		if n.Package == pkg || n.Package == "" {
			out = append(out, n.What)
		}
	}
	return strings.Join(out, ", ")
}

// globalToo names the global packaging namespace, whose Packages every
// namespace sees too.
func (d dependencies) globalToo() string {
	if g := d.channels.Global(); g != "" {
		return ", kapp-controller's global packaging namespace " + g + " included"
	}
	return ""
}

// read lists the offers of the catalog's Packages seen from ns that may
// meet needs (those of the packages named, unless an API is needed: then
// all of them, from the cache) and the PackageInstalls of its packages in
// ns (but self's).
func (d dependencies) read(ctx context.Context, ns, self string, needs []catalog.Need) ([]catalog.Offer, []catalog.Present, error) {
	var pkgs []string
	if !slices.ContainsFunc(needs, func(n catalog.Need) bool { return n.Package == "" }) {
		pkgs = []string{}
		for _, n := range needs {
			pkgs = append(pkgs, n.Package)
		}
	}
	offers, err := d.channels.Offers(ctx, ns, pkgs)
	if err != nil {
		return nil, nil, fmt.Errorf("read the catalog's Packages seen from namespace %s to resolve dependencies: %w", ns, err)
	}
	packageOf := map[string]string{}
	for _, o := range offers {
		packageOf[o.Entry.RefName] = o.Entry.Package
	}
	var installs packagingv1alpha1.PackageInstallList
	if err := d.direct.List(ctx, &installs, client.InNamespace(ns)); err != nil {
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

// waitsFor says the install other (of ns) waits for self: its status
// lists self's PackageInstall among its dependencies not installed. Two
// installs that need each other are a cycle, whose second end goes first.
func (d dependencies) waitsFor(ctx context.Context, ns, other, self string) (bool, error) {
	oi := &catalogsv1alpha1.OperatorInstall{}
	if err := d.installs.Get(ctx, client.ObjectKey{Namespace: ns, Name: other}, oi); err != nil {
		return false, client.IgnoreNotFound(err)
	}
	if c := apimeta.FindStatusCondition(oi.Status.Conditions, catalogsv1alpha1.TypeInstalled); c != nil && c.Status == metav1.ConditionTrue {
		return false, nil
	}
	return slices.ContainsFunc(oi.Status.Dependencies, func(dep catalogsv1alpha1.Dependency) bool { return dep.PackageInstall == self && !dep.Installed }), nil
}

// serviceAccount says why an install of dependencies in ns cannot be made
// ("" it can): the namespace has no ServiceAccount for them.
func (d dependencies) serviceAccount(ctx context.Context, ns string) (string, error) {
	err := d.direct.Get(ctx, client.ObjectKey{Namespace: ns, Name: catalog.DependenciesServiceAccount}, &corev1.ServiceAccount{})
	switch {
	case apierrors.IsNotFound(err):
		return fmt.Sprintf("the bundle's dependencies would be installed from the catalog with the ServiceAccount %s of namespace %s, which does not exist, so nothing was installed for it: "+
			"create it with the rights to install the catalog's operators (as for kctrl package install --service-account-name), or set the value installDependencies: false to only wait for them",
			catalog.DependenciesServiceAccount, ns), nil
	case err != nil:
		return "", forbidden(fmt.Errorf("get ServiceAccount %s/%s: %w", ns, catalog.DependenciesServiceAccount, err), ns)
	}
	return "", nil
}

// requiredByDepth bounds the walk up the required-by labels when looking
// for a cycle.
const requiredByDepth = 16

// requiredBy are the PackageInstalls that (transitively) required self.
func (d dependencies) requiredBy(ctx context.Context, ns, self string) ([]string, error) {
	var chain []string
	for name := self; len(chain) < requiredByDepth; {
		pi := &packagingv1alpha1.PackageInstall{}
		if err := d.direct.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, pi); err != nil {
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
// name for another package is a refusal naming it: nothing is written over
// it.
func (d dependencies) install(ctx context.Context, ns, self string, o catalog.Offer) (name, refused string, err error) {
	version, err := catalog.PackageVersion(o.Entry.Version)
	if err != nil {
		return "", "", err
	}
	pi := &packagingv1alpha1.PackageInstall{
		ObjectMeta: metav1.ObjectMeta{Name: o.Entry.Package, Namespace: ns,
			Labels:      map[string]string{catalog.LabelRequiredBy: self},
			Annotations: map[string]string{catalog.AnnotationRequiredBy: fmt.Sprintf("installed by rukpak-kapp because PackageInstall %s needs package %s", self, o.Entry.Package)}},
		Spec: packagingv1alpha1.PackageInstallSpec{
			ServiceAccountName: catalog.DependenciesServiceAccount,
			PackageRef:         &packagingv1alpha1.PackageRef{RefName: o.Entry.RefName, VersionSelection: packaging.VersionSelection(version)},
		},
	}
	err = d.writer.Create(ctx, pi, client.FieldOwner(fieldowner.Name))
	switch {
	case apierrors.IsAlreadyExists(err):
		existing := &packagingv1alpha1.PackageInstall{}
		if err := d.direct.Get(ctx, client.ObjectKey{Namespace: ns, Name: pi.Name}, existing); err != nil {
			return "", "", forbidden(fmt.Errorf("get PackageInstall %s/%s: %w", ns, pi.Name, err), ns)
		}
		if ref := existing.Spec.PackageRef; ref == nil || ref.RefName != o.Entry.RefName {
			return "", fmt.Sprintf("the bundle requires package %s, which rukpak-kapp would install from the catalog as PackageInstall %s/%s, "+
				"but a PackageInstall of that name installs something else, so nothing was installed for it: install %s yourself (kctrl package install -p %s -n %s), "+
				"or set the value installDependencies: false to only wait for it", o.Entry.Package, ns, pi.Name, o.Entry.Package, o.Entry.RefName, ns), nil
		}
	case err != nil:
		return "", "", forbidden(fmt.Errorf("create PackageInstall %s/%s for dependency %s: %w", ns, pi.Name, o.Entry.Package, err), ns)
	}
	return pi.Name, "", nil
}
