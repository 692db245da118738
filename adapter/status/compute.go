package status

import (
	"fmt"
	"slices"
	"strings"
	"time"

	kappctrlv1alpha1 "carvel.dev/kapp-controller/pkg/apis/kappctrl/v1alpha1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
)

// ProgressDelay is how long a generation may be in progress before the
// BundleDeployment says so. Most installs finish sooner and go from no
// status to their outcome in one write; a slow or stuck one still shows
// within seconds what it waits for. Failures are never delayed.
const ProgressDelay = 5 * time.Second

// ProgressFollow is how long the stored status may stay behind the work
// under way once its progress has been said: kapp-controller's steps after
// a long wait in its queue (fetching, templating, applying, a second or a
// few each) are not written one by one, and a step that goes on (a large
// chart's template, kapp waiting for readiness) is said within this bound.
const ProgressFollow = 15 * time.Second

// conditions is the computed state of the three conditions and the source
// they describe, before it is merged into the stored status.
type conditions struct {
	unpacked, installed, healthy metav1.Condition
	resolved                     *rukpakv1alpha2.BundleSource
}

// Compute is the whole status of f.BD. See the package comment for the
// generation rule.
func Compute(f Facts) Computed {
	s := newState(f)
	c, lookAgain := s.mirror()
	c = s.withInstalled(c)
	if f.PruneFailure != "" && c.installed.Status == metav1.ConditionTrue {
		c.installed.Message += ". Removing content Secrets the App no longer reads failed, the adapter retries: " + Message(f.PruneFailure)
	}
	out := Computed{Status: s.merge(c), LookAgainAfter: lookAgain, Health: s.health}
	if f.BD.DeletionTimestamp.IsZero() && s.inProgress(c) {
		out.Hold, out.WriteAfter, out.Progress = s.progressHold(out.Status)
	}
	return out
}

// state holds the facts and what they imply about what is installed.
type state struct {
	Facts
	gen int64
	// installed is the stored Installed=True condition, with the
	// generation it was stored for; nil when it is not True.
	installed *metav1.Condition
	// hasInstall says objects of an earlier deploy are in the cluster, so a
	// failure is an upgrade's.
	hasInstall bool
	// current says the installed generation and content are the ones asked
	// for now: a run of the App only re-applies them.
	current bool
	// health is the installed objects judged; nil when they were not
	// listed.
	health *Health
}

func newState(f Facts) state {
	s := state{Facts: f, gen: f.BD.Generation}
	stored := apimeta.FindStatusCondition(f.BD.Status.Conditions, rukpakv1alpha2.TypeInstalled)
	if stored != nil && stored.Status == metav1.ConditionTrue {
		c := *stored
		s.installed = &c
	}
	s.hasInstall = s.installed != nil || (stored != nil && stored.Reason == rukpakv1alpha2.ReasonUpgradeFailed)
	s.current = Current(f.BD, f.Fetched)
	if f.Installed != nil {
		h := f.Installed.Judge()
		s.health = &h
	}
	return s
}

// Current says bd's stored status reports its current generation, and
// the content fetched for it (nil: kapp-controller fetches), installed: a
// run of its App only re-applies what is installed.
func Current(bd *rukpakv1alpha2.BundleDeployment, fetched *rukpakv1alpha2.BundleSource) bool {
	c := apimeta.FindStatusCondition(bd.Status.Conditions, rukpakv1alpha2.TypeInstalled)
	return c != nil && c.Status == metav1.ConditionTrue && c.ObservedGeneration == bd.Generation &&
		(fetched == nil || apiequality.Semantic.DeepEqual(fetched, bd.Status.ResolvedSource))
}

