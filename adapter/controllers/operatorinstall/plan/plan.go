package plan

import (
	"errors"
	"fmt"
	"slices"
	"time"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/bundlefiles"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/catalog"
	catalogsv1alpha1 "github.com/rukpak-kapp/rukpak-kapp/api/catalogs/v1alpha1"
	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
)

// Facts are what one look at an OperatorInstall read; the plan is a
// function of them.
type Facts struct {
	Install *catalogsv1alpha1.OperatorInstall
	// BD is the BundleDeployment the install writes, as the cache has it;
	// nil when there is none. It is the install's (Owned says so).
	BD *rukpakv1alpha2.BundleDeployment
	// Channel are the channel's published Packages, as the install's
	// namespace sees them; those kept retracted are in Retracted (by bundle:
	// the revision that dropped them) and not here.
	Channel   []catalog.Node
	Retracted map[string]string
	// ChannelErr says why the channel could not be read; Channel is then
	// empty.
	ChannelErr error
	// Picked is the version kapp-controller picks now (its
	// PackageInstall's status.version): read only when the spec's pick is
	// not in the channel; "" unknown.
	Picked string
	// StepTimeout bounds a walk's step that is not healthy, unless the
	// spec says (0: no bound).
	StepTimeout time.Duration
	Now         time.Time
}

// Step is a bundle the BundleDeployment installs.
type Step struct {
	Entry catalog.Entry
	// Image is the bundle image; Lock the images lock it carries (""
	// none).
	Image, Lock string
	// Requires is what the bundle requires from the catalog.
	Requires []catalog.Need
}

// Walk is a move along the channel more than one edge long.
type Walk struct {
	Channel string
	// Path are the versions, the one installed when the walk began first.
	Path []string
	// Step indexes Path: the version the BundleDeployment installs.
	Step int
	// Started is when the step was written.
	Started time.Time
	// Gate is set when the step is deployed and its installed objects are
	// not healthy: the next step waits, or the walk stopped.
	Gate *Gate
}

// Gate is what holds a walk at a deployed step.
type Gate struct {
	// Stopped: the walk stops here; else it waits until Deadline (zero:
	// without a bound).
	Stopped  bool
	Why      string
	Deadline time.Time
}

// Hold is a move that waits: for approval, or because the catalog
// retracted the version asked for.
type Hold struct {
	// Reason is Held's: ReasonAwaitingApproval or ReasonRetracted.
	Reason, Message string
}

// Plan is what one look does.
type Plan struct {
	// Target is what the BundleDeployment installs after this look; nil:
	// none is written (nothing to install yet, or it is left as it is).
	Target *Step
	// Moves says Target is another bundle than the BundleDeployment names
	// (or there is none yet): the bundle's dependencies are met first, and
	// the status records what runs before the BundleDeployment is written.
	Moves bool
	// Installed is what runs; nil: nothing.
	Installed *catalog.Entry
	// Asked is the bundle the install moves to; nil when not known.
	Asked *catalog.Entry
	Walk  *Walk
	Hold  *Hold
	// Refused says why no path leads to the version asked for (Installed
	// False, UpgradeRefused); nothing changes.
	Refused string
	// Waiting says why the install cannot decide yet (Installed Unknown):
	// the channel unreadable, the pick not seen in it.
	Waiting       string
	WaitingReason string
	// LookAgain is when a gate's bound runs out (0: no timer).
	LookAgain time.Duration
}

// Self is the install "namespace/name" (its PackageInstall's too).
func Self(oi *catalogsv1alpha1.OperatorInstall) string { return oi.Namespace + "/" + oi.Name }

// BundleDeploymentName is the BundleDeployment oi writes.
func BundleDeploymentName(oi *catalogsv1alpha1.OperatorInstall) string {
	if oi.Spec.BundleDeploymentName != "" {
		return oi.Spec.BundleDeploymentName
	}
	return oi.Name + "." + oi.Namespace
}

