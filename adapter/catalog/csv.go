package catalog

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	datav1alpha1 "carvel.dev/kapp-controller/pkg/apiserver/apis/datapackaging/v1alpha1"
	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	"github.com/operator-framework/operator-registry/alpha/property"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// csvInfo is what a Package and its PackageMetadata show of a bundle's CSV.
type csvInfo struct {
	displayName, description, longDescription string
	icon, provider, suggestedNamespace        string
	maintainers                               []datav1alpha1.Maintainer
	categories                                []string
	// installModes are the supported ones; nil when the catalog does not
	// say.
	installModes map[string]bool
	createdAt    *metav1.Time
}

// csvOf reads the bundle's CSV in either form a catalog carries it: the
// whole CSV (an olm.bundle.object property) or its metadata
// (olm.csv.metadata). A bundle with neither (catalogs need not carry it,
// operator-controller's test catalog does not) is described by its package
// alone, and its install modes are left to the adapter's conversion.
// csvJSON is the CSV declcfg's loader took from the bundle's objects, if it
// loaded the bundle.
func csvOf(props *property.Properties, csvJSON string) (csvInfo, error) {
	if len(props.CSVMetadatas) > 0 {
		m := props.CSVMetadatas[0]
		return info(m.Annotations, m.DisplayName, m.Description, nil, m.Provider.Name, m.Maintainers, m.InstallModes), nil
	}
	raw := []byte(csvJSON)
	if len(raw) == 0 {
		for _, o := range props.BundleObjects {
			var head struct{ Kind string }
			if json.Unmarshal(o.Data, &head) == nil && head.Kind == operatorsv1alpha1.ClusterServiceVersionKind {
				raw = o.Data
				break
			}
		}
	}
	if len(raw) == 0 {
		return csvInfo{}, nil
	}
	var csv operatorsv1alpha1.ClusterServiceVersion
	if err := json.Unmarshal(raw, &csv); err != nil {
		return csvInfo{}, fmt.Errorf("the bundle's ClusterServiceVersion cannot be read: %w", err)
	}
	return info(csv.Annotations, csv.Spec.DisplayName, csv.Spec.Description, csv.Spec.Icon, csv.Spec.Provider.Name, csv.Spec.Maintainers, csv.Spec.InstallModes), nil
}

func info(ann map[string]string, display, long string, icons []operatorsv1alpha1.Icon, provider string,
	maintainers []operatorsv1alpha1.Maintainer, modes []operatorsv1alpha1.InstallMode) csvInfo {
	in := csvInfo{
		displayName: display, longDescription: long, provider: provider,
		description:        ann["description"],
		suggestedNamespace: ann["operatorframework.io/suggested-namespace"],
		installModes:       map[string]bool{},
	}
	for _, i := range icons {
		// kapp-controller shows SVG icons only.
		if i.MediaType == "image/svg+xml" && i.Data != "" {
			in.icon = i.Data
			break
		}
	}
	for _, m := range maintainers {
		if m.Name != "" {
			in.maintainers = append(in.maintainers, datav1alpha1.Maintainer{Name: m.Name})
		}
	}
	for _, c := range strings.Split(ann["categories"], ",") {
		if c = strings.TrimSpace(c); c != "" {
			in.categories = append(in.categories, c)
		}
	}
	for _, m := range modes {
		if m.Supported {
			in.installModes[string(m.Type)] = true
		}
	}
	for _, layout := range []string{time.RFC3339, "2006-01-02 15:04:05", "2006-01-02T15:04:05", "2006-01-02"} {
		if t, err := time.Parse(layout, strings.TrimSpace(ann["createdAt"])); err == nil {
			in.createdAt = &metav1.Time{Time: t}
			break
		}
	}
	return in
}

func encodeIcon(data []byte) string { return base64.StdEncoding.EncodeToString(data) }