// mirror computes the conditions from the adapter's failure or the App.
func (s state) mirror() (conditions, time.Duration) {
	switch {
	case !s.BD.DeletionTimestamp.IsZero():
		return s.deleting(), 0
	case s.Failure != nil:
		return s.failed(*s.Failure), 0
	}
	if msg, ok := s.packageInstallFailure(); ok {
		return s.packageFailed(msg), 0
	}
	app := s.App
	if !s.appSpeaksFor() {
		if s.current {
			return s.kept(), 0
		}
		msg, left := s.notPickedUp()
		return s.pending(s.condNew(rukpakv1alpha2.TypeUnpacked, metav1.ConditionFalse, rukpakv1alpha2.ReasonUnpackPending, msg)), left
	}
	switch app.Status.Conditions[0].Type {
	case kappctrlv1alpha1.ReconcileSucceeded:
		if s.Package != nil && !packageInstallSucceeded(s.Package.Install) {
			if s.current {
				return s.kept(), 0
			}
			return s.installing(s.unrecorded()), 0
		}
		return s.succeeded(), 0
	case kappctrlv1alpha1.ReconcileFailed:
		// kapp-controller retries a failed App after 2 s; a one-off failure
		// of what is installed is kapp-controller's own (see LostChild), not
		// news. A second failure in a row is reported.
		if s.current && app.Status.ConsecutiveReconcileFailures < 2 {
			return s.kept(), 0
		}
		if r, ok := PendingRerun(app); ok && r.ForDrift() {
			// Drift repair asked for another run while this one applied: an
			// object kapp had applied was deleted or changed under it, which
			// is what this run may have failed of. The next run tells.
			return s.rerunning(), 0
		}
		return s.appFailed(), 0
	case kappctrlv1alpha1.Deleting, kappctrlv1alpha1.DeleteFailed:
		return s.deleting(), 0
	}
	if RetriesFailure(app) && !(s.current && app.Status.ConsecutiveReconcileFailures < 2) {
		// The failure stands while kapp-controller runs the same content
		// again: the retry's steps are silent until it ends, and a retry
		// that began before the failure was read would otherwise hide it.
		c := s.appFailed()
		c.installed.Message += ". kapp-controller is running it again"
		return c, 0
	}
	c, left, late := s.templateDeadline()
	switch {
	case late:
		return c, 0
	case s.current:
		return s.kept(), left
	default:
		return s.running(), left
	}
}

// appSpeaksFor says the App's status is about its current spec, made from
// this generation of the BundleDeployment: in the serve mode, from this
// generation's Package version.
func (s state) appSpeaksFor() bool {
	if s.Package != nil {
		return appSpeaksForVersion(s.Package.Install, s.App, s.Package.Version)
	}
	app := s.App
	if !ReportsSpec(app) {
		return false
	}
	return app.Annotations[rukpakv1alpha2.AnnotationBundleGeneration] == fmt.Sprint(s.gen)
}

// kept is the stored status of an install that is current: a run of
// kapp-controller that only re-applies it (its sync period, rewritten
// content it reads) is not news, so a thousand idle installs re-applied
// under load neither flap nor cost status writes. The installed workloads
// still decide Healthy.
func (s state) kept() conditions {
	unpacked := s.unpackedTrue()
	if c := apimeta.FindStatusCondition(s.BD.Status.Conditions, rukpakv1alpha2.TypeUnpacked); c != nil {
		unpacked = *c
	}
	return conditions{
		unpacked:  unpacked,
		installed: *s.installed,
		healthy:   s.healthyFor(*s.installed),
		resolved:  s.BD.Status.ResolvedSource,
	}
}

// pending: this generation is not yet installed; what is, stays said.
func (s state) pending(unpacked metav1.Condition) conditions {
	installed := s.condNew(rukpakv1alpha2.TypeInstalled, metav1.ConditionUnknown, rukpakv1alpha2.ReasonInstallPending, "Waiting for the bundle to be unpacked")
	if s.installed != nil {
		installed = *s.installed
	}
	return conditions{unpacked: unpacked, installed: installed, healthy: s.healthyFor(installed), resolved: s.BD.Status.ResolvedSource}
}

// running: kapp-controller works on this generation's App; the conditions
// say which step it last reported.
func (s state) running() conditions {
	var doing string
	switch RunStep(s.App) {
	case StepTemplate:
		doing = kappTemplating
	case StepDeploy:
		doing = deployPhase(s.App.Status.Deploy)
	default:
		return s.pending(s.condNew(rukpakv1alpha2.TypeUnpacked, metav1.ConditionFalse, rukpakv1alpha2.ReasonUnpacking,
			fmt.Sprintf("Fetching %s", DescribeSource(s.BD))))
	}
	return s.installing(doing)
}

// installing: the bundle is unpacked and kapp-controller installs it.
// Installed speaks for this generation only while nothing is installed.
func (s state) installing(doing string) conditions {
	c := s.pending(s.unpackedTrue())
	if s.installed == nil {
		c.installed = s.condNew(rukpakv1alpha2.TypeInstalled, metav1.ConditionUnknown, rukpakv1alpha2.ReasonInstalling, doing)
		c.healthy = s.healthyFor(c.installed)
		c.resolved = s.tried()
	}
	return c
}

