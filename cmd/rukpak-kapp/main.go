// Command rukpak-kapp serves rukpak's BundleDeployment API by handing each
// BundleDeployment to kapp-controller as an App.
package main

import (
	"fmt"
	"os"
)

func main() {
	if len(os.Args) < 2 {
		usage()
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "run":
		err = run(os.Args[2:])
	case "render":
		err = render(os.Args[2:], os.Stdout)
	case "convert":
		err = convertCmd(os.Args[2:], os.Stdout)
	case "version":
		fmt.Println(versionString())
		return
	case "migrate":
		err = migrateCmd(os.Args[2:], os.Stdout)
	case "-h", "--help", "help":
		usage()
		return
	default:
		fmt.Fprintf(os.Stderr, "unknown command %q\n\n", os.Args[1])
		usage()
		os.Exit(2)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "rukpak-kapp: %v\n", err)
		os.Exit(1)
	}
}

func usage() {
	fmt.Fprint(os.Stderr, `usage: rukpak-kapp <command> [flags]

commands:
  run      run the controller against the cluster of $KUBECONFIG (or in-cluster config)
  render   print the App (and content Secrets) the controller would apply: render -f bd.yaml [-f ...]
           or, with --as-package [--push REPO] [--namespace NS] [--installer-rbac], a Carvel Package,
           PackageMetadata, values Secret and PackageInstall that install the bundle
  version  print the version and the commit it was built from
  convert  print the plain manifests of a registry+v1 bundle directory, for kapp deploy -f -:
           convert registry-v1 DIR --install-namespace NS [--watch-namespaces A,B]
  migrate  plan: show what taking over the BundleDeployments rukpak v0.24.0 installed in the cluster of
           $KUBECONFIG will change and what blocks it, writing nothing; exits 1 when something blocks:
           migrate plan [--system-namespace NS] [--classes LIST] [-o text|json]
`)
}
