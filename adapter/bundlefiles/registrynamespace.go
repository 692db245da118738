package bundlefiles

import (
	"errors"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
	"github.com/rukpak-kapp/rukpak-kapp/convert"
)

// registryOptions are the conversion's namespaces for bd. A BundleDeployment
// without an install namespace (one of rukpak's first API, v1alpha1) is
// installed as rukpak v0.16 installed registry+v1 bundles: into the CSV's
// suggested namespace, else <package>-system, created with the bundle (the
// Namespace object returned), watching all namespaces, which the CSV must
// support.
func registryOptions(bd *rukpakv1alpha2.BundleDeployment, files map[string][]byte) (convert.Options, *unstructured.Unstructured, error) {
	images, err := Relocations(bd)
	if err != nil {
		return convert.Options{}, nil, err
	}
	if bd.Spec.InstallNamespace != "" {
		watch, err := WatchNamespaces(bd)
		return convert.Options{InstallNamespace: bd.Spec.InstallNamespace, WatchNamespaces: watch, Images: images}, nil, err
	}
	s, err := convert.SuggestedInstall(files)
	if err != nil {
		return convert.Options{}, nil, &InvalidError{Err: err}
	}
	if !s.AllNamespaces {
		// rukpak v0.16's words.
		return convert.Options{}, nil, &InvalidError{Err: errors.New("convert registry+v1 bundle to plain+v0 bundle: AllNamespace install mode must be enabled")}
	}
	ns := &unstructured.Unstructured{}
	ns.SetAPIVersion("v1")
	ns.SetKind("Namespace")
	ns.SetName(s.Namespace)
	return convert.Options{InstallNamespace: s.Namespace, WatchNamespaces: []string{""}, Images: images}, ns, nil
}