// entryOf is the catalog entry the install's spec asks for, with the
// edges the channel gives it.
func (f Facts) askedEntry() catalog.Entry {
	s := f.Install.Spec
	return catalog.Entry{Package: s.PackageName, Channel: s.Channel, Bundle: s.Bundle, Version: s.Version, RefName: s.RefName}
}

// bdEntry is the catalog entry the BundleDeployment names.
func bdEntry(bd *rukpakv1alpha2.BundleDeployment) (catalog.Entry, bool) {
	if bd == nil {
		return catalog.Entry{}, false
	}
	return catalog.EntryOf(bd.Labels, bd.Annotations)
}

// Deployed says the BundleDeployment's Installed is True at its
// generation.
func Deployed(bd *rukpakv1alpha2.BundleDeployment) bool {
	if bd == nil {
		return false
	}
	c := apimeta.FindStatusCondition(bd.Status.Conditions, rukpakv1alpha2.TypeInstalled)
	return c != nil && c.Status == metav1.ConditionTrue && c.ObservedGeneration == bd.Generation
}

// Failed is the BundleDeployment's condition that says its generation
// failed: Installed False at its generation, or a fetch that failed.
func Failed(bd *rukpakv1alpha2.BundleDeployment) (metav1.Condition, bool) {
	if bd == nil {
		return metav1.Condition{}, false
	}
	if c := apimeta.FindStatusCondition(bd.Status.Conditions, rukpakv1alpha2.TypeInstalled); c != nil && c.Status == metav1.ConditionFalse && c.ObservedGeneration == bd.Generation {
		return *c, true
	}
	if c := apimeta.FindStatusCondition(bd.Status.Conditions, rukpakv1alpha2.TypeUnpacked); c != nil && c.Status == metav1.ConditionFalse &&
		c.Reason == rukpakv1alpha2.ReasonUnpackFailed && c.ObservedGeneration == bd.Generation {
		return *c, true
	}
	return metav1.Condition{}, false
}

// current is what the BundleDeployment installs now, as a Step.
func current(bd *rukpakv1alpha2.BundleDeployment) (*Step, bool) {
	e, ok := bdEntry(bd)
	if !ok || bd.Spec.Source.Image == nil {
		return nil, false
	}
	return &Step{Entry: e, Image: bd.Spec.Source.Image.Ref, Lock: bd.Annotations[bundlefiles.AnnotationImagesLock]}, true
}

// Decide plans one look at the install.
func Decide(f Facts) Plan {
	spec := f.Install.Spec
	var p Plan
	at, hasBD := current(f.BD)
	deployed := hasBD && Deployed(f.BD)
	// What ran before this look, and what runs now.
	installed, isInstalled := recorded(f.Install.Status.Installed, spec)
	if deployed && (!isInstalled || at.Entry.Bundle == installed.Bundle || !midWalk(f, at.Entry, installed)) {
		installed, isInstalled = at.Entry, true
	}
	if isInstalled {
		p.Installed = &installed
	}
	keep := func() {
		if hasBD {
			p.Target = at
		}
	}
	asked, askedStep, err := f.resolveAsked(installed, isInstalled)
	var waiting *waitingError
	switch {
	case errors.As(err, &waiting):
		p.Waiting, p.WaitingReason = waiting.msg, waiting.reason
		keep()
		return p
	case err != nil:
		var retracted *catalog.RetractedError
		if errors.As(err, &retracted) {
			p.Asked = &retracted.Asked
			p.Hold = &Hold{Reason: catalogsv1alpha1.ReasonRetracted, Message: err.Error()}
			keep()
			return p
		}
	}
	p.Asked = &asked
	if h := catalog.Held(installed, isInstalled, asked, catalog.ApprovalOf(spec), Self(f.Install)); h != nil {
		p.Hold = &Hold{Reason: catalogsv1alpha1.ReasonAwaitingApproval, Message: h.Error()}
		keep()
		return p
	}
	staying := isInstalled && installed.Bundle == asked.Bundle
	if f.ChannelErr != nil && !staying {
		// A bundle not installed yet needs the channel: its edges and what
		// it requires.
		p.Waiting, p.WaitingReason = unreadable(f, installed, isInstalled, asked), catalogsv1alpha1.ReasonChannelUnreadable
		keep()
		return p
	}
	if !isInstalled || staying || spec.UpgradeConstraintPolicy == catalogsv1alpha1.PolicySelfCertified {
		p.move(at, hasBD, askedStep)
		if staying {
			p.Walk = finished(f.Install.Status.Walk, spec.Channel, asked)
		}
		return p
	}
	path := catalog.ShortestPath(installed, asked, f.Channel)
	if path == nil {
		p.Refused = catalog.CheckUpgrade(installed, asked, spec.UpgradeConstraintPolicy, catalog.Reachable(installed, entries(f.Channel)), Self(f.Install)).Error()
		keep()
		return p
	}
	if len(path) == 2 && recordedPrefix(f.Install.Status.Walk, path) == nil {
		p.move(at, hasBD, askedStep)
		return p
	}
	p.walk(f, path, at, hasBD, deployed, askedStep)
	return p
}

