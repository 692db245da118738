package catalog

import (
	"maps"
	"slices"
	"strings"

	kappctrlv1alpha1 "carvel.dev/kapp-controller/pkg/apis/kappctrl/v1alpha1"
	datav1alpha1 "carvel.dev/kapp-controller/pkg/apiserver/apis/datapackaging/v1alpha1"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/bundlefiles"
)

// Relocatable files of a Package's inline fetch: an overlay that puts the
// images lock on the OperatorInstall, and kbld's configuration.
const (
	relocateFile   = "images-lock.yml"
	kbldConfigFile = "kbld-config.yml"
	// imagesLockFetched is where the App finds the images lock of the
	// Package's images bundle: its second fetch goes to directory 1.
	imagesLockFetched = "1/.imgpkg/images.yml"
)

// Relocatable makes p's App follow a relocation of its package repository
// with Carvel's own mechanism: the App fetches imagesBundle (an imgpkg
// bundle whose lock holds the bundle image and the operator's images, as
// lock records them), and its kbld step, after ytt, sets the
// OperatorInstall's bundle image from that lock, which imgpkg points at
// the copy once the repository is relocated. kapp-controller's package
// repository step rewrites imagesBundle itself (an imgpkgBundle image is a
// key kbld looks for). The OperatorInstall carries lock, and hands it to
// the BundleDeployment it writes, so the adapter can run the operator's
// images, which are inside the bundle, from the same copy
// (bundlefiles.Relocations).
func Relocatable(p *datav1alpha1.Package, lock bundlefiles.ImagesLock, imagesBundle string) {
	if p.Annotations == nil {
		p.Annotations = map[string]string{}
	}
	p.Annotations[bundlefiles.AnnotationImagesLock] = lock.String()
	spec := p.Spec.Template.Spec
	inline := spec.Fetch[0].Inline
	inline.Paths = maps.Clone(inline.Paths)
	inline.Paths[relocateFile] = `#@ load("@ytt:overlay", "overlay")
#@overlay/match by=overlay.subset({"kind": "OperatorInstall"})
---
metadata:
  #@overlay/match missing_ok=True
  annotations:
    #@overlay/match missing_ok=True
    ` + bundlefiles.AnnotationImagesLock + `: ` + quote(lock.String()) + `
`
	inline.Paths[kbldConfigFile] = `apiVersion: kbld.k14s.io/v1alpha1
kind: Config
minimumRequiredVersion: 0.31.0
searchRules:
- keyMatcher:
    path: [spec, image]
`
	spec.Fetch = append(spec.Fetch, kappctrlv1alpha1.AppFetch{ImgpkgBundle: &kappctrlv1alpha1.AppFetchImgpkgBundle{Image: imagesBundle}})
	// Two fetches go to directories 0 and 1.
	spec.Template[0].Ytt.Paths = []string{"0"}
	spec.Template = append(spec.Template, kappctrlv1alpha1.AppTemplate{Kbld: &kappctrlv1alpha1.AppTemplateKbld{Paths: []string{"-", imagesLockFetched}}})
}

// ImagesOf are the images of a Package published from a catalog: its
// bundle image first, then what the catalog lists as the bundle's related
// images (opm lists there the CSV's relatedImages and the images of its
// Deployments), sorted.
func ImagesOf(bundle string, related []string) []string {
	rest := slices.DeleteFunc(slices.Clone(related), func(s string) bool { return s == bundle || strings.TrimSpace(s) == "" })
	slices.Sort(rest)
	return append([]string{bundle}, slices.Compact(rest)...)
}
