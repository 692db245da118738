package takeover

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
)

// AnnotationTakenOver marks the App of a taken-over BundleDeployment with
// the BundleDeployment generation it took over. While the generation is
// unchanged the App installs rukpak's release as rukpak rendered it
// (Files); from the next generation on, rukpak-kapp's own rendering.
const AnnotationTakenOver = "core.rukpak.io/taken-over-generation"

// TakenOverGeneration reads AnnotationTakenOver; ok is false when absent.
func TakenOverGeneration(annotations map[string]string) (generation int64, ok bool) {
	v, found := annotations[AnnotationTakenOver]
	if !found {
		return 0, false
	}
	g, err := strconv.ParseInt(v, 10, 64)
	return g, err == nil
}

// KeepsRukpakRendering says whether bd's App still installs rukpak's
// release content: it was taken over at bd's current generation.
func KeepsRukpakRendering(bd *rukpakv1alpha2.BundleDeployment, appAnnotations map[string]string) bool {
	g, ok := TakenOverGeneration(appAnnotations)
	return ok && g == bd.Generation
}

// ReleaseCRDs are the CustomResourceDefinitions in the crds/ directory of
// the release's chart, which Helm installs before the release and never
// records in its manifest. (Subcharts' crds/ are not in the release.)
func ReleaseCRDs(rel *Release) ([]*unstructured.Unstructured, error) {
	var out []*unstructured.Unstructured
	for _, name := range slices.Sorted(maps.Keys(rel.Chart.Files)) {
		if !strings.HasPrefix(name, "crds/") || !(strings.HasSuffix(name, ".yaml") || strings.HasSuffix(name, ".yml") || strings.HasSuffix(name, ".json")) {
			continue
		}
		objs, err := ParseManifest(rel.Chart.Files[name])
		if err != nil {
			return nil, fmt.Errorf("chart %s: %w", name, err)
		}
		out = append(out, objs...)
	}
	return out, nil
}

// TakeOverObjects are every object of rukpak's release, the chart's crds/
// included: what the take-over reads and plans for.
func TakeOverObjects(in Input) []*unstructured.Unstructured {
	return append(append([]*unstructured.Unstructured{}, in.Installed...), in.ChartCRDs...)
}

// AppObjects are the objects the take-over App applies: rukpak's release
// without the chart's crds/, which are left as Helm leaves them (no App
// owns a chart's CRDs, so deleting a BundleDeployment never deletes them).
func AppObjects(in Input) []*unstructured.Unstructured {
	return append([]*unstructured.Unstructured{}, in.Installed...)
}

// Files lays rukpak's installed objects out as a plain bundle, one JSON
// document per file under manifests/, for the take-over App: what kapp
// applies is exactly what rukpak rendered, so no spec or data changes and
// no workload rolls. Owner references to the BundleDeployment are left
// out (kapp owns the objects now); everything else is kept, rukpak's owner
// labels included.
func Files(installed []*unstructured.Unstructured) (map[string][]byte, error) {
	out := map[string][]byte{}
	for i, o := range installed {
		o = o.DeepCopy()
		var keep []metav1.OwnerReference
		for _, r := range o.GetOwnerReferences() {
			if !isBundleDeploymentRef(r) {
				keep = append(keep, r)
			}
		}
		o.SetOwnerReferences(keep)
		data, err := json.Marshal(o.Object)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", RefOf(o), err)
		}
		// JSON is YAML: ytt passes it through without reinterpreting
		// scalars as YAML 1.1 would (yes, on, 0777).
		out[fmt.Sprintf("manifests/%04d.yaml", i)] = append(data, '\n')
	}
	return out, nil
}
