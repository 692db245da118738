package takeover

import (
	"fmt"
	"sort"
	"strings"

	kappctrlv1alpha1 "carvel.dev/kapp-controller/pkg/apis/kappctrl/v1alpha1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/translate"
	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
)

// HandBack is what happens when a BundleDeployment's class is changed to
// one rukpak-kapp does not claim: rukpak-kapp lets go without deleting
// anything, and rukpak adopts the objects when it can.
type HandBack struct {
	BundleDeployment string `json:"bundleDeployment"`
	// Adoptable says whether kapp puts Helm's ownership metadata back, so
	// rukpak's next install adopts every object in place.
	Adoptable bool `json:"adoptable"`
	// Reasons say why the objects are not made adoptable, or what to
	// watch for when they are.
	Reasons []string `json:"reasons,omitempty"`
	// Objects is what kapp changes on each object before it lets go.
	Objects []ObjectChange `json:"objects,omitempty"`
}

// Back decides how bd is handed back to rukpak, from its live App and the
// objects that App installed (kapp's inventory). chartTemplates are the
// templates of a helm bundle, nil for other classes.
//
// rukpak adopts through a Helm install: Helm patches each object to its own
// rendering, and when a patch fails it records a failed release, which
// helm-operator-plugins then uninstalls, deleting every object of it.
// So the objects are made adoptable only when no patch can fail on a field
// the API server keeps immutable, which holds when kapp installed them as
// the bundle has them (translate.StyleAsBundled).
func Back(bd *rukpakv1alpha2.BundleDeployment, app *kappctrlv1alpha1.App, live []*unstructured.Unstructured, chartTemplates map[string][]byte) HandBack {
	h := HandBack{BundleDeployment: bd.Name, Adoptable: true}
	if translate.StyleOf(app) != translate.StyleAsBundled {
		h.Adoptable = false
		h.Reasons = append(h.Reasons, fmt.Sprintf("App %s was made before rukpak-kapp installed objects as bundled: kapp added its labels to workload selectors, which rukpak's Helm cannot change back (the field is immutable, and a failed adoption makes rukpak uninstall everything); the objects are left in place without Helm's ownership metadata, so rukpak reports that it cannot import them instead", app.Name))
	}
	for _, o := range live {
		if paths := kappScoped(o); len(paths) > 0 {
			if h.Adoptable {
				h.Reasons = append(h.Reasons, fmt.Sprintf("%s carries kapp's labels at %s, which rukpak would have to change", RefOf(o), strings.Join(paths, ", ")))
			}
			h.Adoptable = false
		}
	}
	if h.Adoptable {
		for _, n := range nondeterminism(Chart{Templates: chartTemplates}) {
			h.Reasons = append(h.Reasons, "check before moving back: "+n+" (Helm patches to its own rendering; an immutable field that changes fails the adoption and rukpak then uninstalls the release)")
		}
	}
	if !h.Adoptable {
		return h
	}
	for _, o := range live {
		h.Objects = append(h.Objects, handBackChange(bd, o))
	}
	sort.Slice(h.Objects, func(i, j int) bool { return h.Objects[i].Ref.String() < h.Objects[j].Ref.String() })
	return h
}

// kappScoped lists where kapp's label scoping or pod-template ownership
// labels are on o.
func kappScoped(o *unstructured.Unstructured) []string {
	var out []string
	for _, path := range [][]string{{"spec", "selector", "matchLabels"}, {"spec", "selector"}, {"spec", "template", "metadata", "labels"}} {
		m, _, _ := unstructured.NestedStringMap(o.Object, path...)
		for k := range m {
			if strings.HasPrefix(k, "kapp.k14s.io/") {
				out = append(out, "."+strings.Join(path, "."))
				break
			}
		}
	}
	return out
}

// handBackChange is the metadata kapp puts on o for rukpak to adopt it:
// Helm's ownership label and annotations and the controller reference rukpak
// had. Helm's adoption then takes kapp's own metadata off.
func handBackChange(bd *rukpakv1alpha2.BundleDeployment, o *unstructured.Unstructured) ObjectChange {
	labels := copyMap(o.GetLabels())
	labels[translate.LabelHelmManagedBy] = translate.HelmManagedBy
	annotations := copyMap(o.GetAnnotations())
	annotations[translate.AnnotationHelmReleaseName] = bd.Name
	annotations[translate.AnnotationHelmReleaseNS] = bd.Spec.InstallNamespace
	before := refsMap(o.GetOwnerReferences())
	after := copyMap(before)
	for k, v := range refsMap(translate.OwnerReferences(bd)) {
		after[k] = v
	}
	return ObjectChange{
		Ref: RefOf(o), Action: "release",
		Labels:          diffMaps(o.GetLabels(), labels),
		Annotations:     diffMaps(o.GetAnnotations(), annotations),
		OwnerReferences: diffMaps(before, after),
	}
}
