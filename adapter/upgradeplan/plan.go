package upgradeplan

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/bundlefiles"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/catalog"
	installplan "github.com/rukpak-kapp/rukpak-kapp/adapter/controllers/operatorinstall/plan"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/internal/store"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/takeover"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/translate"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/webhooks/crdsafety"
	catalogsv1alpha1 "github.com/rukpak-kapp/rukpak-kapp/api/catalogs/v1alpha1"
	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
	"github.com/rukpak-kapp/rukpak-kapp/convert"
)

// Input is what the plan of a catalog install's upgrade is made
// from.
type Input struct {
	// Install is the OperatorInstall, BD the BundleDeployment it wrote, as
	// installed.
	Install *catalogsv1alpha1.OperatorInstall
	BD      *rukpakv1alpha2.BundleDeployment
	// Published is its channel, as its Packages publish it.
	Published []catalog.Node
	// To is the version asked for (the OLM version or the Package's);
	// "": the highest version the channel reaches.
	To string
	// Fetcher fetches each step's bundle (store.SourceFetcher, with the
	// caller's keychain).
	Fetcher store.Fetcher
	// LiveCRD reads a CRD as the cluster has it; nil, nil when it has none.
	LiveCRD func(ctx context.Context, name string) (*apiextensionsv1.CustomResourceDefinition, error)
	// Objects lists a CRD's custom resources in the cluster, which the
	// CRD upgrade safety check validates against each new schema.
	Objects func(crd *apiextensionsv1.CustomResourceDefinition) crdsafety.Lister
}

// Plan is what an upgrade along the channel does, hop by hop: the
// path a walk takes, and for each step the CRDs it changes with the
// verdict the adapter's CRD upgrade safety check gives, the RBAC the
// operator gains and loses, the images that change, the install modes and
// the dependencies it adds.
type Plan struct {
	BundleDeployment string `json:"bundleDeployment"`
	Package          string `json:"package"`
	Channel          string `json:"channel"`
	Installed        string `json:"installed"`
	To               string `json:"to"`
	// Path are the versions installed one after the other, the installed
	// one first.
	Path []string `json:"path"`
	// WatchNamespaces are the namespaces the install watches (empty: all
	// namespaces where the bundle supports it).
	WatchNamespaces []string `json:"watchNamespaces,omitempty"`
	Hops            []Hop    `json:"hops"`
}

// Refused says a hop would be refused: the walk would stop there.
func (p *Plan) Refused() bool {
	return slices.ContainsFunc(p.Hops, func(h Hop) bool { return h.Refused() })
}

// Hop is one step of the path.
type Hop struct {
	From  string `json:"from"`
	To    string `json:"to"`
	Image string `json:"image"`
	// CRDs are the CRDs added, removed or changed.
	CRDs []CRDChange `json:"crds,omitempty"`
	// ClusterRules and NamespaceRules are the RBAC rules of the
	// operator's ClusterRoles and Roles, gained and lost.
	ClusterRules   RuleChange `json:"clusterRules,omitzero"`
	NamespaceRules RuleChange `json:"namespaceRules,omitzero"`
	// Images are the container images added and removed.
	Images Change `json:"images,omitzero"`
	// InstallModes are the install modes the step's bundle supports (the
	// conversion refuses a step that does not support the watched
	// namespaces: Failed).
	InstallModes []string `json:"installModes,omitempty"`
	// Dependencies are what the step's bundle requires that the one
	// before did not.
	Dependencies []string `json:"dependencies,omitempty"`
	// Failed says why the adapter could not fetch or convert the step's
	// bundle: its own error (an install mode the watched namespaces need
	// and the bundle does not support, among others).
	Failed string `json:"failed,omitempty"`
}

// Refused says the adapter would refuse the step.
func (h Hop) Refused() bool {
	return h.Failed != "" || slices.ContainsFunc(h.CRDs, func(c CRDChange) bool { return !c.Allowed })
}

// CRDChange is one CRD of a step.
type CRDChange struct {
	Name string `json:"name"`
	// Change is added, removed or changed.
	Change string `json:"change"`
	// Allowed is the CRD upgrade safety check's verdict on a change;
	// Verdict says why (the refusal, or why no check applies).
	Allowed bool   `json:"allowed"`
	Verdict string `json:"verdict,omitempty"`
}

