package templates

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	rukpakv1alpha1 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha1"
)

// ErrMaxGenerated is rukpak's message for a BundleDeployment that has as
// many generated Bundles as it may have, none of them its template's.
const ErrMaxGenerated = "reached the maximum generated Bundle limit"

// Desired is the Bundle bd's template asks for, as rukpak v0.16 made it:
// named <bd>-<hash>, the template's labels plus the owner and template
// hash labels, the template's annotations, the template's spec, and a
// controller reference to bd (at v1alpha1, as rukpak's were).
func Desired(bd *rukpakv1alpha1.BundleDeployment) *rukpakv1alpha1.Bundle {
	hash := TemplateHash(bd.Spec.Template)
	labels := maps.Clone(bd.Spec.Template.Labels)
	if labels == nil {
		labels = map[string]string{}
	}
	labels[rukpakv1alpha1.LabelOwnerKind] = rukpakv1alpha1.OwnerKindBundleDeployment
	labels[rukpakv1alpha1.LabelOwnerName] = bd.Name
	labels[rukpakv1alpha1.LabelBundleTemplateHash] = hash
	b := &rukpakv1alpha1.Bundle{
		ObjectMeta: metav1.ObjectMeta{
			Name:            BundleName(bd.Name, hash),
			Labels:          labels,
			Annotations:     maps.Clone(bd.Spec.Template.Annotations),
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(bd, rukpakv1alpha1.GroupVersion.WithKind("BundleDeployment"))},
		},
		Spec: *bd.Spec.Template.Spec.DeepCopy(),
	}
	b.SetGroupVersionKind(rukpakv1alpha1.GroupVersion.WithKind("Bundle"))
	return b
}

// Selector is the label selector of bd's generated Bundles (list them with
// it, then pass them to Generate and Superseded).
func Selector(bd string) map[string]string {
	return map[string]string{rukpakv1alpha1.LabelOwnerKind: rukpakv1alpha1.OwnerKindBundleDeployment, rukpakv1alpha1.LabelOwnerName: bd}
}

// Generation is what to do about bd's Bundle for its current template.
type Generation struct {
	// Current is the existing Bundle of the template; nil when there is none.
	Current *rukpakv1alpha1.Bundle
	// Create is the Bundle to make when there is none and bd may have one
	// more.
	Create *rukpakv1alpha1.Bundle
	// Blocked says why no Bundle can be made (for HasValidBundle Unknown,
	// ReconcileFailed); empty otherwise.
	Blocked string
}

// Generate finds the Bundle of bd's current template among the Bundles
// listed with Selector, or says to make it. rukpak matched by the template
// hash label, oldest first; Bundles bd does not control are not its own
// (a take-over keeps the BundleDeployment's UID, so rukpak's are). A new
// Bundle is made only while bd has fewer than MaxGeneratedBundles: a
// template that changes faster than its Bundles install cannot pile them up.
func Generate(bd *rukpakv1alpha1.BundleDeployment, listed []rukpakv1alpha1.Bundle) Generation {
	owned := Owned(bd, listed)
	hash := TemplateHash(bd.Spec.Template)
	for i := range owned {
		if owned[i].Labels[rukpakv1alpha1.LabelBundleTemplateHash] == hash {
			return Generation{Current: owned[i].DeepCopy()}
		}
	}
	if len(owned) >= rukpakv1alpha1.MaxGeneratedBundles {
		names := make([]string, len(owned))
		for i := range owned {
			names[i] = owned[i].Name
		}
		return Generation{Blocked: fmt.Sprintf("%s: the BundleDeployment has %d Bundles (%s) and none is its current template's; "+
			"delete the ones no longer needed and the template's Bundle is made",
			ErrMaxGenerated, len(owned), strings.Join(names, ", "))}
	}
	return Generation{Create: Desired(bd)}
}

// Superseded are the Bundles to delete once the Bundle named current is
// installed: every other Bundle bd owns, as rukpak deleted them. Until
// then the installed one stays, so a failing new template never leaves the
// BundleDeployment without the Bundle it runs.
func Superseded(bd *rukpakv1alpha1.BundleDeployment, listed []rukpakv1alpha1.Bundle, current string) []string {
	var out []string
	for _, b := range Owned(bd, listed) {
		if b.Name != current && b.DeletionTimestamp.IsZero() {
			out = append(out, b.Name)
		}
	}
	return out
}

// Owned are the listed Bundles that carry bd's owner labels and a
// controller reference to it, oldest first (then by name).
func Owned(bd *rukpakv1alpha1.BundleDeployment, listed []rukpakv1alpha1.Bundle) []rukpakv1alpha1.Bundle {
	var out []rukpakv1alpha1.Bundle
	for _, b := range listed {
		if b.Labels[rukpakv1alpha1.LabelOwnerKind] != rukpakv1alpha1.OwnerKindBundleDeployment || b.Labels[rukpakv1alpha1.LabelOwnerName] != bd.Name {
			continue
		}
		if ref := metav1.GetControllerOf(&b); ref == nil || ref.UID != bd.UID || ref.Kind != "BundleDeployment" {
			continue
		}
		out = append(out, b)
	}
	slices.SortStableFunc(out, func(a, b rukpakv1alpha1.Bundle) int {
		if !a.CreationTimestamp.Equal(&b.CreationTimestamp) {
			if a.CreationTimestamp.Before(&b.CreationTimestamp) {
				return -1
			}
			return 1
		}
		return strings.Compare(a.Name, b.Name)
	})
	return out
}
