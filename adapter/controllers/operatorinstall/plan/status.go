package plan

import (
	"fmt"
	"strings"
	"time"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/catalog"
	catalogsv1alpha1 "github.com/rukpak-kapp/rukpak-kapp/api/catalogs/v1alpha1"
	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
)

// Dependencies is what meeting the target's requirements found (the
// controller reads and writes PackageInstalls for it).
type Dependencies struct {
	// List are the requirements the catalog meets, with their state.
	List []catalogsv1alpha1.Dependency
	// Installing says what is being installed or waited for: the target
	// waits ("" nothing).
	Installing string
	// Unmet says what cannot be met: the target waits for the catalog or
	// the namespace to change ("" nothing).
	Unmet string
	// Refused: Unmet because no Package the namespace sees meets a
	// requirement; only a Package's event can change that.
	Refused bool
}

// Blocks says the target waits for its dependencies.
func (d Dependencies) Blocks() bool { return d.Installing != "" || d.Unmet != "" }

// Outcome is what the look did besides the plan: the dependencies, and
// whether the BundleDeployment was left where it was because they block
// the move.
type Outcome struct {
	Deps Dependencies
	// Deleting: the install is being deleted; BundleDeploymentGone once
	// its BundleDeployment is.
	Deleting bool
	// Conflict says why the BundleDeployment of the install's name cannot
	// be written ("" it can).
	Conflict string
}

// Status is the install's status after a look that planned p and did o,
// computed from a copy of the stored one: each condition set at the
// generation it describes, the others kept as stored.
func Status(f Facts, p Plan, o Outcome) catalogsv1alpha1.OperatorInstallStatus {
	oi := f.Install
	st := *oi.Status.DeepCopy()
	s := state{Facts: f, p: p, o: o, gen: oi.Generation, self: Self(oi)}
	st.ObservedGeneration = s.gen
	st.BundleDeployment = BundleDeploymentName(oi)
	st.Installed = versionOf(p.Installed)
	st.Asked = versionOf(p.Asked)
	st.Walk = walkStatus(p.Walk)
	st.Dependencies = o.Deps.List
	installed := s.installed()
	s.set(&st, installed)
	s.setOrRemove(&st, catalogsv1alpha1.TypeProgressing, s.progressing())
	held := s.held()
	s.setOrRemove(&st, catalogsv1alpha1.TypeHeld, held)
	if u, keep := s.upgrade(installed, held); !keep {
		s.setOrRemove(&st, catalogsv1alpha1.TypeUpgradeAvailable, u)
	}
	s.set(&st, s.healthy(installed))
	return st
}

type state struct {
	Facts
	p    Plan
	o    Outcome
	gen  int64
	self string
}

func (s state) cond(t string, st metav1.ConditionStatus, reason, msg string) metav1.Condition {
	if msg == "" {
		msg = reason
	}
	return metav1.Condition{Type: t, Status: st, Reason: reason, Message: msg, ObservedGeneration: s.gen, LastTransitionTime: metav1.NewTime(s.Now)}
}

func (s state) stored(t string) *metav1.Condition {
	return apimeta.FindStatusCondition(s.Install.Status.Conditions, t)
}

func (s state) set(st *catalogsv1alpha1.OperatorInstallStatus, c metav1.Condition) {
	apimeta.SetStatusCondition(&st.Conditions, c)
}

func (s state) setOrRemove(st *catalogsv1alpha1.OperatorInstallStatus, t string, c *metav1.Condition) {
	if c == nil {
		apimeta.RemoveStatusCondition(&st.Conditions, t)
		return
	}
	apimeta.SetStatusCondition(&st.Conditions, *c)
}

// bdCurrent says the BundleDeployment is written from this generation and
// names the target: what it reports is about it.
func (s state) bdCurrent() bool {
	bd, t := s.BD, s.p.Target
	if bd == nil || t == nil || bd.Annotations[catalog.AnnotationOperatorInstallGeneration] != fmt.Sprint(s.gen) {
		return false
	}
	e, ok := bdEntry(bd)
	return ok && e.Bundle == t.Entry.Bundle
}