// rerunning: the run reported failed, and kapp-controller runs the App
// again at drift repair's request.
func (s state) rerunning() conditions {
	app := s.App
	const why = "kapp-controller runs the App again: an object kapp had applied was deleted or changed by someone other than kapp while kapp applied the bundle"
	if r, _ := PendingRerun(app); r.Why == RerunCanceled {
		return s.installing(why + ", and the adapter canceled that run, which could not succeed")
	}
	return s.installing(why + "; the run before ended with: " + Message(app.Status.UsefulErrorMessage, app.Status.Conditions[0].Message))
}

func (s state) succeeded() conditions {
	installed := s.condNew(rukpakv1alpha2.TypeInstalled, metav1.ConditionTrue, rukpakv1alpha2.ReasonInstallationSucceeded, s.installedMessage())
	return conditions{unpacked: s.unpackedTrue(), installed: installed, healthy: s.healthyFor(installed), resolved: s.tried()}
}

// appFailed reports the stage of kapp-controller's run that failed.
func (s state) appFailed() conditions {
	app := s.App
	detail := Message(app.Status.UsefulErrorMessage, app.Status.Conditions[0].Message)
	switch failedStage(app) {
	case stageFetch:
		if emptyContent(detail) {
			// The source was reached and is empty: a bundle problem.
			return s.installFailed(s.condNew(rukpakv1alpha2.TypeUnpacked, metav1.ConditionTrue, rukpakv1alpha2.ReasonUnpackSuccessful,
				fmt.Sprintf("Unpacked the %s Bundle; it holds no files", s.BD.Spec.Source.Type)), "invalid bundle: "+zeroObjects)
		}
		return s.pending(s.condNew(rukpakv1alpha2.TypeUnpacked, metav1.ConditionFalse, rukpakv1alpha2.ReasonUnpackFailed,
			SourceFailedMessage(explainFetch(detail, s.referenceNamespace()), DescribeSource(s.BD))))
	case stageTemplate:
		return s.installFailed(s.unpackedTrue(), explainTemplate(detail))
	default:
		msg, missingAPI := explainDeploy(detail)
		c := s.installFailed(s.unpackedTrue(), msg)
		if missingAPI && !s.hasInstall {
			// rukpak's reason for the cause. An upgrade's failure stays
			// UpgradeFailed, which is how the stored status remembers that
			// an earlier install's objects (and resolvedSource) stand.
			c.installed.Reason = rukpakv1alpha2.ReasonErrorGettingReleaseState
		}
		return c
	}
}

// UnpackFailed says whether conditions (a BundleDeployment's or a
// Bundle's) report a source that could not be fetched: Unpacked False,
// UnpackFailed.
func UnpackFailed(conditions []metav1.Condition) bool {
	c := apimeta.FindStatusCondition(conditions, rukpakv1alpha2.TypeUnpacked)
	return c != nil && c.Status == metav1.ConditionFalse && c.Reason == rukpakv1alpha2.ReasonUnpackFailed
}

// SourceFailedMessage is Unpacked's message for a source that could not be
// fetched: rukpak's words for the cause, then which source it was.
func SourceFailedMessage(cause, source string) string {
	return fmt.Sprintf("source bundle content: %s (fetching %s)", cause, source)
}

// referenceNamespace is where the Secrets and ConfigMaps a
// BundleDeployment names live: the system namespace, which is the App's
// unless the Apps are spread over app namespaces.
func (s state) referenceNamespace() string {
	if s.SystemNamespace != "" {
		return s.SystemNamespace
	}
	if s.App != nil {
		return s.App.Namespace
	}
	return ""
}

