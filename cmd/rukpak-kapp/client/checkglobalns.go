package client

import (
	"fmt"

	appsv1 "k8s.io/api/apps/v1"

	"github.com/rukpak-kapp/rukpak-kapp/adapter"
)

const globalNamespaceCheck = "packaging global namespace"

// globalNamespaceOf is d's flag that names the global packaging
// namespace (kapp-controller's takes one dash or two, the adapter's two),
// def when not given; known is false when d is nil.
func globalNamespaceOf(d *appsv1.Deployment, def string) (ns string, known bool) {
	if d == nil {
		return "", false
	}
	for _, flag := range []string{"--packaging-global-namespace", "-packaging-global-namespace"} {
		if v, set := flagOf(d, flag); set {
			return v, true
		}
	}
	return def, true
}

// describeGlobal names a global packaging namespace, or its absence.
func describeGlobal(ns string) string {
	if ns == "" {
		return "no namespace's"
	}
	return fmt.Sprintf("those of namespace %s", ns)
}

// evalGlobalNamespace compares the global packaging namespace the adapter
// reads catalog Packages from with kapp-controller's, from their
// Deployments (kapp-controller shares none without its flag; the adapter
// reads its release's without its own): where they differ, the adapter
// and kctrl see different catalogs in every namespace.
func evalGlobalNamespace(kappDep, adapterDep *appsv1.Deployment) CheckResult {
	kapp, kappKnown := globalNamespaceOf(kappDep, "")
	mine, mineKnown := globalNamespaceOf(adapterDep, adapter.PackagingGlobalNamespace)
	switch {
	case !kappKnown || !mineKnown:
		return ok(globalNamespaceCheck, "not compared: a kapp-controller or an adapter Deployment was not found")
	case kapp != mine:
		return fail(globalNamespaceCheck, fmt.Sprintf("kapp-controller shares %s catalog Packages with every namespace, and the adapter reads %s: "+
			"a catalog bundle's dependencies, update notice, walk and upgrade check do not see what kctrl lists", describeGlobal(kapp), describeGlobal(mine)),
			fmt.Sprintf("run the adapter with --packaging-global-namespace=%q (the package's value packagingGlobalNamespace)", kapp))
	}
	return ok(globalNamespaceCheck, fmt.Sprintf("the adapter and kapp-controller both share %s catalog Packages with every namespace", describeGlobal(kapp)))
}