// installed is the Installed condition: True once the bundle asked for is
// installed with this generation's values, False when that failed or was
// refused, and, while it is under way, the stored condition of the
// generation last installed (a new generation is never said installed
// before its BundleDeployment is), or Unknown when nothing is.
func (s state) installed() metav1.Condition {
	switch {
	case s.o.Deleting:
		return s.cond(catalogsv1alpha1.TypeInstalled, metav1.ConditionFalse, catalogsv1alpha1.ReasonDeleting,
			fmt.Sprintf("Removing BundleDeployment %s and what it installed", BundleDeploymentName(s.Install)))
	case s.o.Conflict != "":
		return s.cond(catalogsv1alpha1.TypeInstalled, metav1.ConditionFalse, catalogsv1alpha1.ReasonInstallFailed, s.o.Conflict)
	case s.p.Refused != "":
		return s.cond(catalogsv1alpha1.TypeInstalled, metav1.ConditionFalse, catalogsv1alpha1.ReasonUpgradeRefused, s.p.Refused+". Nothing was changed")
	case s.o.Deps.Unmet != "":
		return s.cond(catalogsv1alpha1.TypeInstalled, metav1.ConditionFalse, catalogsv1alpha1.ReasonDependenciesUnmet, s.o.Deps.Unmet)
	}
	if w := s.p.Walk; w != nil && w.Gate != nil && w.Gate.Stopped {
		return s.cond(catalogsv1alpha1.TypeInstalled, metav1.ConditionFalse, catalogsv1alpha1.ReasonUpgradeFailed,
			s.stopped(fmt.Sprintf("%s is deployed, and its installed objects are not healthy: %s", w.Path[w.Step], w.Gate.Why)))
	}
	if s.bdCurrent() && !s.o.Deps.Blocks() {
		if c, failed := Failed(s.BD); failed {
			reason := catalogsv1alpha1.ReasonInstallFailed
			switch {
			case c.Reason == rukpakv1alpha2.ReasonDependenciesUnmet:
				reason = catalogsv1alpha1.ReasonDependenciesUnmet
			case s.p.Installed != nil:
				reason = catalogsv1alpha1.ReasonUpgradeFailed
			}
			msg := fmt.Sprintf("BundleDeployment %s: %s", s.BD.Name, c.Message)
			if s.p.Walk != nil {
				msg = s.stopped(c.Message)
			}
			return s.cond(catalogsv1alpha1.TypeInstalled, metav1.ConditionFalse, reason, msg)
		}
		if s.p.Hold == nil && s.p.Asked != nil && s.p.Target.Entry.Bundle == s.p.Asked.Bundle && Deployed(s.BD) {
			msg := fmt.Sprintf("%s %s is installed (BundleDeployment %s: %s)", s.p.Asked.Package, s.p.Asked.Version, s.BD.Name,
				apimeta.FindStatusCondition(s.BD.Status.Conditions, rukpakv1alpha2.TypeInstalled).Message)
			if w := s.p.Walk; w != nil {
				msg += fmt.Sprintf("; upgraded along channel %s one edge at a time: %s", w.Channel, catalog.Describe(w.Path))
			}
			if s.p.Asked.Version != s.Install.Spec.Version {
				msg += fmt.Sprintf(". kapp-controller picked %s, which channel %s no longer publishes; its pick now is %s, which this install follows", s.Install.Spec.Version, s.Install.Spec.Channel, s.p.Asked.Version)
			}
			return s.cond(catalogsv1alpha1.TypeInstalled, metav1.ConditionTrue, catalogsv1alpha1.ReasonInstallationSucceeded, msg)
		}
	}
	if c := s.stored(catalogsv1alpha1.TypeInstalled); c != nil && c.ObservedGeneration != s.gen && c.Status == metav1.ConditionTrue {
		// Under way, held or waiting: the generation last installed runs.
		return *c
	}
	switch {
	case s.p.Hold != nil && s.p.Installed == nil:
		return s.cond(catalogsv1alpha1.TypeInstalled, metav1.ConditionUnknown, catalogsv1alpha1.ReasonInstalling, "Nothing is installed: the version asked for is held")
	case s.p.Waiting != "":
		return s.cond(catalogsv1alpha1.TypeInstalled, metav1.ConditionUnknown, s.p.WaitingReason, s.p.Waiting)
	case s.o.Deps.Installing != "":
		return s.cond(catalogsv1alpha1.TypeInstalled, metav1.ConditionUnknown, catalogsv1alpha1.ReasonInstalling, "Installing the bundle's dependencies first: "+s.o.Deps.Installing)
	}
	return s.cond(catalogsv1alpha1.TypeInstalled, metav1.ConditionUnknown, catalogsv1alpha1.ReasonInstalling, s.doing())
}