// failed reports a failure of the adapter's own steps.
func (s state) failed(f Failure) conditions {
	msg := Message(f.Message)
	retrying := Retrying(f.Retrying, f.NextAttempt)
	msg += retrying
	switch f.Kind {
	case SourceFailed:
		return s.pending(s.condNew(rukpakv1alpha2.TypeUnpacked, metav1.ConditionFalse, rukpakv1alpha2.ReasonUnpackFailed,
			SourceFailedMessage(Message(f.Message), DescribeSource(s.BD))+retrying))
	case BundleInvalid:
		return s.installFailed(s.unpackedTrue(), "invalid bundle: "+msg)
	case DependenciesInstalling:
		// Work under way, not a failure: kapp's wait on the
		// BundleDeployment goes on.
		return s.installing("Installing the bundle's dependencies first: " + msg)
	case DependenciesUnmet:
		c := s.installFailed(s.unpackedTrue(), "Waiting for the bundle's dependencies: "+msg)
		c.installed.Reason = rukpakv1alpha2.ReasonDependenciesUnmet
		return c
	case TakeOverBlocked:
		c := s.installFailed(s.unpackedTrue(), "What rukpak installed cannot be taken over in place, so nothing was changed: "+msg+
			". `rukpak-kapp migrate plan` shows the plan; docs/migrating-from-rukpak.md says how to unblock it")
		c.installed.Reason = rukpakv1alpha2.ReasonTakeOverBlocked
		return c
	case KappControllerMissing:
		c := s.installFailed(s.condNew(rukpakv1alpha2.TypeUnpacked, metav1.ConditionFalse, rukpakv1alpha2.ReasonUnpackPending, msg), msg)
		c.installed.Reason = rukpakv1alpha2.ReasonKappControllerMissing
		return c
	case SpecUnsupported:
		return s.installFailed(s.condNew(rukpakv1alpha2.TypeUnpacked, metav1.ConditionFalse, rukpakv1alpha2.ReasonUnpackFailed, msg),
			"The bundle cannot be installed: "+msg)
	default:
		// The content was fetched (by the adapter) or is still to be
		// fetched (by kapp-controller, once the App is written).
		unpacked := s.unpackedTrue()
		if s.Fetched == nil {
			unpacked = s.condNew(rukpakv1alpha2.TypeUnpacked, metav1.ConditionFalse, rukpakv1alpha2.ReasonUnpackPending,
				"Waiting for the App to be written")
		}
		return s.installFailed(unpacked, msg)
	}
}

// installFailed: this generation failed to install; an earlier install's
// objects stay, so it is an upgrade's failure then.
func (s state) installFailed(unpacked metav1.Condition, msg string) conditions {
	reason := rukpakv1alpha2.ReasonInstallFailed
	resolved := s.tried()
	if s.hasInstall {
		reason, resolved = rukpakv1alpha2.ReasonUpgradeFailed, s.BD.Status.ResolvedSource
	}
	installed := s.condNew(rukpakv1alpha2.TypeInstalled, metav1.ConditionFalse, reason, msg)
	return conditions{unpacked: unpacked, installed: installed, healthy: s.healthyFor(installed), resolved: resolved}
}

func (s state) deleting() conditions {
	reason, msg := rukpakv1alpha2.ReasonDeleting, "Removing the objects this BundleDeployment installed"
	if s.App != nil && len(s.App.Status.Conditions) > 0 && s.App.Status.Conditions[0].Type == kappctrlv1alpha1.DeleteFailed {
		reason = rukpakv1alpha2.ReasonDeleteFailed
		msg = "Removing the installed objects failed: " + Message(s.App.Status.UsefulErrorMessage, s.App.Status.Conditions[0].Message)
	}
	unpacked := s.condNew(rukpakv1alpha2.TypeUnpacked, metav1.ConditionUnknown, reason, msg)
	if c := apimeta.FindStatusCondition(s.BD.Status.Conditions, rukpakv1alpha2.TypeUnpacked); c != nil {
		unpacked = *c
	}
	installed := s.condNew(rukpakv1alpha2.TypeInstalled, metav1.ConditionFalse, reason, msg)
	return conditions{unpacked: unpacked, installed: installed, healthy: s.healthyFor(installed), resolved: s.BD.Status.ResolvedSource}
}

// templateDeadline turns a template step that has run longer than the
// limit into a failure the user can see, or says how long is left. Only a
// step seen still running is reported: kapp-controller writes nothing while
// the step runs, so a run it lost (killed, or its write of the step's end
// refused while kube-apiserver was away) looks the same. The adapter asks
// for a new run TemplateProbeAfter into the step (package drift): a lost
// run is picked up at once and starts over, one under way keeps the request
// waiting until it ends. Once the request has waited HeldAfter while
// kapp-controller had no other App to run, the adapter marks it held: the
// step is still running, and is reported.
func (s state) templateDeadline() (conditions, time.Duration, bool) {
	since, running := templateSince(s.App)
	if !running || s.TemplateTimeout <= 0 {
		return conditions{}, 0, false
	}
	if left := since.Add(s.TemplateTimeout).Sub(s.Now); left > 0 {
		return conditions{}, left, false
	}
	if probe, asked := PendingRerun(s.App); !asked || probe.Why != RerunHeld || probe.At.Before(since) {
		// The request's App events bring this back.
		return conditions{}, 0, false
	}
	return s.installFailed(s.unpackedTrue(), fmt.Sprintf("kapp-controller's template step has run for more than %s on this bundle without finishing "+
		"(kapp-controller, with no other App to run, has left the run the adapter asked for during the step waiting, as it does while a run of this App is under way). "+
		"Either %s, or a chart template loops for long. This condition changes when the step ends", s.TemplateTimeout, aliasHint)), 0, true
}

