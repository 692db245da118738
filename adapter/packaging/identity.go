package packaging

import (
	"encoding/json"
	"errors"
	"fmt"

	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
	"github.com/rukpak-kapp/rukpak-kapp/convert"
)

// IdentityOf is what bd's bundle says of itself, for its Package and
// PackageMetadata: a registry+v1 bundle's CSV (csv), a chart's Chart.yaml
// with its values schema when it has a valid one (chart: the files of the
// chart's directory), and a plain bundle, which says nothing of itself,
// its BundleDeployment's name. The live serve mode and the export read
// the same facts from different places (content Secrets, a fresh layout).
func IdentityOf(bd *rukpakv1alpha2.BundleDeployment, csv *convert.Package, chart map[string][]byte) (Identity, []byte, error) {
	switch bd.Spec.ProvisionerClassName {
	case rukpakv1alpha2.ClassRegistry:
		if csv == nil {
			return Identity{}, nil, errors.New("the registry+v1 bundle's metadata was not recorded")
		}
		return Identity{Version: csv.Version, DisplayName: csv.Name,
			Description: fmt.Sprintf("The registry+v1 bundle of %s %s, converted to plain objects", csv.Name, csv.Version)}, nil, nil
	case rukpakv1alpha2.ClassHelm:
		chartYAML, ok := chart["Chart.yaml"]
		if !ok {
			return Identity{}, nil, errors.New("the chart has no Chart.yaml")
		}
		identity, err := ChartIdentity(chartYAML)
		var schema []byte
		if s, ok := chart["values.schema.json"]; ok && json.Valid(s) {
			schema = s
		}
		return identity, schema, err
	}
	return Identity{DisplayName: bd.Name, Description: "Bundle " + bd.Name}, nil, nil
}
