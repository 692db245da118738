package bundledeployment

import (
	"fmt"
	"slices"
	"strings"

	rukpakv1alpha1 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha1"
	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
)

// Classes maps each provisioner class the adapter claims to the built-in
// class it installs it as. A built-in class maps to itself. Any other name
// is an alias: rukpak claims the built-in names, so an alias lets
// rukpak-kapp run alongside rukpak on one cluster while BundleDeployments move
// over one at a time.
type Classes map[string]string

var builtinClasses = []string{rukpakv1alpha2.ClassPlain, rukpakv1alpha2.ClassHelm, rukpakv1alpha2.ClassRegistry}

// ParseClasses reads the --classes list: NAME claims a built-in class,
// NAME=BUILTIN claims NAME and installs it like BUILTIN.
func ParseClasses(entries []string) (Classes, error) {
	out := Classes{}
	for _, e := range entries {
		name, as, alias := strings.Cut(e, "=")
		name, as = strings.TrimSpace(name), strings.TrimSpace(as)
		if !alias {
			as = name
		}
		if !slices.Contains(builtinClasses, as) {
			return nil, fmt.Errorf("class %q: rukpak-kapp installs %s; name one of them, or claim another name as one with NAME=%s",
				e, strings.Join(builtinClasses, ", "), rukpakv1alpha2.ClassPlain)
		}
		if prev, dup := out[name]; dup && prev != as {
			return nil, fmt.Errorf("class %q is claimed as both %s and %s", name, prev, as)
		}
		out[name] = as
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no provisioner class to claim")
	}
	return out, nil
}

// Claims says whether the adapter handles bd at all. A BundleDeployment of
// rukpak's first API has two classes, its own (rukpak v0.16's
// BundleDeployment controllers claimed it by that) and its template's (its
// Bundle's, which rukpak's Bundle controllers unpacked, and which is its
// v1alpha2 class): both must be claimed, so the adapter never writes what a
// rukpak running alongside it writes.
func (c Classes) Claims(bd *rukpakv1alpha2.BundleDeployment) bool {
	_, ok := c[bd.Spec.ProvisionerClassName]
	if ok && rukpakv1alpha1.IsV1alpha1(bd) {
		_, ok = c[rukpakv1alpha1.OwnClass(bd)]
	}
	return ok
}

// asBuiltin is bd as the translation sees it: an alias class replaced by
// the built-in class it stands for, on a copy, so the alias is never
// written back.
func (c Classes) asBuiltin(bd *rukpakv1alpha2.BundleDeployment) *rukpakv1alpha2.BundleDeployment {
	as, ok := c[bd.Spec.ProvisionerClassName]
	if !ok || as == bd.Spec.ProvisionerClassName {
		return bd
	}
	view := bd.DeepCopy()
	view.Spec.ProvisionerClassName = as
	return view
}