// doing says what the install waits for while its BundleDeployment works.
func (s state) doing() string {
	if s.p.Target == nil {
		return "Nothing to install yet"
	}
	name := BundleDeploymentName(s.Install)
	if !s.bdCurrent() {
		return fmt.Sprintf("Writing BundleDeployment %s to install %s %s", name, s.p.Target.Entry.Package, s.p.Target.Entry.Version)
	}
	if c := apimeta.FindStatusCondition(s.BD.Status.Conditions, rukpakv1alpha2.TypeInstalled); c != nil && c.ObservedGeneration == s.BD.Generation {
		return fmt.Sprintf("BundleDeployment %s installs %s %s: %s", name, s.p.Target.Entry.Package, s.p.Target.Entry.Version, c.Message)
	}
	return fmt.Sprintf("BundleDeployment %s installs %s %s: waiting for rukpak-kapp to report its generation %d", name, s.p.Target.Entry.Package, s.p.Target.Entry.Version, s.BD.Generation)
}

// stopped is a stopped walk's words, then why.
func (s state) stopped(why string) string {
	w := s.p.Walk
	installed := "nothing"
	if s.p.Installed != nil {
		installed = s.p.Installed.Version
	}
	return fmt.Sprintf("The upgrade along channel %s (%s) stopped at %s; %s stays installed: %s", w.Channel, catalog.Describe(w.Path), w.Path[w.Step], installed, why)
}

// progressing says where a walk is: under way (True), stopped (False);
// nil when no walk is under way.
func (s state) progressing() *metav1.Condition {
	w := s.p.Walk
	if w == nil || s.o.Deleting {
		return nil
	}
	installed := "nothing"
	if s.p.Installed != nil {
		installed = s.p.Installed.Version
	}
	last := w.Step == len(w.Path)-1
	if c := s.installed(); c.Status == metav1.ConditionFalse && c.ObservedGeneration == s.gen {
		p := s.cond(catalogsv1alpha1.TypeProgressing, metav1.ConditionFalse, catalogsv1alpha1.ReasonUpgradeStopped, c.Message)
		return &p
	} else if last && c.Status == metav1.ConditionTrue && c.ObservedGeneration == s.gen {
		return nil
	}
	doing := fmt.Sprintf("%s: installing %s (%s is installed)", catalog.Describe(w.Path), w.Path[w.Step], installed)
	switch g := w.Gate; {
	case g != nil:
		until := ""
		if !g.Deadline.IsZero() {
			until = ", until " + g.Deadline.UTC().Format(time.RFC3339) + " at most,"
		}
		doing = fmt.Sprintf("%s: %s is deployed and the next step waits%s for its installed objects to be Current (%s is installed): %s",
			catalog.Describe(w.Path), w.Path[w.Step], until, installed, g.Why)
	case s.o.Deps.Installing != "":
		doing = fmt.Sprintf("%s: %s waits for its dependencies (%s is installed): %s", catalog.Describe(w.Path), w.Path[w.Step], installed, s.o.Deps.Installing)
	}
	p := s.cond(catalogsv1alpha1.TypeProgressing, metav1.ConditionTrue, catalogsv1alpha1.ReasonUpgrading, doing)
	return &p
}