// move makes step the target.
func (p *Plan) move(at *Step, hasBD bool, step Step) {
	p.Target = &step
	p.Moves = !hasBD || at.Entry.Bundle != step.Entry.Bundle
}

// walk plans a move along path (the shortest from what is installed, more
// than one edge): the step the BundleDeployment installs, or, once it is
// deployed and its objects are healthy, the next.
func (p *Plan) walk(f Facts, path []catalog.Node, at *Step, hasBD, deployed bool, asked Step) {
	w := &Walk{Channel: f.Install.Spec.Channel}
	prefix := recordedPrefix(f.Install.Status.Walk, path)
	w.Path = append(slices.Clone(prefix), versions(path)...)
	next := 1
	if hasBD {
		if i := slices.IndexFunc(path, func(n catalog.Node) bool { return n.Entry.Bundle == at.Entry.Bundle }); i > 0 {
			next = i
		}
	}
	w.Step = len(prefix) + next
	w.Started = f.stepStarted(w)
	p.Walk = w
	step := f.stepOf(path[next], asked)
	if next == len(path)-1 {
		p.move(at, hasBD, step)
		return
	}
	onStep := hasBD && at.Entry.Bundle == path[next].Entry.Bundle
	if !onStep || !deployed {
		p.move(at, hasBD, step)
		return
	}
	// The step is deployed: its objects' health gates the next one.
	g := f.gate(w)
	if g != nil {
		w.Gate = g
		p.Target = at
		if !g.Stopped && !g.Deadline.IsZero() {
			p.LookAgain = max(g.Deadline.Sub(f.Now), time.Millisecond)
		}
		return
	}
	passed := path[next].Entry
	p.Installed = &passed
	w.Step++
	w.Started = f.Now
	p.move(at, hasBD, f.stepOf(path[next+1], asked))
}

// midWalk says at, deployed, is a step of a walk from installed that has
// not passed its health gate yet: what runs is still counted installed
// until it does.
func midWalk(f Facts, at, installed catalog.Entry) bool {
	w := f.Install.Status.Walk
	if w == nil || len(w.Path) < 3 {
		return false
	}
	i := slices.Index(w.Path, at.Version)
	j := slices.Index(w.Path, installed.Version)
	return i > 0 && i < len(w.Path)-1 && j >= 0 && j < i
}

