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
	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
)

// AnnotationWalk, on the App that installs a step of a walk along the
// channel, records the whole path (JSON: the steps' bundles and versions,
// the installed one first, the one asked for last). It is how the next
// look knows where the walk started and which step was installed last:
// the App is the only object that says what kapp deployed.
const AnnotationWalk = "catalog.rukpak-kapp.dev/walk"

// AnnotationStepSince, on the App that installs a step of a walk along
// the channel, is when the adapter first wrote that step (RFC 3339): the
// bound on the step's installed objects becoming Current counts from it.
const AnnotationStepSince = "catalog.rukpak-kapp.dev/step-since"

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
}

// Walk is an install moving along its channel one edge at a time, as OLM
// v0 moves a Subscription one InstallPlan at a time.
type Walk struct {
	// Path is the shortest path from the installed bundle (first) to the
	// one asked for (last); every step reaches the next in one edge.
	Path []Node
	// Step indexes Path: the bundle installed now.
	Step int
}

// Current is the step installed now.
func (w Walk) Current() Node { return w.Path[w.Step] }

// Final says the step is the bundle asked for.
func (w Walk) Final() bool { return w.Step == len(w.Path)-1 }

// Versions are the path's versions, in order.
func (w Walk) Versions() []string {
	out := make([]string, len(w.Path))
	for i, p := range w.Path {
		out[i] = p.Entry.Version
	}
	return out
}

// walked is one recorded step: what AnnotationWalk holds.
type walked struct {
	Bundle  string `json:"bundle"`
	Version string `json:"version"`
}

// Record is the value of AnnotationWalk for w.
func (w Walk) Record() string {
	steps := make([]walked, len(w.Path))
	for i, p := range w.Path {
		steps[i] = walked{Bundle: p.Entry.Bundle, Version: p.Entry.Version}
	}
	b, _ := json.Marshal(steps)
	return string(b)
}

// Deployed is what an App says of the walk it installs: the bundle its
// spec installs, its recorded path, and whether kapp-controller deployed
// that spec.
type Deployed struct {
	// Annotations are the App's.
	Annotations map[string]string
	// Done says kapp-controller deployed the App's current spec.
	Done bool
}

// MidWalk says the App deployed a step of a walk to asked that is not its
// last: the next step is the walk's to take.
func (d Deployed) MidWalk(asked Entry) bool {
	var path []walked
	if r := d.Annotations[AnnotationWalk]; r == "" || json.Unmarshal([]byte(r), &path) != nil || len(path) < 3 {
		return false
	}
	i := slices.IndexFunc(path, func(w walked) bool { return w.Bundle == d.Annotations[AnnotationBundle] })
	return d.Done && path[len(path)-1].Bundle == asked.Bundle && i > 0 && i < len(path)-1
}

// Installed is the catalog bundle the App's last successful deploy left,
// when the App says (see installed).
func (d Deployed) Installed(pkg string) (Entry, bool) {
	e, _, ok := d.installed(pkg)
	return e, ok
}

// OneEdge is the record of a move of one edge from installed to asked: a
// path of two, so that while the move is under way the next look still
// knows what is installed.
func OneEdge(installed, asked Entry) string {
	return Walk{Path: []Node{{Entry: installed}, {Entry: asked}}, Step: 1}.Record()
}

// installed is the catalog bundle the App's last successful deploy left
// (its own step once done, else the step before it on its recorded path)
// and the recorded path; ok is false when the App does not say.
func (d Deployed) installed(pkg string) (Entry, []walked, bool) {
	var path []walked
	if r := d.Annotations[AnnotationWalk]; r != "" && json.Unmarshal([]byte(r), &path) != nil {
		path = nil
	}
	own := Entry{Package: pkg, Bundle: d.Annotations[AnnotationBundle], Version: d.Annotations[AnnotationVersion]}
	if own.Bundle == "" {
		return Entry{}, nil, false
	}
	if d.Done || d.Annotations[AnnotationHeld] == own.Bundle {
		// Deployed, or a held generation's deploy of the version that was
		// installed already.
		return own, path, true
	}
	i := slices.IndexFunc(path, func(w walked) bool { return w.Bundle == own.Bundle })
	if i < 1 {
		// A first install, or a one-edge move under way: nothing to walk
		// from that the App names.
		return Entry{}, nil, false
	}
	return Entry{Package: pkg, Bundle: path[i-1].Bundle, Version: path[i-1].Version}, path, true
}

// NoPathError says the channel's published Packages hold no path from the
// installed bundle to the one asked for.
type NoPathError struct{ Installed, Asked Entry }

func (e *NoPathError) Error() string {
	return fmt.Sprintf("channel %s of package %s has no path from %s (installed) to %s among its published Packages: each step must replace, skip or hold the one before in its skipRange. "+
		"Ask for a version the channel reaches (kctrl package available get -p PACKAGE shows them), or set the value upgradeConstraintPolicy: %s to move anyway",
		e.Asked.Channel, e.Asked.Package, e.Installed.Version, e.Asked.Version, PolicySelfCertified)
}

