package convert

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/blang/semver/v4"

	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
)

const (
	metadataDir = "metadata"
	packageKey  = "operators.operatorframework.io.bundle.package.v1"
	channelsKey = "operators.operatorframework.io.bundle.channels.v1"
	defaultKey  = "operators.operatorframework.io.bundle.channel.default.v1"
)

// typedValue is one entry of a dependencies list.
type typedValue struct {
	Type  string          `json:"type"`
	Value json.RawMessage `json:"value"`
}

var semverZero semver.Version

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
	properties       []Property
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
				Properties []Property `json:"properties"`
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

const (
	csvPropertiesKey    = "olm.properties"
	csvPropertiesSource = "the ClusterServiceVersion's olm.properties annotation"
)

// Metadata is what a bundle says about itself and what it needs from the
// cluster, for checking dependencies before or after converting it.
type Metadata struct {
	// Package is the bundle's identity: the package name of its
	// annotations and the version of its ClusterServiceVersion. Another
	// bundle's olm.package dependency is met by it.
	Package Package `json:"package"`
	// PackageProperty is the bundle's own olm.package property when its
	// properties declare one (old bundles may name another version there).
	PackageProperty *Package `json:"packageProperty,omitempty"`
	// Labels are the bundle's olm.label properties, which other bundles'
	// olm.label dependencies look for.
	Labels []string `json:"labels,omitempty"`
	// Properties are every property the bundle declares (in metadata/ and
	// in the CSV's olm.properties annotation), verbatim, in that order.
	Properties []Property `json:"properties,omitempty"`
	// Dependencies are what it needs from the cluster, sorted.
	Dependencies []Dependency `json:"dependencies,omitempty"`
	// InstallModes are the install modes its ClusterServiceVersion
	// supports (of the four OLM knows); none without one. They are not part of the
	// metadata a conversion writes (its bytes, and so every content
	// Secret's name, stay as they were).
	InstallModes []string `json:"-"`
}

// ReadMetadata reads a bundle's identity and dependencies without
// converting it. Only an unreadable bundle is an error.
func ReadMetadata(files map[string][]byte) (*Metadata, error) {
	b, err := parse(files)
	if err != nil {
		return nil, err
	}
	return b.metadata(), nil
}

func (b *bundle) metadata() *Metadata {
	m := &Metadata{Package: Package{Name: b.pkg}}
	if b.csv != nil && !b.csv.Spec.Version.Equals(semverZero) {
		m.Package.Version = b.csv.Spec.Version.String()
	}
	m.Properties = append(append(m.Properties, b.meta.properties...), b.csvProperties...)
	for _, p := range m.Properties {
		switch p.Type {
		case DependencyPackage:
			var v struct {
				PackageName string `json:"packageName"`
				Version     string `json:"version"`
			}
			if json.Unmarshal(p.Value, &v) == nil && m.PackageProperty == nil {
				m.PackageProperty = &Package{Name: v.PackageName, Version: v.Version}
			}
		case DependencyLabel:
			var v struct {
				Label string `json:"label"`
			}
			if json.Unmarshal(p.Value, &v) == nil && v.Label != "" && !slices.Contains(m.Labels, v.Label) {
				m.Labels = append(m.Labels, v.Label)
			}
		}
	}
	m.Dependencies = b.dependencies()
	if b.csv != nil {
		// As the conversion reads them: the known types only.
		modes := supportedModes(b.csv, new([]string))
		for _, mode := range knownModes {
			if modes[mode] {
				m.InstallModes = append(m.InstallModes, string(mode))
			}
		}
	}
	return m
}