// withInstalled lets installed objects that are not Current after the
// deploy turn Healthy=True into Healthy=False (one Failed, Terminating,
// NotFound or InProgress) or Unknown (only ones kstatus cannot judge),
// counting them by state and naming the first ones.
func (s state) withInstalled(c conditions) conditions {
	if c.healthy.Status != metav1.ConditionTrue {
		return c
	}
	if s.InstalledFailure != "" {
		c.healthy = withGen(cond(rukpakv1alpha2.TypeHealthy, metav1.ConditionUnknown, rukpakv1alpha2.ReasonHealthCheckFailed,
			"Reading the installed objects failed, the adapter retries: "+Message(s.InstalledFailure)), c.healthy.ObservedGeneration)
		return c
	}
	if s.health == nil {
		return c
	}
	h := *s.health
	if s.deploying() && !h.Failed() {
		// kapp waits for what its run changes: a rollout under way is its
		// to judge, not news. What was said before the run stays said.
		if stored := apimeta.FindStatusCondition(s.BD.Status.Conditions, rukpakv1alpha2.TypeHealthy); stored != nil &&
			stored.Status != metav1.ConditionTrue && stored.ObservedGeneration == c.healthy.ObservedGeneration &&
			(stored.Reason == rukpakv1alpha2.ReasonUnhealthy || stored.Reason == rukpakv1alpha2.ReasonObjectFailed || stored.Reason == rukpakv1alpha2.ReasonHealthUnknown) {
			c.healthy = *stored
		}
		return c
	}
	switch {
	case h.Failed():
		c.healthy = withGen(cond(rukpakv1alpha2.TypeHealthy, metav1.ConditionFalse, rukpakv1alpha2.ReasonObjectFailed, Message(h.Message())), c.healthy.ObservedGeneration)
	case h.Unhealthy():
		c.healthy = withGen(cond(rukpakv1alpha2.TypeHealthy, metav1.ConditionFalse, rukpakv1alpha2.ReasonUnhealthy, Message(h.Message())), c.healthy.ObservedGeneration)
	case len(h.NotCurrent) > 0:
		c.healthy = withGen(cond(rukpakv1alpha2.TypeHealthy, metav1.ConditionUnknown, rukpakv1alpha2.ReasonHealthUnknown, Message(h.Message())), c.healthy.ObservedGeneration)
	}
	return c
}

// deploying says kapp-controller runs the App now.
func (s state) deploying() bool {
	return s.App != nil && len(s.App.Status.Conditions) > 0 && s.App.Status.Conditions[0].Type == kappctrlv1alpha1.Reconciling
}

// healthyFor is Healthy as the Installed condition implies it, for the
// same generation.
func (s state) healthyFor(installed metav1.Condition) metav1.Condition {
	var c metav1.Condition
	switch installed.Status {
	case metav1.ConditionTrue:
		c = cond(rukpakv1alpha2.TypeHealthy, metav1.ConditionTrue, rukpakv1alpha2.ReasonHealthy, "BundleDeployment is healthy")
	case metav1.ConditionFalse:
		c = cond(rukpakv1alpha2.TypeHealthy, metav1.ConditionFalse, rukpakv1alpha2.ReasonInstallationStatusFalse, "Installed condition is false")
	default:
		c = cond(rukpakv1alpha2.TypeHealthy, metav1.ConditionUnknown, rukpakv1alpha2.ReasonInstallationStatusUnknown, "Waiting for the bundle to be installed")
	}
	return withGen(c, installed.ObservedGeneration)
}

// tried is the source pinned to what this generation's run fetched: the
// adapter's fetch, else vendir's lock in the App's fetch output, else what
// was stored.
func (s state) tried() *rukpakv1alpha2.BundleSource {
	if s.Fetched != nil {
		return s.Fetched.DeepCopy()
	}
	if s.App != nil {
		if src := resolvedFromApp(s.BD, s.App); src != nil {
			return src
		}
	}
	return s.BD.Status.ResolvedSource
}

