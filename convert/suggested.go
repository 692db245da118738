package convert

import "github.com/operator-framework/api/pkg/operators/v1alpha1"

// AnnotationSuggestedNamespace is the CSV annotation naming the namespace
// its operator is meant to run in.
const AnnotationSuggestedNamespace = "operatorframework.io/suggested-namespace"

// Suggested is how rukpak up to v0.19 installed a registry+v1 bundle, having
// no install namespace of its own to go by.
type Suggested struct {
	// Namespace is the CSV's suggested namespace, else <package>-system.
	Namespace string
	// AllNamespaces says the CSV supports the AllNamespaces install mode,
	// the only one rukpak v0.16 installed.
	AllNamespaces bool
}

// SuggestedInstall reads where rukpak v0.16 installed a bundle. Only an
// unreadable bundle is an error; a bundle without a CSV suggests
// <package>-system and no install mode.
func SuggestedInstall(files map[string][]byte) (Suggested, error) {
	b, err := parse(files)
	if err != nil {
		return Suggested{}, err
	}
	s := Suggested{Namespace: b.pkg + "-system"}
	if b.csv == nil {
		return s, nil
	}
	if ns := b.csv.Annotations[AnnotationSuggestedNamespace]; ns != "" {
		s.Namespace = ns
	}
	for _, m := range b.csv.Spec.InstallModes {
		if m.Type == v1alpha1.InstallModeTypeAllNamespaces && m.Supported {
			s.AllNamespaces = true
		}
	}
	return s, nil
}
