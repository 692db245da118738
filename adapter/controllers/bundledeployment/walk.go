package bundledeployment

import (
	"context"
	"fmt"
	"time"

	kappctrlv1alpha1 "carvel.dev/kapp-controller/pkg/apis/kappctrl/v1alpha1"
	kstatus "sigs.k8s.io/cli-utils/pkg/kstatus/status"

	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/catalog"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/internal/kube"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/internal/scope"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/status"
	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
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
	if !ok || bd.Spec.Source.Image == nil {
		return nil
	}
	var deployed catalog.Deployed
	if s.Live != nil {
		deployed = catalog.Deployed{Annotations: s.Live.Annotations, Done: kube.DeployedCurrent(s.Live)}
	}
	if held, err := r.hold(ctx, s, asked, deployed); held || err != nil {
		return err
	}
	if s.Live == nil {
		return nil
	}
	planned := deployed
	var gate *status.WalkGate
	if deployed.MidWalk(asked) {
		// A step the walk passes through is deployed: the next one starts
		// once the step's objects are Current.
		var err error
		if gate, err = r.stepGate(ctx, s); err != nil {
			return err
		}
		// A step held at its gate is the step under way still.
		planned.Done = gate == nil
	}
	var unreadable error
	w, err := catalog.PlanWalk(asked, bd.Annotations[catalog.AnnotationUpgradeEdge], planned, func() (nodes []catalog.Node, err error) {
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
	if !w.Final() {
		view.Annotations[catalog.AnnotationStepSince] = r.stepSince(s.Live, step.Entry)
	}
	s.View = view
	s.Facts.Walk = &status.Walk{Channel: asked.Channel, Versions: w.Versions(), Step: w.Step,
		Package: bd.Annotations[catalog.AnnotationPackagesNS] + "/" + catalog.PackageOf(step.Entry), Gate: gate}
	return nil
}

// stepSince is when the step was first written: the App's record when it
// installs that step already, else now.
func (r *BundleDeploymentReconciler) stepSince(live *kappctrlv1alpha1.App, step catalog.Entry) string {
	if live != nil && live.Annotations[catalog.AnnotationBundle] == step.Bundle && live.Annotations[catalog.AnnotationStepSince] != "" {
		return live.Annotations[catalog.AnnotationStepSince]
	}
	return r.now().UTC().Format(time.RFC3339)
}

// stepGate judges the objects a deployed step of a walk installed: nil
// when the next step may start (every object Current, or one kstatus
// cannot judge, which never holds a walk), a wait while one is InProgress
// or being deleted, for at most StepHealthTimeout from the step's start,
// and a stop when one is Failed or the wait ran out.
func (r *BundleDeploymentReconciler) stepGate(ctx context.Context, s *scope.Scope) (*status.WalkGate, error) {
	// Read from the API server, not the caches: the step's objects were
	// just written, and a watch event still on its way must not let the
	// walk past one. A walk's steps are few; so are these reads.
	var f status.Facts
	if err := kube.ObserveWorkloads(ctx, r.direct, s.BD, &f, true); err != nil {
		return nil, fmt.Errorf("judge the installed objects of the walk's step: %w", err)
	}
	if err := r.custom.ObserveLive(ctx, r.direct, s.Live, s.BD.Name, f.Installed); err != nil {
		return nil, fmt.Errorf("judge the installed objects of the walk's step: %w", err)
	}
	h := f.Installed.Judge()
	if !h.Unhealthy() {
		// Current, or what cannot be judged (it says nothing, or the
		// adapter may not read it), which never holds a walk.
		return nil, nil
	}
	if h.NotCurrent[0].State == kstatus.FailedStatus {
		return &status.WalkGate{Stopped: true, Why: h.Message()}, nil
	}
	bound := r.set.Config.StepHealthTimeout
	since, err := time.Parse(time.RFC3339, s.Live.Annotations[catalog.AnnotationStepSince])
	if bound <= 0 || err != nil {
		// No bound, or a step written before the bound was kept: a wait.
		return &status.WalkGate{Why: h.Message()}, nil
	}
	if deadline := since.Add(bound); s.Now.Before(deadline) {
		return &status.WalkGate{Why: h.Message(), Deadline: deadline}, nil
	}
	return &status.WalkGate{Stopped: true, Why: fmt.Sprintf("%s, still %s after the step started (--upgrade-step-health-timeout)", h.Message(), bound)}, nil
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

// hold holds the version a catalog BundleDeployment asks for when its
// catalog retracted it or no approval covers it (catalog.Held), whichever
// way the BundleDeployment got there (created at it, updated to it with or
// without the upgrade webhook): the App then installs the version its last
// deploy left, with this generation's other fields, so that values
// changes land; when nothing is installed yet, or the version installed
// cannot be read from the channel, the App is left as it is. The approval
// is the one the install's owner set (catalog.ApprovalFrom).
func (r *BundleDeploymentReconciler) hold(ctx context.Context, s *scope.Scope, asked catalog.Entry, deployed catalog.Deployed) (bool, error) {
	bd := s.View
	from, installed := deployed.Installed(asked.Package)
	if installed && from.Bundle == asked.Bundle {
		return false, nil
	}
	if s.Live != nil && !installed {
		// An App whose deploys recorded no catalog entry (an install made
		// before entries were recorded): what it installed is not known,
		// and nothing is held over it.
		if _, ok := s.Live.Annotations[catalog.AnnotationBundle]; !ok {
			return false, nil
		}
	}
	ns := bd.Annotations[catalog.AnnotationPackagesNS]
	install := ""
	if name := bd.Annotations[catalog.AnnotationInstall]; ns != "" && name != "" {
		install = ns + "/" + name
	}
	revision := ""
	if r.channels != nil && ns != "" && asked.RefName != "" {
		rev, retracted, err := r.channels.Retracted(ctx, ns, asked.RefName, asked.Bundle)
		if err != nil {
			return false, fmt.Errorf("whether channel %s retracted %s: %w", asked.Channel, asked.Version, err)
		}
		if retracted {
			revision = rev
		}
	}
	heldErr := catalog.Held(from, installed, asked, catalog.ApprovalFrom(s.BD), revision, install, s.BD.Name)
	if heldErr == nil {
		return false, nil
	}
	h := &status.Hold{Reason: rukpakv1alpha2.ReasonAwaitingApproval, Message: heldErr.Error(), Installed: from, HasInstalled: installed, KeepApp: true}
	if revision != "" {
		h.Reason = rukpakv1alpha2.ReasonRetracted
	}
	if installed {
		refName := asked.RefName
		if ref := s.Live.Annotations[catalog.AnnotationRefName]; ref != "" {
			refName = ref
		}
		if view, ok := r.heldView(ctx, bd, ns, refName, from); ok {
			s.View, h.KeepApp = view, false
		}
	}
	s.Facts.Hold = h
	return true, nil
}

// heldView is bd installing from, the entry installed (its Package read
// from the channel refName), with bd's other fields, marked
// catalog.AnnotationHeld; ok is false when from's Package cannot be read.
func (r *BundleDeploymentReconciler) heldView(ctx context.Context, bd *rukpakv1alpha2.BundleDeployment, ns, refName string, from catalog.Entry) (*rukpakv1alpha2.BundleDeployment, bool) {
	if r.channels == nil || ns == "" || refName == "" {
		return nil, false
	}
	nodes, _, err := r.channels.Nodes(ctx, ns, refName)
	if err != nil {
		log.FromContext(ctx).Info("the version installed cannot be read from its channel; the held install's App is left as it is", "error", err.Error())
		return nil, false
	}
	for _, n := range nodes {
		if n.Entry.Bundle == from.Bundle && n.Image != "" {
			view, err := catalog.StepView(bd, n)
			if err != nil {
				return nil, false
			}
			view.Annotations[catalog.AnnotationHeld] = from.Bundle
			return view, true
		}
	}
	return nil, false
}
