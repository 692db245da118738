package convert

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/operator-framework/api/pkg/operators/v1alpha1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation"
)

// convert produces the objects for one install, or every problem at once.
func (b *bundle) convert(opts Options) ([]*unstructured.Unstructured, error) {
	p := b.problems
	if b.csv == nil {
		return nil, p.err(b.name())
	}
	if errs := validation.IsDNS1123Label(opts.InstallNamespace); len(errs) > 0 {
		p.addf("install namespace %q is not a namespace name: %s", opts.InstallNamespace, strings.Join(errs, "; "))
	}
	csv := b.csv
	modes := supportedModes(csv, &b.notes)
	targets := targetNamespaces(modes, opts.InstallNamespace, opts.WatchNamespaces, &p)
	b.checkUnsupported(&p)

	g := &generator{csv: csv, installNS: opts.InstallNamespace, targets: targets, shipped: map[string]bool{}, certMounts: map[string]string{}, served: map[string]servedWebhook{}, images: opts.Images}
	ownAPI := map[schema.GroupKind]struct{}{}
	for _, crd := range b.crds {
		group, _, _ := unstructured.NestedString(crd.Object, "spec", "group")
		kind, _, _ := unstructured.NestedString(crd.Object, "spec", "names", "kind")
		ownAPI[schema.GroupKind{Group: group, Kind: kind}] = struct{}{}
	}
	for _, o := range b.others {
		if o.GetAPIVersion() == "" {
			apiVersion, ok := typedByKind[o.GetKind()]
			if !ok {
				p.addf("%s %q has no apiVersion", o.GetKind(), o.GetName())
				continue
			}
			o = o.DeepCopy()
			o.SetAPIVersion(apiVersion)
			b.notes = append(b.notes, fmt.Sprintf("%s %q has no apiVersion; it is installed as %s, the only version of that kind, as OLM installs it", o.GetKind(), o.GetName(), apiVersion))
		}
		gk := o.GroupVersionKind().GroupKind()
		namespaced, ok := supportedKinds[gk]
		if _, own := ownAPI[gk]; !ok && own {
			// A sample: the operator does not need it, and OLM v0 never
			// creates it (an object of a kind named like a core kind is
			// read into that core kind, any other fails the install).
			// Created with the operator, it would act on placeholder values.
			b.notes = append(b.notes, fmt.Sprintf("%s %q is a custom resource of the bundle's own API (%s), an example the operator does not need; it is left out: create it once the operator runs if you want it", o.GetKind(), o.GetName(), o.GetAPIVersion()))
			continue
		}
		if !ok {
			p.addf("unsupported resource %q with kind %q (%s)", o.GetName(), o.GetKind(), o.GetAPIVersion())
			continue
		}
		o = o.DeepCopy()
		if namespaced {
			o.SetNamespace(opts.InstallNamespace)
		} else {
			o.SetNamespace("")
		}
		if o.GetKind() == "ServiceAccount" {
			g.shipped[o.GetName()] = true
		}
		g.add(o)
	}
	var crds []*unstructured.Unstructured
	for _, crd := range b.crds {
		crds = append(crds, crd.DeepCopy())
		g.add(crds[len(crds)-1])
	}
	source := opts.Certificates
	if source == nil {
		source = FreshCertificates(time.Now())
	}
	g.webhooks(&p, crds, source)
	g.undeclaredConversions(&p, crds)
	g.serviceAccounts(&p)
	g.permissions(&p)
	g.deployments(&p)
	g.checkDuplicates(&p)
	b.notes = append(b.notes, g.notes...)
	if err := p.err(b.name()); err != nil {
		return nil, err
	}
	sort.SliceStable(g.out, func(i, j int) bool { return less(g.out[i], g.out[j]) })
	return g.out, nil
}

