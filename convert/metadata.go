package convert

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
)

const (
	metadataDir = "metadata"
	packageKey  = "operators.operatorframework.io.bundle.package.v1"
	channelsKey = "operators.operatorframework.io.bundle.channels.v1"
	defaultKey  = "operators.operatorframework.io.bundle.channel.default.v1"
)

// typedValue is one entry of a dependencies or properties list.
type typedValue struct {
	Type  string          `json:"type"`
	Value json.RawMessage `json:"value"`
}

// metadata is what metadata/ declares. operator-registry reads it without
// regard to file names: every file directly under metadata/, in name
// order, each for its first document; the first file holding annotations
// gives the annotations, the first holding a non-empty dependencies list
// the dependencies, and likewise for properties. A file that does not
// decode as one of them is skipped, as there.
type metadata struct {
	annotations      map[string]string
	annotationsFile  string
	dependencies     []typedValue
	dependenciesFile string
	properties       []typedValue
	propertiesFile   string
	// skipped names the files that are not YAML or JSON, which OLM
	// ignores, with the decoding error.
	skipped []string
}

func readMetadata(files map[string][]byte) metadata {
	var names []string
	for p := range files {
		rest, ok := strings.CutPrefix(p, metadataDir+"/")
		if ok && rest != "" && !strings.Contains(rest, "/") {
			names = append(names, p)
		}
	}
	sort.Strings(names)
	var md metadata
	for _, name := range names {
		var raw map[string]any
		if err := decodeFirst(files[name], &raw); err != nil {
			md.skipped = append(md.skipped, fmt.Sprintf("%s (%v)", name, err))
			continue
		}
		if md.annotationsFile == "" {
			if a := bundleAnnotations(files[name]); a != nil {
				md.annotations, md.annotationsFile = a, name
			}
		}
		if md.dependenciesFile == "" {
			var d struct {
				Dependencies []typedValue `json:"dependencies"`
			}
			if decodeFirst(files[name], &d) == nil && len(d.Dependencies) > 0 {
				md.dependencies, md.dependenciesFile = d.Dependencies, name
			}
		}
		if md.propertiesFile == "" {
			var pr struct {
				Properties []typedValue `json:"properties"`
			}
			if decodeFirst(files[name], &pr) == nil && len(pr.Properties) > 0 {
				md.properties, md.propertiesFile = pr.Properties, name
			}
		}
	}
	return md
}

// bundleAnnotations reads the string annotations of a file that names the
// bundle's package or channels (what operator-registry looks for); other
// values are not strings in any bundle format and are dropped.
func bundleAnnotations(data []byte) map[string]string {
	var doc struct {
		Annotations map[string]any `json:"annotations"`
	}
	if decodeFirst(data, &doc) != nil {
		return nil
	}
	out := map[string]string{}
	for k, v := range doc.Annotations {
		if s, ok := v.(string); ok {
			out[k] = s
		}
	}
	if out[packageKey] == "" && out[channelsKey] == "" && out[defaultKey] == "" {
		return nil
	}
	return out
}

// decodeFirst decodes the first YAML or JSON document of data.
func decodeFirst(data []byte, into any) error {
	return utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096).Decode(into)
}