// Change is what a step adds and removes.
type Change struct {
	Added   []string `json:"added,omitempty"`
	Removed []string `json:"removed,omitempty"`
}

// RuleChange is the RBAC a step gains and loses.
type RuleChange struct {
	Gained []string `json:"gained,omitempty"`
	Lost   []string `json:"lost,omitempty"`
}

// rendered is one step's bundle, as the adapter would install it.
type rendered struct {
	objects  []*unstructured.Unstructured
	metadata *convert.Metadata
}

// Compute plans in's upgrade along its channel: the path the walk would
// take (catalog.ShortestPath; SelfCertified: straight to the version), and
// each step's bundle rendered as the adapter renders it (store.Materialize)
// and compared with the one before. Nothing is written.
func Compute(ctx context.Context, in Input) (*Plan, error) {
	bd := in.BD
	installed, ok := catalog.EntryOf(bd.Labels, bd.Annotations)
	if !ok || bd.Spec.Source.Image == nil {
		return nil, fmt.Errorf("BundleDeployment %s names no catalog bundle it installs: no upgrade along a channel to plan", bd.Name)
	}
	installed.RefName = in.Install.Spec.RefName
	path, err := upgradePath(installed, in.Install.Spec.UpgradeConstraintPolicy, in.Published, in.To)
	if err != nil {
		return nil, err
	}
	plan := &Plan{BundleDeployment: bd.Name, Package: installed.Package, Channel: installed.Channel, Installed: installed.Version}
	for _, n := range path {
		plan.Path = append(plan.Path, n.Entry.Version)
	}
	plan.To = plan.Path[len(plan.Path)-1]
	watched, err := bundlefiles.WatchNamespaces(bd)
	if err != nil {
		return nil, err
	}
	plan.WatchNamespaces = watched
	if len(path) < 2 {
		return plan, nil
	}
	prev, err := render(ctx, in, bd)
	if err != nil {
		return nil, fmt.Errorf("read the installed bundle %s: %w", bd.Spec.Source.Image.Ref, err)
	}
	for i, n := range path[1:] {
		hop := Hop{From: path[i].Entry.Version, To: n.Entry.Version}
		if n.Image == "" {
			return nil, fmt.Errorf("the Package of %s names no bundle image", n.Entry.Version)
		}
		view := installplan.BundleDeployment(in.Install, installplan.StepOf(in.Install, n))
		hop.Image = view.Spec.Source.Image.Ref
		next, err := render(ctx, in, view)
		if err != nil {
			hop.Failed = err.Error()
			plan.Hops = append(plan.Hops, hop)
			break
		}
		if hop.CRDs, err = crdChanges(ctx, in, bd, prev, next, i == 0); err != nil {
			return nil, err
		}
		hop.ClusterRules = ruleChange(rules(prev.objects, "ClusterRole"), rules(next.objects, "ClusterRole"))
		hop.NamespaceRules = ruleChange(rules(prev.objects, "Role"), rules(next.objects, "Role"))
		hop.Images = change(images(prev.objects), images(next.objects))
		hop.InstallModes = next.metadata.InstallModes
		hop.Dependencies = change(dependencies(prev.metadata), dependencies(next.metadata)).Added
		plan.Hops = append(plan.Hops, hop)
		prev = next
	}
	return plan, nil
}

// upgradePath is the path from installed to the version asked for (the
// highest reachable when to is empty), as the walk takes it.
func upgradePath(installed catalog.Entry, policy string, published []catalog.Node, to string) ([]catalog.Node, error) {
	var entries []catalog.Entry
	for _, n := range published {
		entries = append(entries, n.Entry)
	}
	target := installed
	switch {
	case to == "":
		if up := catalog.UpgradesFrom(installed, entries, policy); up.Available() {
			target = up.Target()
		}
	default:
		i := slices.IndexFunc(published, func(n catalog.Node) bool {
			return n.Entry.Package == installed.Package && (n.Entry.Version == to || n.Entry.PackageVersion() == to)
		})
		if i < 0 {
			return nil, fmt.Errorf("channel %s publishes no version %s", installed.Channel, to)
		}
		target = published[i].Entry
	}
	if target.Bundle == installed.Bundle {
		return []catalog.Node{{Entry: installed}}, nil
	}
	path := catalog.MovePath(installed, target, published, policy)
	if path == nil {
		return nil, fmt.Errorf("channel %s does not reach %s from %s, the version installed, along its edges (it reaches %s in one edge): no upgrade path to plan",
			installed.Channel, target.Version, installed.Version, strings.Join(catalog.Reachable(installed, entries), ", "))
	}
	return path, nil
}