// gate judges the deployed step's objects by its BundleDeployment's
// Healthy: nil when the next step may start (Healthy, or only what cannot
// be judged), a wait while it is not, for at most the step's bound, and a
// stop when an object Failed or the bound ran out.
func (f Facts) gate(w *Walk) *Gate {
	h := apimeta.FindStatusCondition(f.BD.Status.Conditions, rukpakv1alpha2.TypeHealthy)
	judged := h != nil && h.ObservedGeneration == f.BD.Generation
	switch {
	case judged && h.Status == metav1.ConditionTrue,
		judged && h.Status == metav1.ConditionUnknown && h.Reason == rukpakv1alpha2.ReasonHealthUnknown:
		return nil
	case judged && h.Status == metav1.ConditionFalse && h.Reason == rukpakv1alpha2.ReasonObjectFailed:
		return &Gate{Stopped: true, Why: h.Message}
	}
	why := "they are not judged yet"
	if judged {
		why = h.Message
	}
	bound := f.StepTimeout
	if d := f.Install.Spec.StepHealthTimeout; d != nil {
		bound = d.Duration
	}
	if bound <= 0 {
		return &Gate{Why: why}
	}
	deadline := w.Started.Add(bound)
	if f.Now.Before(deadline) {
		return &Gate{Why: why, Deadline: deadline}
	}
	return &Gate{Stopped: true, Why: fmt.Sprintf("%s, still after %s from the step's start (the install's stepHealthTimeout, or the adapter's --upgrade-step-health-timeout)", why, bound)}
}

// stepStarted is when w's step was written: the status's record when it
// is of that step, else now (the step is written now).
func (f Facts) stepStarted(w *Walk) time.Time {
	r := f.Install.Status.Walk
	if r != nil && r.StepStarted != nil && int(r.Step) < len(r.Path) && r.Path[r.Step] == w.Path[w.Step] {
		return r.StepStarted.Time
	}
	return f.Now
}

// recordedPrefix is the part of the recorded walk before the path from
// what is installed, when the recorded walk goes the same way (a walk
// under way keeps where it began).
func recordedPrefix(r *catalogsv1alpha1.WalkStatus, path []catalog.Node) []string {
	if r == nil {
		return nil
	}
	vs := versions(path)
	i := slices.Index(r.Path, vs[0])
	if i <= 0 || !slices.Equal(r.Path[i:], vs) {
		return nil
	}
	return r.Path[:i]
}

// stepOf is n as a step: the asked bundle itself as the spec names it
// (its image, which kbld may have pinned to a relocated copy), another
// from the copy alongside it when the repository was relocated.
func (f Facts) stepOf(n catalog.Node, asked Step) Step {
	if n.Entry.Bundle == asked.Entry.Bundle {
		return asked
	}
	s := Step{Entry: n.Entry, Image: n.Image, Requires: n.Requires}
	lock, _ := bundlefiles.ReadImagesLock(map[string]string{bundlefiles.AnnotationImagesLock: asked.Lock})
	if ref, err := n.RefFrom(lock, asked.Image); err == nil {
		s.Image = ref
	}
	if n.Lock != nil {
		s.Lock = n.Lock.String()
	}
	return s
}

// StepOf is n as oi installs it on a walk (what `rukpak-kapp upgrade
// plan` renders): the bundle oi asks for as its spec names it, another
// from the copy alongside it when the repository was relocated.
func StepOf(oi *catalogsv1alpha1.OperatorInstall, n catalog.Node) Step {
	f := Facts{Install: oi}
	_, asked, _ := f.resolveAsked(catalog.Entry{}, false)
	return f.stepOf(n, asked)
}

// waitingError is a look that cannot decide yet.
type waitingError struct{ reason, msg string }

func (e *waitingError) Error() string { return e.msg }