func (s state) unpackedTrue() metav1.Condition {
	msg := fmt.Sprintf("Successfully unpacked the %s Bundle", s.BD.Spec.Source.Type)
	if len(s.Notes) > 0 {
		msg += "; converted with these changes: " + strings.Join(s.Notes, "; ")
	}
	return s.condNew(rukpakv1alpha2.TypeUnpacked, metav1.ConditionTrue, rukpakv1alpha2.ReasonUnpackSuccessful, Message(msg))
}

// condNew is a condition about the current generation.
func (s state) condNew(t string, st metav1.ConditionStatus, reason, msg string) metav1.Condition {
	return withGen(cond(t, st, reason, msg), s.gen)
}

// inProgress says the conditions only report work under way on this
// generation: nothing failed or finished for it yet.
func (s state) inProgress(c conditions) bool {
	for _, cond := range []metav1.Condition{c.unpacked, c.installed, c.healthy} {
		if cond.Status == metav1.ConditionFalse && slices.Contains(failureReasons, cond.Reason) {
			return false
		}
	}
	if c.healthy.Reason == rukpakv1alpha2.ReasonUnhealthy || c.healthy.Reason == rukpakv1alpha2.ReasonObjectFailed {
		return false
	}
	return c.installed.ObservedGeneration != s.gen || c.installed.Status == metav1.ConditionUnknown
}

// progressHold decides when work under way is written: the first time
// once the generation has been in progress for ProgressDelay, and after
// that once the stored status has been behind what kapp-controller reports
// for ProgressFollow. So an install that finishes within the delay writes
// only its outcome, and a long one a step every ProgressFollow at most,
// never one write per App status change. p is what the next look needs.
func (s state) progressHold(st rukpakv1alpha2.BundleDeploymentStatus) (hold bool, after time.Duration, p Progress) {
	p = Progress{Said: s.Progress.Said}
	if apiequality.Semantic.DeepEqual(st, s.BD.Status) {
		// Already said.
		return true, 0, p
	}
	p.BehindSince = s.Progress.BehindSince
	if p.BehindSince.IsZero() {
		p.BehindSince = s.Now
	}
	bound := ProgressDelay
	if p.Said {
		bound = ProgressFollow
	}
	if behind := s.Now.Sub(p.BehindSince); behind < bound {
		return true, bound - behind, p
	}
	return false, 0, Progress{Said: true}
}

var (
	failureReasons = []string{
		rukpakv1alpha2.ReasonUnpackFailed, rukpakv1alpha2.ReasonInstallFailed, rukpakv1alpha2.ReasonUpgradeFailed,
		rukpakv1alpha2.ReasonDeleteFailed, rukpakv1alpha2.ReasonUnhealthy, rukpakv1alpha2.ReasonObjectFailed, rukpakv1alpha2.ReasonDependenciesUnmet, rukpakv1alpha2.ReasonErrorGettingReleaseState,
		rukpakv1alpha2.ReasonTakeOverBlocked,
	}
)

// catalogTypes are the conditions of a catalog install (an
// OperatorInstall's: Held, Progressing, UpgradeAvailable), which a
// BundleDeployment does not carry: one adopted from a catalog Package's
// template has them removed at its first status write.
var catalogTypes = []string{"Held", "Progressing", "UpgradeAvailable"}

// merge sets the conditions on a copy of the stored status, keeping
// lastTransitionTime where the status did not change.
func (s state) merge(c conditions) rukpakv1alpha2.BundleDeploymentStatus {
	st := *s.BD.Status.DeepCopy()
	for _, cond := range []metav1.Condition{c.unpacked, c.installed, c.healthy} {
		cond.LastTransitionTime = metav1.NewTime(s.Now)
		apimeta.SetStatusCondition(&st.Conditions, cond)
	}
	for _, t := range catalogTypes {
		apimeta.RemoveStatusCondition(&st.Conditions, t)
	}
	st.ResolvedSource = c.resolved.DeepCopy()
	// The URL serves exactly what resolvedSource names, so it is said with it.
	st.ContentURL = ""
	if st.ResolvedSource != nil {
		st.ContentURL = s.ContentURL
	}
	st.ObservedGeneration = c.installed.ObservedGeneration
	return st
}

func withGen(c metav1.Condition, gen int64) metav1.Condition {
	c.ObservedGeneration = gen
	return c
}

func cond(t string, s metav1.ConditionStatus, reason, msg string) metav1.Condition {
	if msg == "" {
		msg = reason
	}
	return metav1.Condition{Type: t, Status: s, Reason: reason, Message: msg}
}