// held is Held while the version asked for waits, once what runs
// meanwhile is in place (nothing, or the BundleDeployment deployed with
// this generation's values); nil otherwise.
func (s state) held() *metav1.Condition {
	h := s.p.Hold
	if h == nil || s.o.Deleting {
		return nil
	}
	var msg string
	switch {
	case s.p.Installed == nil && s.p.Target == nil:
		msg = h.Message + ". Nothing is installed until then"
	case s.bdCurrent() && Deployed(s.BD):
		running := s.p.Target.Entry.Version
		msg = fmt.Sprintf("%s. %s runs, with this generation's other values", h.Message, running)
	default:
		return nil
	}
	c := s.cond(catalogsv1alpha1.TypeHeld, metav1.ConditionTrue, h.Reason, msg)
	return &c
}

// upgrade is the update notice: what the channel offers beyond the version
// that runs, once this generation is installed or held; keep says the
// stored one stands (under way, or the channel not read).
func (s state) upgrade(installed metav1.Condition, held *metav1.Condition) (u *metav1.Condition, keep bool) {
	in := s.p.Installed
	settled := installed.Status == metav1.ConditionTrue && installed.ObservedGeneration == s.gen || held != nil
	if in == nil || !settled || s.o.Deleting {
		return nil, true
	}
	if s.ChannelErr != nil {
		if s.stored(catalogsv1alpha1.TypeUpgradeAvailable) != nil {
			// What was last read stands: a notice must not come and go
			// with every restart or outage.
			return nil, true
		}
		c := s.cond(catalogsv1alpha1.TypeUpgradeAvailable, metav1.ConditionUnknown, catalogsv1alpha1.ReasonChannelUnreadable,
			fmt.Sprintf("Whether channel %s offers a version beyond %s, the one installed, is not known: %v", s.Install.Spec.Channel, in.Version, s.ChannelErr))
		return &c, false
	}
	c := Notice(s.self, *in, entries(s.Channel), s.Install.Spec)
	c.ObservedGeneration, c.LastTransitionTime = s.gen, metav1.NewTime(s.Now)
	return &c, false
}

// Notice is the UpgradeAvailable condition of an install (install:
// "namespace/name") that runs in, whose channel publishes published.
func Notice(install string, in catalog.Entry, published []catalog.Entry, spec catalogsv1alpha1.OperatorInstallSpec) metav1.Condition {
	up := catalog.UpgradesFrom(in, published, spec.UpgradeConstraintPolicy)
	approval := catalog.ApprovalOf(spec)
	c := func(st metav1.ConditionStatus, reason, msg string) metav1.Condition {
		return metav1.Condition{Type: catalogsv1alpha1.TypeUpgradeAvailable, Status: st, Reason: reason, Message: msg}
	}
	switch {
	case up.Available() && !approval.Covers(up.Target()):
		return c(metav1.ConditionTrue, catalogsv1alpha1.ReasonUpgradeAwaitingApproval, upgradeMessage(install, in, up, approval))
	case up.Available():
		return c(metav1.ConditionTrue, catalogsv1alpha1.ReasonUpgradeAvailable, upgradeMessage(install, in, up, approval))
	case !publishes(published, in):
		return c(metav1.ConditionFalse, catalogsv1alpha1.ReasonNotInChannel, notInChannelMessage(install, in, published, up))
	case up.Head.Bundle != in.Bundle:
		return c(metav1.ConditionFalse, catalogsv1alpha1.ReasonNoUpgradePath,
			fmt.Sprintf("Channel %s publishes %s, but none of its edges lead there from %s, the version installed: an upgrade waits for a release that replaces or skips %s, or the value upgradeConstraintPolicy: SelfCertified",
				in.Channel, up.Head.Version, in.Version, in.Bundle))
	default:
		return c(metav1.ConditionFalse, catalogsv1alpha1.ReasonAtChannelHead, fmt.Sprintf("%s, the version installed, is the head of channel %s", in.Version, in.Channel))
	}
}

func publishes(published []catalog.Entry, in catalog.Entry) bool {
	for _, e := range published {
		if e.Package == in.Package && e.Bundle == in.Bundle {
			return true
		}
	}
	return false
}