// checkUnsupported names what this converter cannot install yet.
func (b *bundle) checkUnsupported(p *problems) {
	spec := b.csv.Spec
	for _, a := range spec.APIServiceDefinitions.Owned {
		p.addf("owned APIService %s.%s is not supported", a.Version, a.Group)
	}
	have := map[string]bool{}
	for _, crd := range b.crds {
		have[crd.GetName()] = true
	}
	for _, c := range spec.CustomResourceDefinitions.Owned {
		if !have[c.Name] && c.Name != "" {
			p.addf("owned CustomResourceDefinition %s is not in the bundle", c.Name)
		}
	}
}

type generator struct {
	csv       *v1alpha1.ClusterServiceVersion
	installNS string
	targets   []string
	// shipped are ServiceAccounts the bundle brings itself; they are used
	// as they are instead of generating a second one.
	shipped map[string]bool
	// certMounts names the serving Secret of each Deployment that serves
	// webhooks.
	certMounts map[string]string
	// served are the generated webhook Services, by Deployment.
	served map[string]servedWebhook
	// images relocate the operator's images (Options.Images).
	images map[string]string
	out    []*unstructured.Unstructured
	// notes say where the output differs from the bundle as shipped.
	notes []string
}

func (g *generator) add(o *unstructured.Unstructured) { g.out = append(g.out, o) }

// typed adds a generated object.
func (g *generator) typed(p *problems, obj runtime.Object, apiVersion, kind string) {
	u, err := toUnstructured(obj, apiVersion, kind)
	if err != nil {
		p.addf("%v", err)
		return
	}
	g.add(u)
}

func (g *generator) serviceAccounts(p *problems) {
	names := map[string]bool{}
	spec := g.csv.Spec.InstallStrategy.StrategySpec
	for _, d := range spec.DeploymentSpecs {
		names[d.Spec.Template.Spec.ServiceAccountName] = true
	}
	for _, perm := range append(append([]v1alpha1.StrategyDeploymentPermissions{}, spec.Permissions...), spec.ClusterPermissions...) {
		names[perm.ServiceAccountName] = true
	}
	for _, n := range slices.Sorted(maps.Keys(names)) {
		if n == "" || n == "default" || g.shipped[n] {
			continue
		}
		sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: n, Namespace: g.installNS}}
		g.typed(p, sa, "v1", "ServiceAccount")
	}
}

// permissions grant the CSV's rules. Namespaced permissions go to the
// install namespace and every target namespace (OLM v0 keeps them in the
// operator's own namespace too, for leader election); with all namespaces
// targeted they become cluster-wide, with read access to namespaces.
func (g *generator) permissions(p *problems) {
	spec := g.csv.Spec.InstallStrategy.StrategySpec
	for _, perm := range spec.Permissions {
		if allNamespaces(g.targets) {
			rules := append(append([]rbacv1.PolicyRule{}, perm.Rules...), rbacv1.PolicyRule{
				APIGroups: []string{""}, Resources: []string{"namespaces"}, Verbs: []string{"get", "list", "watch"},
			})
			g.clusterRole(p, perm.ServiceAccountName, rules)
			continue
		}
		name := nameFor(g.csv.Name+"-"+perm.ServiceAccountName, perm.ServiceAccountName, perm.Rules)
		for _, ns := range dedupe(append([]string{g.installNS}, g.targets...)) {
			g.typed(p, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, Rules: perm.Rules}, "rbac.authorization.k8s.io/v1", "Role")
			g.typed(p, &rbacv1.RoleBinding{
				ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
				RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: name},
				Subjects:   []rbacv1.Subject{g.subject(perm.ServiceAccountName)},
			}, "rbac.authorization.k8s.io/v1", "RoleBinding")
		}
	}
	for _, perm := range spec.ClusterPermissions {
		g.clusterRole(p, perm.ServiceAccountName, perm.Rules)
	}
}

