package takeover

import (
	"fmt"
	"reflect"
	"sort"
	"strings"

	kappctrlv1alpha1 "carvel.dev/kapp-controller/pkg/apis/kappctrl/v1alpha1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/translate"
	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
)

// HandBack is what happens when a BundleDeployment's class is changed to
// one rukpak-kapp does not claim: rukpak-kapp lets go without deleting
// anything, and rukpak adopts the objects when that is safe.
type HandBack struct {
	BundleDeployment string `json:"bundleDeployment"`
	// Adoptable says whether kapp puts Helm's ownership metadata back (see
	// translate.Released), so rukpak's next install adopts every object in
	// place. When false the objects are only left in place: rukpak then
	// reports that it cannot import them, and deletes nothing.
	Adoptable bool `json:"adoptable"`
	// Reasons say why the objects are not made adoptable, or what remains
	// on them.
	Reasons []string `json:"reasons,omitempty"`
	// Objects is what kapp changes on each object before it lets go.
	Objects []ObjectChange `json:"objects,omitempty"`
}

// Back decides how bd is handed back to rukpak from its live App, the
// objects that App installed (kapp's inventory, as the cluster has them)
// and, when known, what rukpak will render for bd (expected; for plain
// bundles the bundle's objects). chartTemplates are a helm bundle's
// templates, nil for other classes.
//
// rukpak adopts through a Helm install, which patches each object with
// what its rendering sets: it adds and overwrites, never removes. When
// such a patch fails, on a field the API server keeps immutable that
// rukpak renders differently, Helm records a failed release, and
// helm-operator-plugins uninstalls it, deleting the objects it adopted
// (seen on the local control plane: an adopted ConfigMap deleted, then
// recreated and deleted again on every retry). So the objects are made
// adoptable only when no immutable field would change.
func Back(bd *rukpakv1alpha2.BundleDeployment, app *kappctrlv1alpha1.App, live, expected []*unstructured.Unstructured, chartTemplates map[string][]byte) HandBack {
	h := HandBack{BundleDeployment: bd.Name, Adoptable: true}
	have := byRef(live)
	for _, ref := range sortedRefs(byRef(expected)) {
		lv, ok := have[ref]
		if !ok {
			continue
		}
		for _, path := range immutableConflicts(byRef(expected)[ref], lv) {
			h.Adoptable = false
			h.Reasons = append(h.Reasons, fmt.Sprintf("%s: rukpak renders %s differently and the API server does not allow the change; its adoption would fail and rukpak would then uninstall (delete) what it adopted, so the objects are left in place without Helm's ownership metadata", ref, path))
		}
	}
	if translate.StyleOf(app) != translate.StyleAsBundled {
		h.Reasons = append(h.Reasons, fmt.Sprintf("App %s was made before objects were installed as bundled: kapp's label stays in workload selectors and pod templates (Helm never removes a field), which is harmless", app.Name))
	}
	for _, n := range nondeterminism(Chart{Templates: chartTemplates}) {
		h.Reasons = append(h.Reasons, "check before moving back: "+n+"; a Job or selector it renders differently would fail rukpak's adoption")
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

// immutableConflicts lists the fields the API server keeps immutable on
// which Helm's patch from want would change have.
func immutableConflicts(want, have *unstructured.Unstructured) []string {
	var paths [][]string
	switch want.GroupVersionKind().GroupKind().String() {
	case "Deployment.apps", "ReplicaSet.apps", "DaemonSet.apps":
		paths = [][]string{{"spec", "selector"}}
	case "StatefulSet.apps":
		paths = [][]string{{"spec", "selector"}, {"spec", "serviceName"}, {"spec", "volumeClaimTemplates"}, {"spec", "podManagementPolicy"}}
	case "Job.batch":
		paths = [][]string{{"spec", "selector"}, {"spec", "template"}, {"spec", "completionMode"}}
	case "RoleBinding.rbac.authorization.k8s.io", "ClusterRoleBinding.rbac.authorization.k8s.io":
		paths = [][]string{{"roleRef"}}
	case "Service":
		paths = [][]string{{"spec", "clusterIP"}}
	case "PersistentVolumeClaim":
		paths = [][]string{{"spec", "accessModes"}, {"spec", "storageClassName"}, {"spec", "volumeName"}, {"spec", "selector"}}
	case "CustomResourceDefinition.apiextensions.k8s.io":
		paths = [][]string{{"spec", "scope"}, {"spec", "names", "plural"}, {"spec", "group"}}
	case "ConfigMap", "Secret":
		if immutable, _, _ := unstructured.NestedBool(have.Object, "immutable"); immutable {
			paths = [][]string{{"data"}, {"binaryData"}}
		}
	}
	var out []string
	for _, p := range paths {
		w, found, _ := unstructured.NestedFieldNoCopy(want.Object, p...)
		if !found {
			continue
		}
		h, _, _ := unstructured.NestedFieldNoCopy(have.Object, p...)
		if !covers(h, w) {
			out = append(out, "."+strings.Join(p, "."))
		}
	}
	return out
}

// covers says whether patching have with want changes nothing: every map
// key want sets has the same value in have (recursively), lists item by
// item.
func covers(have, want any) bool {
	switch w := want.(type) {
	case map[string]any:
		h, ok := have.(map[string]any)
		if !ok {
			return len(w) == 0 && have == nil
		}
		for k, v := range w {
			if !covers(h[k], v) {
				return false
			}
		}
		return true
	case []any:
		h, ok := have.([]any)
		if !ok || len(h) < len(w) {
			return false
		}
		for i := range w {
			if !covers(h[i], w[i]) {
				return false
			}
		}
		return true
	default:
		return reflect.DeepEqual(have, want)
	}
}

// handBackChange is the metadata kapp puts on o for rukpak to adopt it:
// Helm's ownership label and annotations and the controller reference rukpak
// had. kapp's own metadata stays: Helm does not remove it.
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
