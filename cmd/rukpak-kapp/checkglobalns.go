package main

import (
	"fmt"

	appsv1 "k8s.io/api/apps/v1"

	"github.com/rukpak-kapp/rukpak-kapp/adapter"
)

const globalNamespaceCheck = "packaging global namespace"

// globalNamespaceOf is d's flag that names the global packaging
// namespace (kapp-controller's takes one dash or two, the adapter's two),
// its default when not given; set is false when d is nil.
func globalNamespaceOf(d *appsv1.Deployment) (string, bool) {
	if d == nil {
		return "", false
	}
	for _, flag := range []string{"--packaging-global-namespace", "-packaging-global-namespace"} {
		if v, set := flagOf(d, flag); set {
			return v, true
		}
	}
	return adapter.PackagingGlobalNamespace, true
}

// evalGlobalNamespace compares the global packaging namespace the adapter
// reads catalog Packages from with kapp-controller's, from their
// Deployments: where they differ, a catalog in kapp-controller's global
// namespace is listed by kctrl in every namespace, and the adapter does
// not see it.
func evalGlobalNamespace(kappDep, adapterDep *appsv1.Deployment) checkResult {
	kapp, kappKnown := globalNamespaceOf(kappDep)
	mine, mineKnown := globalNamespaceOf(adapterDep)
	switch {
	case !kappKnown || !mineKnown:
		return ok(globalNamespaceCheck, "not compared: a kapp-controller or an adapter Deployment was not found")
	case kapp != mine:
		return fail(globalNamespaceCheck, fmt.Sprintf("kapp-controller shares the Packages of namespace %q with every namespace, and the adapter reads those of %q: "+
			"a catalog bundle's dependencies, update notice, walk and upgrade check miss what kctrl lists", kapp, mine),
			fmt.Sprintf("run the adapter with --packaging-global-namespace=%s (the package's value packagingGlobalNamespace)", kapp))
	}
	return ok(globalNamespaceCheck, fmt.Sprintf("the adapter and kapp-controller both share the catalog Packages of namespace %s", kapp))
}