// notInChannelMessage says the channel no longer publishes the version
// installed, what it publishes instead, and how to follow the catalog
// again.
func notInChannelMessage(install string, in catalog.Entry, published []catalog.Entry, up catalog.Upgrades) string {
	ns, name, _ := strings.Cut(install, "/")
	var b strings.Builder
	head, found := catalog.Head(published, in.Package)
	switch {
	case !found:
		fmt.Fprintf(&b, "Channel %s publishes no version seen from namespace %s: it was renamed, emptied or deleted in its catalog", in.Channel, ns)
	case head.Bundle == up.Head.Bundle:
		fmt.Fprintf(&b, "Channel %s no longer publishes %s, the version installed (it was retracted), and none of its edges lead from it to %s, its head", in.Channel, in.Version, head.Version)
	default:
		fmt.Fprintf(&b, "Channel %s no longer publishes %s, the version installed (it was retracted); its head is now %s, a lower version", in.Channel, in.Version, head.Version)
	}
	fmt.Fprintf(&b, ". %s keeps running and is offered nothing; to follow the catalog again, find a channel that publishes it (kctrl package available list -n %s) "+
		"and move the install there (kctrl package installed update -n %s -i %s -p <that channel's package> --version <a version it publishes>)", in.Version, ns, ns, name)
	return b.String()
}

// upgradeMessage names the version offered, the path to it and the kctrl
// command that installs it.
func upgradeMessage(install string, in catalog.Entry, up catalog.Upgrades, approval catalog.Approval) string {
	target := up.Target()
	var b strings.Builder
	fmt.Fprintf(&b, "Channel %s offers %s beyond %s, the version installed", in.Channel, target.Version, in.Version)
	if len(up.Path) > 2 {
		fmt.Fprintf(&b, ", along %s", catalog.Describe(up.Versions()))
	}
	if up.Head.Bundle != target.Bundle {
		fmt.Fprintf(&b, "; its head, %s, is not reachable from %s", up.Head.Version, in.Version)
	}
	version := target.PackageVersion()
	if !approval.Covers(target) {
		fmt.Fprintf(&b, "; it waits for approval (upgradeApproval: %s). See what each hop changes with: %s; approve exactly this version with: %s",
			catalog.ApprovalManual, catalog.PlanCommand(install, version), catalog.ApproveCommand(install, version))
		return b.String()
	}
	fmt.Fprintf(&b, ". See what each hop changes with: %s; install it with: %s", catalog.PlanCommand(install, version), catalog.UpdateCommand(install, version))
	return b.String()
}

// healthy mirrors the BundleDeployment's Healthy, at the generation the
// Installed condition describes.
func (s state) healthy(installed metav1.Condition) metav1.Condition {
	gen := installed.ObservedGeneration
	var h *metav1.Condition
	if s.BD != nil {
		h = apimeta.FindStatusCondition(s.BD.Status.Conditions, rukpakv1alpha2.TypeHealthy)
	}
	c := metav1.Condition{Type: catalogsv1alpha1.TypeHealthy, ObservedGeneration: gen, LastTransitionTime: metav1.NewTime(s.Now)}
	switch {
	case s.p.Installed == nil || h == nil:
		c.Status, c.Reason, c.Message = metav1.ConditionUnknown, catalogsv1alpha1.ReasonHealthPending, "Nothing installed is judged yet"
	default:
		c.Status, c.Reason, c.Message = h.Status, h.Reason, fmt.Sprintf("BundleDeployment %s: %s", s.BD.Name, h.Message)
	}
	return c
}

func versionOf(e *catalog.Entry) *catalogsv1alpha1.BundleVersion {
	if e == nil {
		return nil
	}
	return &catalogsv1alpha1.BundleVersion{Bundle: e.Bundle, Version: e.Version}
}

func walkStatus(w *Walk) *catalogsv1alpha1.WalkStatus {
	if w == nil {
		return nil
	}
	out := &catalogsv1alpha1.WalkStatus{Path: w.Path, Step: int32(w.Step)}
	if !w.Started.IsZero() {
		t := metav1.NewTime(w.Started)
		out.StepStarted = &t
	}
	return out
}

// StepNote is the Event a walk's step records when it is written.
func (w *Walk) StepNote() string {
	return fmt.Sprintf("Upgrading along channel %s (%s): installing %s, step %d of %d", w.Channel, catalog.Describe(w.Path), w.Path[w.Step], w.Step, len(w.Path)-1)
}