// render fetches bd's bundle and lays it out as the adapter does.
func render(ctx context.Context, in Input, bd *rukpakv1alpha2.BundleDeployment) (*rendered, error) {
	m, err := store.Materialize(ctx, in.Fetcher, bd, convert.FreshCertificates(time.Now()))
	if err != nil {
		return nil, err
	}
	out := &rendered{metadata: &convert.Metadata{}}
	if m.Layout.Metadata != nil {
		// A registry+v1 bundle's, as its conversion read it.
		out.metadata = m.Layout.Metadata
	}
	for _, name := range slices.Sorted(maps.Keys(m.Layout.Files)) {
		if !strings.HasSuffix(name, ".yaml") && !strings.HasSuffix(name, ".yml") && !strings.HasSuffix(name, ".json") {
			continue
		}
		objs, err := takeover.ParseManifest(m.Layout.Files[name])
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		out.objects = append(out.objects, objs...)
	}
	return out, nil
}

// crdChanges compares the steps' CRDs, judging each change with the CRD
// upgrade safety check (the webhook's Decide) against the cluster's
// custom resources; the first step's change is judged against the CRD the
// cluster has.
func crdChanges(ctx context.Context, in Input, bd *rukpakv1alpha2.BundleDeployment, prev, next *rendered, first bool) ([]CRDChange, error) {
	before, after := crds(prev.objects), crds(next.objects)
	var out []CRDChange
	for _, name := range slices.Sorted(maps.Keys(after)) {
		nw := after[name]
		old, ok := before[name]
		if ok && equalSpecs(old, nw) {
			// The bundles agree: the step leaves the CRD as it is.
			continue
		}
		if first && in.LiveCRD != nil {
			// The first step updates the CRD the cluster has (kapp's
			// update is judged against the live object).
			live, err := in.LiveCRD(ctx, name)
			if err != nil {
				return nil, fmt.Errorf("read CRD %s: %w", name, err)
			}
			if live != nil {
				old, ok = live, true
			}
		}
		if !ok {
			out = append(out, CRDChange{Name: name, Change: "added", Allowed: true})
			continue
		}
		d := crdsafety.Decide(ctx, crdsafety.Input{Old: ownedBy(old, bd), New: ownedBy(nw, bd), Operation: "UPDATE", BundleDeployment: bd.Name,
			OptedOut: crdsafety.OptedOut(bd), Objects: objectsOf(in, old)})
		c := CRDChange{Name: name, Change: "changed", Allowed: d.Allowed, Verdict: d.Message}
		if d.Allowed {
			c.Verdict = d.Reason
		}
		out = append(out, c)
	}
	for _, name := range slices.Sorted(maps.Keys(before)) {
		if _, ok := after[name]; !ok {
			out = append(out, CRDChange{Name: name, Change: "removed", Allowed: true,
				Verdict: "the CRD stays: rukpak-kapp deletes no CRD an upgrade drops, nor its custom resources"})
		}
	}
	return out, nil
}

// ownedBy is crd as bd installs it: labelled with its owner, as the
// webhook finds it on the cluster's CRD (the bundle's own has no label).
func ownedBy(crd *apiextensionsv1.CustomResourceDefinition, bd *rukpakv1alpha2.BundleDeployment) *apiextensionsv1.CustomResourceDefinition {
	crd = crd.DeepCopy()
	if crd.Labels == nil {
		crd.Labels = map[string]string{}
	}
	maps.Copy(crd.Labels, translate.OwnerLabels(bd.Name))
	return crd
}

func objectsOf(in Input, crd *apiextensionsv1.CustomResourceDefinition) crdsafety.Lister {
	if in.Objects == nil {
		return noObjects{}
	}
	return in.Objects(crd)
}

// noObjects is a cluster without custom resources.
type noObjects struct{}