// PlanWalk decides which bundle an install of asked installs now, given
// what its App deployed: nil when it installs asked itself (a first
// install, one edge, the policy SelfCertified), else the walk and its step.
// A walk that reached asked is still returned (its last step), so that the
// outcome names the path. published lists the channel's Packages; it is
// called only when the App is more than one edge behind. A *NoPathError
// says no path exists.
func PlanWalk(asked Entry, policy string, app Deployed, published func() ([]Node, error)) (*Walk, error) {
	if policy == PolicySelfCertified {
		return nil, nil
	}
	installed, recorded, ok := app.installed(asked.Package)
	if !ok {
		return nil, nil
	}
	if installed.Bundle == asked.Bundle || asked.ReachedFrom(installed) {
		return finishing(asked, installed, recorded), nil
	}
	list, err := published()
	if err != nil {
		return nil, err
	}
	path := ShortestPath(installed, asked, list)
	if path == nil {
		return nil, &NoPathError{Installed: installed, Asked: asked}
	}
	if i := slices.IndexFunc(recorded, func(w walked) bool { return w.Bundle == installed.Bundle }); i > 0 && samePath(recorded[i:], path) {
		// The walk under way: keep where it started.
		prefix := make([]Node, 0, i+len(path))
		for _, w := range recorded[:i] {
			prefix = append(prefix, Node{Entry: Entry{Package: asked.Package, Channel: asked.Channel, Bundle: w.Bundle, Version: w.Version}})
		}
		return &Walk{Path: append(prefix, path...), Step: i + 1}, nil
	}
	return &Walk{Path: path, Step: 1}, nil
}

// finishing is the walk whose next step is asked itself, when the App
// recorded one that ends there: its last step. nil otherwise.
func finishing(asked, installed Entry, recorded []walked) *Walk {
	n := len(recorded)
	if n < 3 || recorded[n-1].Bundle != asked.Bundle {
		return nil
	}
	if installed.Bundle != asked.Bundle && recorded[n-2].Bundle != installed.Bundle {
		return nil
	}
	w := &Walk{Step: n - 1}
	for _, r := range recorded[:n-1] {
		w.Path = append(w.Path, Node{Entry: Entry{Package: asked.Package, Channel: asked.Channel, Bundle: r.Bundle, Version: r.Version}})
	}
	w.Path = append(w.Path, Node{Entry: asked})
	return w
}

func samePath(recorded []walked, path []Node) bool {
	if len(recorded) != len(path) {
		return false
	}
	for i := range recorded {
		if recorded[i].Bundle != path[i].Entry.Bundle {
			return false
		}
	}
	return true
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
		nodes = append(nodes, Node{Entry: e, Image: image, Lock: lock})
	}
	return nodes, errors.Join(errs...)
}

// Installs says image is the bundle n's Package installs: the same
// reference, or one pinned to the same digest as it or as the Package's
// images lock locked it (a copy relocated by imgpkg and kbld keeps the
// digest, in another repository).
func (n Node) Installs(image string) bool {
	if image == n.Image {
		return true
	}
	_, d, ok := strings.Cut(image, "@")
	if !ok {
		return false
	}
	if _, nd, ok := strings.Cut(n.Image, "@"); ok && nd == d {
		return true
	}
	return n.Lock != nil && n.Lock.Images[n.Lock.Bundle] == d
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

// StepView is bd as a walk installs step n: n's catalog entry and edges,
// n's bundle image (from the copy alongside bd's when bd's repository was
// relocated: RefFrom) and n's images lock. The walk installs it, and the
// plan of an upgrade renders it.
func StepView(bd *rukpakv1alpha2.BundleDeployment, n Node) (*rukpakv1alpha2.BundleDeployment, error) {
	if bd.Spec.Source.Image == nil {
		return nil, fmt.Errorf("BundleDeployment %s names no bundle image", bd.Name)
	}
	asked, err := bundlefiles.ReadImagesLock(bd.Annotations)
	if err != nil {
		return nil, err
	}
	view := bd.DeepCopy()
	for _, k := range []string{AnnotationReplaces, AnnotationSkips, AnnotationSkipRange} {
		delete(view.Annotations, k)
	}
	for k, v := range n.Entry.Annotations() {
		view.Annotations[k] = v
	}
	if view.Spec.Source.Image.Ref, err = n.RefFrom(asked, bd.Spec.Source.Image.Ref); err != nil {
		return nil, err
	}
	delete(view.Annotations, bundlefiles.AnnotationImagesLock)
	if n.Lock != nil {
		view.Annotations[bundlefiles.AnnotationImagesLock] = n.Lock.String()
	}
	return view, nil
}

// ImageOf is the bundle image a catalog Package installs: its annotation,
// else the image its template names (Packages published before the
// annotation existed).
func ImageOf(annotations map[string]string, inline map[string]string) (string, error) {
	if img := annotations[AnnotationImage]; img != "" {
		return img, nil
	}
	for _, line := range strings.Split(inline[bundleDeploymentFile], "\n") {
		if ref, ok := strings.CutPrefix(strings.TrimSpace(line), "ref: "); ok {
			var img string
			if err := json.Unmarshal([]byte(ref), &img); err == nil && img != "" {
				return img, nil
			}
		}
	}
	return "", errors.New("the Package names no bundle image")
}
