package catalog

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	datav1alpha1 "carvel.dev/kapp-controller/pkg/apiserver/apis/datapackaging/v1alpha1"
	"github.com/blang/semver/v4"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/bundlefiles"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/packaging"
)

// AnnotationImage, on a catalog Package, names the bundle image the
// Package installs, for a walk's steps (the adapter installs a step without
// kapp-controller rendering its Package).
const AnnotationImage = "catalog.rukpak-kapp.dev/image"

// Node is one version of a channel as its Package publishes it: a node of
// the channel's graph.
type Node struct {
	Entry Entry
	// Image is the bundle image the Package installs.
	Image string
	// Lock is the Package's images lock, when a push wrote one.
	Lock *bundlefiles.ImagesLock
	// Requires is what the bundle requires (AnnotationRequires).
	Requires []Need
}

// NoPathError says the channel's published Packages hold no path from the
// installed bundle to the one asked for.
type NoPathError struct{ Installed, Asked Entry }

func (e *NoPathError) Error() string {
	return fmt.Sprintf("channel %s of package %s has no path from %s (installed) to %s among its published Packages: each step must replace, skip or hold the one before in its skipRange. "+
		"Ask for a version the channel reaches (kctrl package available get -p PACKAGE shows them), or set the value upgradeConstraintPolicy: %s to move anyway",
		e.Asked.Channel, e.Asked.Package, e.Installed.Version, e.Asked.Version, PolicySelfCertified)
}

// ShortestPath is the shortest path from installed to asked among
// published, both ends included (asked as published when it is, else as
// given), or nil when there is none. Among paths of one length, the one
// through higher versions wins, as OLM v0 prefers the furthest skip.
func ShortestPath(installed, asked Entry, published []Node) []Node {
	nodes := make([]Node, 0, len(published)+1)
	for _, p := range published {
		if p.Entry.Package == asked.Package && p.Entry.Bundle != installed.Bundle {
			nodes = append(nodes, p)
		}
	}
	if !slices.ContainsFunc(nodes, func(p Node) bool { return p.Entry.Bundle == asked.Bundle }) {
		nodes = append(nodes, Node{Entry: asked})
	}
	slices.SortStableFunc(nodes, func(a, b Node) int { return -compareVersions(a.Entry.Version, b.Entry.Version) })
	start := Node{Entry: installed}
	prev := map[string]*Node{installed.Bundle: nil}
	queue := []Node{start}
	for len(queue) > 0 {
		at := queue[0]
		queue = queue[1:]
		if at.Entry.Bundle == asked.Bundle {
			var path []Node
			for p := &at; p != nil; p = prev[p.Entry.Bundle] {
				path = append(path, *p)
			}
			slices.Reverse(path)
			return path
		}
		for i := range nodes {
			n := nodes[i]
			if _, seen := prev[n.Entry.Bundle]; seen || !n.Entry.ReachedFrom(at.Entry) {
				continue
			}
			from := at
			prev[n.Entry.Bundle] = &from
			queue = append(queue, n)
		}
	}
	return nil
}

func compareVersions(a, b string) int {
	va, errA := semver.Parse(a)
	vb, errB := semver.Parse(b)
	if errA != nil || errB != nil {
		return strings.Compare(a, b)
	}
	return va.Compare(vb)
}

// PackageOf names the Package that publishes e (in its catalog's
// namespace).
func PackageOf(e Entry) string {
	return packaging.PackageName(e.RefName, e.PackageVersion())
}

// Describe is the path for a message: "1.0.0 → 1.1.1 → 1.1.2".
func Describe(versions []string) string { return strings.Join(versions, " → ") }

// NodesOf reads the channel's graph from its Packages (those a catalog
// published and has not retracted: the others are skipped). The error names a catalog Package
// whose bundle image cannot be read; the nodes hold the rest.
func NodesOf(packages []datav1alpha1.Package) ([]Node, error) {
	var nodes []Node
	var errs []error
	for _, p := range packages {
		e, ok := EntryOf(p.Labels, p.Annotations)
		if _, retracted := RetractedIn(p.Annotations); !ok || retracted {
			continue
		}
		var inline map[string]string
		if t := p.Spec.Template.Spec; t != nil && len(t.Fetch) > 0 && t.Fetch[0].Inline != nil {
			inline = t.Fetch[0].Inline.Paths
		}
		image, err := ImageOf(p.Annotations, inline)
		if err != nil {
			errs = append(errs, fmt.Errorf("Package %s/%s: %w", p.Namespace, p.Name, err))
		}
		lock, err := bundlefiles.ReadImagesLock(p.Annotations)
		if err != nil {
			errs = append(errs, fmt.Errorf("Package %s/%s: %w", p.Namespace, p.Name, err))
		}
		requires, err := RequiresOf(p.Annotations)
		if err != nil {
			errs = append(errs, fmt.Errorf("Package %s/%s: %w", p.Namespace, p.Name, err))
		}
		nodes = append(nodes, Node{Entry: e, Image: image, Lock: lock, Requires: requires})
	}
	return nodes, errors.Join(errs...)
}

// RefFrom is where a step fetches n's bundle from, given the images lock
// and bundle image of the BundleDeployment that asked for the walk: the
// copy of n's bundle alongside the asked one when the package repository was
// relocated (imgpkg copy carries every bundle of the repository into one
// repository, by digest), else the image n's Package names.
func (n Node) RefFrom(asked *bundlefiles.ImagesLock, ref string) (string, error) {
	if asked == nil || n.Lock == nil {
		return n.Image, nil
	}
	repo, err := asked.RelocatedTo(ref)
	if err != nil || repo == "" {
		return n.Image, err
	}
	return repo + "@" + n.Lock.Images[n.Lock.Bundle], nil
}

// legacyBundleDeploymentFile is the file of a Package's inline fetch that
// rendered a BundleDeployment in the templates of earlier releases.
const legacyBundleDeploymentFile = "bundledeployment.yml"

// ImageOf is the bundle image a catalog Package installs: its annotation,
// else the image its template names (Packages published before the
// annotation existed).
func ImageOf(annotations map[string]string, inline map[string]string) (string, error) {
	if img := annotations[AnnotationImage]; img != "" {
		return img, nil
	}
	// The BundleDeployment's source (a template of an earlier release)
	// names it by ref:, the OperatorInstall by image:.
	for _, line := range strings.Split(inline[legacyBundleDeploymentFile]+"\n"+inline[operatorInstallFile], "\n") {
		line = strings.TrimSpace(line)
		ref, ok := strings.CutPrefix(line, "ref: ")
		if !ok {
			ref, ok = strings.CutPrefix(line, "image: ")
		}
		if ok {
			var img string
			if err := json.Unmarshal([]byte(ref), &img); err == nil && img != "" {
				return img, nil
			}
		}
	}
	return "", errors.New("the Package names no bundle image")
}