func (noObjects) List(context.Context, string, string, int64) (*unstructured.UnstructuredList, error) {
	return &unstructured.UnstructuredList{}, nil
}

func equalSpecs(a, b *apiextensionsv1.CustomResourceDefinition) bool {
	x, y := a.Spec.DeepCopy(), b.Spec.DeepCopy()
	// The conversion webhook's caBundle is the adapter's, fresh each render.
	for _, s := range []*apiextensionsv1.CustomResourceDefinitionSpec{x, y} {
		if s.Conversion != nil && s.Conversion.Webhook != nil && s.Conversion.Webhook.ClientConfig != nil {
			s.Conversion.Webhook.ClientConfig.CABundle = nil
		}
	}
	return apiequality.Semantic.DeepEqual(x, y)
}

func crds(objs []*unstructured.Unstructured) map[string]*apiextensionsv1.CustomResourceDefinition {
	out := map[string]*apiextensionsv1.CustomResourceDefinition{}
	for _, o := range objs {
		if o.GetKind() != "CustomResourceDefinition" {
			continue
		}
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, crd) == nil {
			out[crd.Name] = crd
		}
	}
	return out
}

// rules are the RBAC rules of the objects of kind (ClusterRole or Role),
// one line each: verbs, then group/resource (or URL), then the names.
func rules(objs []*unstructured.Unstructured, kind string) []string {
	var out []string
	for _, o := range objs {
		if o.GetKind() != kind {
			continue
		}
		list, _, _ := unstructured.NestedSlice(o.Object, "rules")
		for _, r := range list {
			rule, _ := r.(map[string]any)
			out = append(out, ruleLines(rule, o.GetNamespace())...)
		}
	}
	return out
}

func ruleLines(rule map[string]any, ns string) []string {
	strs := func(key string) []string {
		v, _, _ := unstructured.NestedStringSlice(rule, key)
		return v
	}
	verbs := strings.Join(strs("verbs"), ",")
	where := ""
	if ns != "" {
		where = " in " + ns
	}
	var out []string
	for _, url := range strs("nonResourceURLs") {
		out = append(out, verbs+" "+url)
	}
	names := ""
	if n := strs("resourceNames"); len(n) > 0 {
		names = " named " + strings.Join(n, ",")
	}
	for _, g := range strs("apiGroups") {
		for _, r := range strs("resources") {
			res := r
			if g != "" {
				res = g + "/" + r
			}
			out = append(out, verbs+" "+res+names+where)
		}
	}
	return out
}

func ruleChange(before, after []string) RuleChange {
	c := change(before, after)
	return RuleChange{Gained: c.Added, Lost: c.Removed}
}

// images are the container images the objects' pods run.
func images(objs []*unstructured.Unstructured) []string {
	var out []string
	for _, o := range objs {
		spec := podSpecPath(o.GetKind())
		for _, field := range []string{"containers", "initContainers"} {
			list, _, _ := unstructured.NestedSlice(o.Object, append(slices.Clone(spec), field)...)
			for _, c := range list {
				if image, _, _ := unstructured.NestedString(c.(map[string]any), "image"); image != "" {
					out = append(out, image)
				}
			}
		}
	}
	return out
}

// podSpecPath is where an object of kind holds its pods' spec: a Pod's own,
// a CronJob's job template's, else a workload's pod template's.
func podSpecPath(kind string) []string {
	switch kind {
	case "Pod":
		return []string{"spec"}
	case "CronJob":
		return []string{"spec", "jobTemplate", "spec", "template", "spec"}
	default:
		return []string{"spec", "template", "spec"}
	}
}

func dependencies(m *convert.Metadata) []string {
	var out []string
	for _, d := range m.Dependencies {
		out = append(out, d.String())
	}
	return out
}

// change is what after adds to before and removes from it, each sorted
// and once.
func change(before, after []string) Change {
	b, a := sets.New(before...), sets.New(after...)
	return Change{Added: nilIfEmpty(sets.List(a.Difference(b))), Removed: nilIfEmpty(sets.List(b.Difference(a)))}
}

// nilIfEmpty keeps an empty list out of the plan's JSON and YAML.
func nilIfEmpty(s []string) []string {
	if len(s) == 0 {
		return nil
	}
	return s
}