// clusterRole names carry the install namespace, so two installs of one
// bundle in two namespaces do not collide.
func (g *generator) clusterRole(p *problems, sa string, rules []rbacv1.PolicyRule) {
	name := nameFor(g.csv.Name+"-"+sa, sa, g.installNS, rules)
	g.typed(p, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: name}, Rules: rules}, "rbac.authorization.k8s.io/v1", "ClusterRole")
	g.typed(p, &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: name},
		Subjects:   []rbacv1.Subject{g.subject(sa)},
	}, "rbac.authorization.k8s.io/v1", "ClusterRoleBinding")
}

func (g *generator) subject(sa string) rbacv1.Subject {
	if sa == "" {
		sa = "default"
	}
	return rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Name: sa, Namespace: g.installNS}
}

// deployments run the operator. The pod template carries the OperatorGroup
// annotations operators read through the downward API.
func (g *generator) deployments(p *problems) {
	for _, d := range g.csv.Spec.InstallStrategy.StrategySpec.DeploymentSpecs {
		if errs := validation.IsDNS1123Subdomain(d.Name); len(errs) > 0 {
			p.addf("deployment name %q is invalid: %s", d.Name, strings.Join(errs, "; "))
			continue
		}
		spec := *d.Spec.DeepCopy()
		one := int32(1)
		spec.RevisionHistoryLimit = &one
		annotations := map[string]string{}
		for k, v := range g.csv.Annotations {
			annotations[k] = v
		}
		for k, v := range spec.Template.Annotations {
			annotations[k] = v
		}
		annotations["olm.targetNamespaces"] = strings.Join(g.targets, ",")
		annotations["olm.operatorNamespace"] = g.installNS
		spec.Template.Annotations = annotations
		meta := metav1.ObjectMeta{Name: d.Name, Namespace: g.installNS, Labels: d.Label}
		if len(g.csv.Spec.WebhookDefinitions) > 0 {
			meta.Annotations = map[string]string{changeGroup: operatorsUp}
		}
		if secret, ok := g.certMounts[d.Name]; ok {
			mountCerts(&spec, secret)
		}
		relocate(&spec.Template.Spec, g.images)
		g.typed(p, &appsv1.Deployment{ObjectMeta: meta, Spec: spec}, "apps/v1", "Deployment")
	}
}

// checkDuplicates drops exact copies (a CSV may list one permission twice)
// and refuses two different objects with one identity: one would silently
// overwrite the other.
func (g *generator) checkDuplicates(p *problems) {
	seen := map[string]*unstructured.Unstructured{}
	kept := g.out[:0]
	for _, o := range g.out {
		key := strings.Join([]string{o.GroupVersionKind().Group, o.GetKind(), o.GetNamespace(), o.GetName()}, "/")
		if prev, ok := seen[key]; ok {
			if !equality.Semantic.DeepEqual(prev.Object, o.Object) {
				p.addf("two different %s objects named %q in namespace %q", o.GetKind(), o.GetName(), o.GetNamespace())
			}
			continue
		}
		seen[key] = o
		kept = append(kept, o)
	}
	g.out = kept
}

func less(a, b *unstructured.Unstructured) bool {
	if oa, ob := orderOf(a.GetKind()), orderOf(b.GetKind()); oa != ob {
		return oa < ob
	}
	if a.GetKind() != b.GetKind() {
		return a.GetKind() < b.GetKind()
	}
	if a.GetNamespace() != b.GetNamespace() {
		return a.GetNamespace() < b.GetNamespace()
	}
	return a.GetName() < b.GetName()
}

// relocate runs pod's images from where images says they are: the
// containers' and init containers' images, and environment values that
// name an image (OLM's RELATED_IMAGE_ variables, which operators read to
// start their operands).
func relocate(pod *corev1.PodSpec, images map[string]string) {
	if len(images) == 0 {
		return
	}
	for _, cs := range [][]corev1.Container{pod.InitContainers, pod.Containers} {
		for i := range cs {
			c := &cs[i]
			if to, ok := images[c.Image]; ok {
				c.Image = to
			}
			for j := range c.Env {
				if to, ok := images[c.Env[j].Value]; ok {
					c.Env[j].Value = to
				}
			}
		}
	}
}
