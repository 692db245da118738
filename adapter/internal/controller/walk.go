package controller

import (
	"context"
	"fmt"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/catalog"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/internal/kube"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/internal/scope"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/status"
)

// walk makes the view of a catalog BundleDeployment that asks for a bundle
// more than one edge beyond what its App deployed the next step of the
// shortest path along the channel: that step's bundle image and catalog
// entry, and the path, which the App records. Each step is then an
// ordinary install (CRD upgrade safety, install modes, health), and the
// App's deploy of one step brings the next look, which installs the next.
// The channel's graph is read from its published Packages, which carry
// their edges and their image (the same graph the upgrade webhook judges),
// only when the App is more than one edge behind.
func (r *BundleDeploymentReconciler) walk(ctx context.Context, s *scope.Scope) error {
	bd := s.View
	asked, ok := catalog.EntryOf(bd.Labels, bd.Annotations)
	if !ok || s.Live == nil || bd.Spec.Source.Image == nil {
		return nil
	}
	deployed := catalog.Deployed{Annotations: s.Live.Annotations, Done: kube.DeployedCurrent(s.Live)}
	var unreadable error
	w, err := catalog.PlanWalk(asked, bd.Annotations[catalog.AnnotationUpgradeEdge], deployed, func() (nodes []catalog.Node, err error) {
		nodes, unreadable, err = r.channel(ctx, bd.Annotations[catalog.AnnotationPackagesNS], asked)
		return nodes, err
	})
	if err != nil {
		return err
	}
	if w != nil && !w.Final() && w.Current().Image == "" {
		// A step needs its Package's image; a Package the path only
		// passes by need not be readable.
		return fmt.Errorf("the walk along channel %s to %s cannot install its step %s: %w", asked.Channel, asked.Version, w.Current().Entry.Version, unreadable)
	}
	if w == nil {
		// A move of one edge (or none) is the bundle asked for itself; the
		// App still records where it comes from, so that a request made
		// before its deploy ends walks from what is installed.
		if from, ok := deployed.Installed(asked.Package); ok && from.Bundle != asked.Bundle && bd.Annotations[catalog.AnnotationUpgradeEdge] != catalog.PolicySelfCertified {
			view := bd.DeepCopy()
			view.Annotations[catalog.AnnotationWalk] = catalog.OneEdge(from, asked)
			s.View = view
		}
		return nil
	}
	view := bd.DeepCopy()
	step := w.Current()
	if !w.Final() {
		if view, err = catalog.StepView(bd, step); err != nil {
			return err
		}
	}
	view.Annotations[catalog.AnnotationWalk] = w.Record()
	s.View = view
	s.Facts.Walk = &status.Walk{Channel: asked.Channel, Versions: w.Versions(), Step: w.Step,
		Package: bd.Annotations[catalog.AnnotationPackagesNS] + "/" + catalog.PackageOf(step.Entry)}
	return nil
}

// channel reads asked's channel as the upgrade webhook reads it, from
// the catalog Packages seen from namespace (packagingapi.Packages).
func (r *BundleDeploymentReconciler) channel(ctx context.Context, namespace string, asked catalog.Entry) (nodes []catalog.Node, unreadable, err error) {
	if namespace == "" || asked.RefName == "" {
		return nil, nil, fmt.Errorf("the BundleDeployment does not name its catalog Packages (annotations %s and %s), so the channel's path from the installed bundle cannot be read: install the version asked for through its PackageInstall",
			catalog.AnnotationPackagesNS, catalog.AnnotationRefName)
	}
	nodes, unreadable, err = r.channels.Nodes(ctx, namespace, asked.RefName)
	if err != nil {
		return nil, nil, fmt.Errorf("walk channel %s: %w", asked.Channel, err)
	}
	return nodes, unreadable, nil
}
