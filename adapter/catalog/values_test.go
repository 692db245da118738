package catalog

import (
	"fmt"
	"testing"

	"sigs.k8s.io/yaml"
)

// The two schemas of a catalog Package's values say the same: every value
// kctrl is shown, ytt accepts with the same default.
func TestValuesSchemas_Agree(t *testing.T) {
	t.Parallel()
	for _, class := range []string{"core-rukpak-io-registry", "core-rukpak-io-plain"} {
		ytt := map[string]any{}
		if err := yaml.Unmarshal([]byte(valuesSchemaYtt(Install{InstallNamespace: "ns", Class: class})), &ytt); err != nil {
			t.Fatal(err)
		}
		props := valuesSchema("ns", nil, class == "core-rukpak-io-plain")["properties"].(map[string]any)
		for name, p := range props {
			def := p.(map[string]any)["default"]
			got, ok := ytt[name]
			if !ok {
				t.Errorf("%s: ytt does not accept %s", class, name)
				continue
			}
			if _, list := def.([]string); list {
				continue // ytt names a list's item type by one item
			}
			if fmt.Sprint(got) != fmt.Sprint(def) {
				t.Errorf("%s: %s defaults to %v in ytt, %v for kctrl", class, name, got, def)
			}
		}
	}
}