// resolveAsked is the bundle the install moves to: the spec's pick as the
// channel publishes it; kapp-controller's pick now when the channel no
// longer publishes the spec's (kapp-controller refuses to render a
// version lower than the one it last rendered, as a downgrade: the install
// follows its pick all the same); a *catalog.RetractedError when the
// channel keeps the pick only for the installs that run it; a
// *waitingError when it cannot be known yet.
func (f Facts) resolveAsked(installed catalog.Entry, isInstalled bool) (catalog.Entry, Step, error) {
	spec := f.Install.Spec
	e := f.askedEntry()
	askedStep := Step{Entry: e, Image: spec.Image, Lock: f.Install.Annotations[bundlefiles.AnnotationImagesLock]}
	if f.ChannelErr != nil {
		// Without the channel, only what the spec says: enough to install
		// it first, or to stay on it.
		return e, askedStep, nil
	}
	if n, ok := nodeOf(f.Channel, func(n catalog.Node) bool { return n.Entry.Bundle == e.Bundle }); ok {
		askedStep.Entry = n.Entry
		askedStep.Requires = n.Requires
		if askedStep.Lock == "" && n.Lock != nil {
			askedStep.Lock = n.Lock.String()
		}
		return n.Entry, askedStep, nil
	}
	if isInstalled && installed.Bundle == e.Bundle {
		// What runs, which the channel no longer publishes: no move to
		// judge, the install stays on it (the notice says so).
		return e, askedStep, nil
	}
	if rev, ok := f.Retracted[e.Bundle]; ok {
		return e, askedStep, &catalog.RetractedError{Asked: e, Revision: rev, Install: Self(f.Install)}
	}
	if f.Picked != "" && f.Picked != e.PackageVersion() {
		if n, ok := nodeOf(f.Channel, func(n catalog.Node) bool { return n.Entry.PackageVersion() == f.Picked }); ok {
			return n.Entry, f.stepOf(n, askedStep), nil
		}
	}
	return e, askedStep, &waitingError{reason: catalogsv1alpha1.ReasonInstalling, msg: fmt.Sprintf(
		"Channel %s, as namespace %s sees it, does not publish %s, the version kapp-controller picked: waiting for its Package, or for kapp-controller to pick another "+
			"(kctrl package available get -p %s -n %s lists what it publishes)", spec.Channel, f.Install.Namespace, spec.Version, spec.RefName, f.Install.Namespace)}
}

func unreadable(f Facts, installed catalog.Entry, isInstalled bool, asked catalog.Entry) string {
	if !isInstalled {
		return fmt.Sprintf("Installing %s needs channel %s (its edges, and what the bundle requires), whose Packages cannot be read: %v. It is installed once they can",
			asked.Version, f.Install.Spec.Channel, f.ChannelErr)
	}
	return fmt.Sprintf("The move from %s to %s follows channel %s, whose Packages cannot be read: %v. The install moves once they can; %s runs meanwhile",
		installed.Version, asked.Version, f.Install.Spec.Channel, f.ChannelErr, installed.Version)
}

// finished is the walk recorded when it ended at asked: Installed names
// its path for as long as asked is what the install asks for.
func finished(r *catalogsv1alpha1.WalkStatus, channel string, asked catalog.Entry) *Walk {
	if r == nil || len(r.Path) < 3 || r.Path[len(r.Path)-1] != asked.Version {
		return nil
	}
	w := &Walk{Channel: channel, Path: slices.Clone(r.Path), Step: len(r.Path) - 1}
	if r.StepStarted != nil {
		w.Started = r.StepStarted.Time
	}
	return w
}

func nodeOf(nodes []catalog.Node, match func(catalog.Node) bool) (catalog.Node, bool) {
	i := slices.IndexFunc(nodes, match)
	if i < 0 {
		return catalog.Node{}, false
	}
	return nodes[i], true
}

// recorded is what the status says runs, for this install's package.
func recorded(r *catalogsv1alpha1.BundleVersion, spec catalogsv1alpha1.OperatorInstallSpec) (catalog.Entry, bool) {
	if r == nil || r.Bundle == "" {
		return catalog.Entry{}, false
	}
	return catalog.Entry{Package: spec.PackageName, Channel: spec.Channel, RefName: spec.RefName, Bundle: r.Bundle, Version: r.Version}, true
}

func versions(path []catalog.Node) []string {
	out := make([]string, len(path))
	for i, n := range path {
		out[i] = n.Entry.Version
	}
	return out
}

func entries(nodes []catalog.Node) []catalog.Entry {
	out := make([]catalog.Entry, len(nodes))
	for i, n := range nodes {
		out[i] = n.Entry
	}
	return out
}
