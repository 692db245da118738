package convert

import (
	"fmt"
	"slices"
	"strings"

	"github.com/operator-framework/api/pkg/operators/v1alpha1"
)

var knownModes = []v1alpha1.InstallModeType{
	v1alpha1.InstallModeTypeAllNamespaces, v1alpha1.InstallModeTypeOwnNamespace,
	v1alpha1.InstallModeTypeSingleNamespace, v1alpha1.InstallModeTypeMultiNamespace,
}

// supportedModes is the set of install modes the CSV supports. OLM only
// ever asks about the four known types, so an unknown one (a typo in a
// published CSV) is ignored; notes say so.
func supportedModes(csv *v1alpha1.ClusterServiceVersion, notes *[]string) map[v1alpha1.InstallModeType]bool {
	out := map[v1alpha1.InstallModeType]bool{}
	for _, m := range csv.Spec.InstallModes {
		if !slices.Contains(knownModes, m.Type) {
			*notes = append(*notes, fmt.Sprintf("install mode type %q is not one of %v; it is ignored, as OLM ignores it", m.Type, knownModes))
			continue
		}
		if m.Supported {
			out[m.Type] = true
		}
	}
	return out
}

func describeModes(s map[v1alpha1.InstallModeType]bool) string {
	var names []string
	for _, k := range knownModes {
		if s[k] {
			names = append(names, string(k))
		}
	}
	return "[" + strings.Join(names, " ") + "]"
}

// targetNamespaces picks and checks the namespaces the operator watches,
// by OLM's rules: "" alone means all namespaces; a single namespace is
// OwnNamespace when it is the install namespace, else SingleNamespace;
// several are MultiNamespace (and OwnNamespace if they include the install
// namespace). With none given, all namespaces when supported, else the
// install namespace.
func targetNamespaces(modes map[v1alpha1.InstallModeType]bool, installNS string, requested []string, p *problems) []string {
	targets := dedupe(requested)
	if len(targets) == 0 {
		switch {
		case modes[v1alpha1.InstallModeTypeAllNamespaces]:
			return []string{""}
		case modes[v1alpha1.InstallModeTypeOwnNamespace]:
			return []string{installNS}
		default:
			p.addf("supported install modes %s need the namespaces to watch: set spec.config.watchNamespaces", describeModes(modes))
			return nil
		}
	}
	need := func(m v1alpha1.InstallModeType, what string) {
		if !modes[m] {
			p.addf("supported install modes %s do not support %s (%s install mode)", describeModes(modes), what, m)
		}
	}
	switch {
	case len(targets) == 1 && targets[0] == "":
		need(v1alpha1.InstallModeTypeAllNamespaces, "targeting all namespaces")
	case slices.Contains(targets, ""):
		p.addf(`spec.config.watchNamespaces: "" (all namespaces) cannot be combined with other namespaces`)
	case len(targets) == 1 && targets[0] == installNS:
		need(v1alpha1.InstallModeTypeOwnNamespace, fmt.Sprintf("watching only the install namespace %q", installNS))
	case len(targets) == 1:
		need(v1alpha1.InstallModeTypeSingleNamespace, fmt.Sprintf("watching the single namespace %q", targets[0]))
	default:
		need(v1alpha1.InstallModeTypeMultiNamespace, fmt.Sprintf("watching several namespaces %q", targets))
		if slices.Contains(targets, installNS) {
			need(v1alpha1.InstallModeTypeOwnNamespace, fmt.Sprintf("watching the install namespace %q", installNS))
		}
	}
	return targets
}

// dedupe returns the distinct values, sorted.
func dedupe(in []string) []string {
	out := slices.Clone(in)
	slices.Sort(out)
	return slices.Compact(out)
}

func allNamespaces(targets []string) bool { return len(targets) == 1 && targets[0] == "" }
