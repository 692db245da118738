package templates

import (
	"fmt"
	"strings"
	"time"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	rukpakv1alpha1 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha1"
	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
)

// Observed is what one reconcile of a v1alpha1 BundleDeployment learned,
// for the mapping of its status (Status).
type Observed struct {
	// BD is the BundleDeployment as read, with its stored status.
	BD *rukpakv1alpha1.BundleDeployment
	// Bundle is its current template's Bundle as read or as just made,
	// with its stored status; nil when there is none (see BundleFailure).
	Bundle *rukpakv1alpha1.Bundle
	// BundleFailure says why there is no Bundle: Generation.Blocked, or a
	// failed read or write of it.
	BundleFailure string
	// Status is what the adapter's status computation (adapter/status
	// Compute) gave the BundleDeployment's v1alpha2 form this reconcile.
	// Its conditions follow the generation rule: Installed=True carries
	// the generation kapp-controller deployed.
	Status rukpakv1alpha2.BundleDeploymentStatus
	// Resolved is the template's source pinned to what this generation
	// fetched; nil when not known.
	Resolved *rukpakv1alpha2.BundleSource
	// Invalid says why the fetched content is not a bundle of the
	// template's class. rukpak v0.16 checked that when it unpacked, so it
	// fails the Bundle (Failing) rather than the install. Empty: valid, or
	// not known yet.
	Invalid string
	// Now is the reconcile's clock reading (condition transition times).
	Now time.Time
	// ContentURL is where the Bundle's content is served once unpacked;
	// empty: it is not.
	ContentURL string
}

// Result is the status of the BundleDeployment and of its current Bundle.
type Result struct {
	BD rukpakv1alpha1.BundleDeploymentStatus
	// Bundle is the current Bundle's status; nil when there is no Bundle.
	Bundle *rukpakv1alpha1.BundleStatus
	// Installed says the current Bundle is what kapp-controller deployed
	// for the BundleDeployment's generation: the Bundles Superseded names
	// may go.
	Installed bool
}

// Status maps one reconcile's facts to v1alpha1 statuses the way rukpak
// v0.16 reported them. The Bundle's phase, Unpacked condition and
// resolvedSource describe the fetch of the current template. On the
// BundleDeployment, HasValidBundle follows the Bundle's phase; while the
// Bundle is not unpacked, or its content is invalid, Installed, Healthy
// and activeBundle keep saying what is installed (rukpak stopped there);
// once it is, they follow the v1alpha2 status. Nothing claims the current
// template installed (Installed=True naming its Bundle, activeBundle)
// before kapp-controller reported this generation deployed.
func Status(f Observed) Result {
	gen := f.BD.Generation
	st := *f.BD.Status.DeepCopy()
	set := func(c metav1.Condition) {
		c.LastTransitionTime = metav1.NewTime(f.Now)
		apimeta.SetStatusCondition(&st.Conditions, c)
	}
	installed := apimeta.FindStatusCondition(f.Status.Conditions, rukpakv1alpha1.TypeInstalled)
	healthy := apimeta.FindStatusCondition(f.Status.Conditions, rukpakv1alpha1.TypeHealthy)
	installedNow := installed != nil && installed.Status == metav1.ConditionTrue && installed.ObservedGeneration == gen

	var out Result
	phase := ""
	if f.Bundle != nil {
		out.Bundle = bundleStatus(f, installedNow)
		phase = out.Bundle.Phase
	}
	set(hasValidBundle(f, out.Bundle, gen))

	stored := apimeta.FindStatusCondition(st.Conditions, rukpakv1alpha1.TypeInstalled)
	switch {
	case installed == nil:
	case !f.BD.DeletionTimestamp.IsZero(),
		phase == rukpakv1alpha1.PhaseUnpacked && installed.Status != metav1.ConditionTrue && installed.ObservedGeneration == gen:
		// Said about this generation: its failure, work under way, a delete.
		set(asV016(*installed))
		setIf(set, healthy)
	case phase == rukpakv1alpha1.PhaseUnpacked && installedNow:
		set(withGen(cond(rukpakv1alpha1.TypeInstalled, metav1.ConditionTrue, rukpakv1alpha1.ReasonInstallationSucceeded,
			installedMessage(f.BD.Name, f.Bundle.Name, installed.Message)), gen))
		setIf(set, healthy)
		st.ActiveBundle = f.Bundle.Name
		out.Installed = true
	case stored == nil && installed.Status == metav1.ConditionUnknown:
		// Nothing was installed yet: say what the first install waits for.
		set(*installed)
		setIf(set, healthy)
	case stored != nil && stored.Status == metav1.ConditionTrue && installed.Status == metav1.ConditionTrue:
		// What is installed stays said; Healthy describes its objects.
		setIf(set, healthy)
	}
	if c := apimeta.FindStatusCondition(st.Conditions, rukpakv1alpha1.TypeInstalled); c != nil {
		st.ObservedGeneration = c.ObservedGeneration
	}
	out.BD = st
	return out
}

func hasValidBundle(f Observed, b *rukpakv1alpha1.BundleStatus, gen int64) metav1.Condition {
	if b == nil {
		msg := f.BundleFailure
		if msg == "" {
			msg = "The Bundle of the template could not be read or made; the adapter retries"
		}
		return withGen(cond(rukpakv1alpha1.TypeHasValidBundle, metav1.ConditionUnknown, rukpakv1alpha1.ReasonReconcileFailed, msg), gen)
	}
	name := f.Bundle.Name
	switch b.Phase {
	case rukpakv1alpha1.PhaseFailing:
		msg := fmt.Sprintf("Failed to unpack the %s Bundle", name)
		if c := apimeta.FindStatusCondition(b.Conditions, rukpakv1alpha1.TypeUnpacked); c != nil {
			msg += ": " + c.Message
		}
		return withGen(cond(rukpakv1alpha1.TypeHasValidBundle, metav1.ConditionFalse, rukpakv1alpha1.ReasonUnpackFailed, msg), gen)
	case rukpakv1alpha1.PhaseUnpacked:
		return withGen(cond(rukpakv1alpha1.TypeHasValidBundle, metav1.ConditionTrue, rukpakv1alpha1.ReasonUnpackSuccessful,
			fmt.Sprintf("Successfully unpacked the %s Bundle", name)), gen)
	default:
		// True while pending, as rukpak had it.
		return withGen(cond(rukpakv1alpha1.TypeHasValidBundle, metav1.ConditionTrue, rukpakv1alpha1.ReasonUnpackPending,
			fmt.Sprintf("Waiting for the %s Bundle to be unpacked", name)), gen)
	}
}

// bundleStatus is the current Bundle's status: news about this
// generation's fetch, or what it said before.
func bundleStatus(f Observed, installedNow bool) *rukpakv1alpha1.BundleStatus {
	b := f.Bundle
	st := b.Status.DeepCopy()
	unpacked := apimeta.FindStatusCondition(f.Status.Conditions, rukpakv1alpha1.TypeUnpacked)
	news := unpacked != nil && unpacked.ObservedGeneration == f.BD.Generation && unpacked.Status != metav1.ConditionUnknown
	sourceType := b.Spec.Source.Type

	var c metav1.Condition
	phase := rukpakv1alpha1.PhaseFailing
	switch {
	case f.Invalid != "":
		c = cond(rukpakv1alpha1.TypeUnpacked, metav1.ConditionFalse, rukpakv1alpha1.ReasonUnpackFailed, f.Invalid)
	case news && unpacked.Status == metav1.ConditionTrue:
		phase, c = rukpakv1alpha1.PhaseUnpacked, *unpacked
	case installedNow:
		phase = rukpakv1alpha1.PhaseUnpacked
		c = cond(rukpakv1alpha1.TypeUnpacked, metav1.ConditionTrue, rukpakv1alpha1.ReasonUnpackSuccessful, fmt.Sprintf("Successfully unpacked the %s Bundle", sourceType))
	case news && st.Phase == rukpakv1alpha1.PhaseUnpacked && unpacked.Reason != rukpakv1alpha1.ReasonUnpackFailed:
		// The Bundle's content is known: its fetch again for a newer
		// generation (another config) does not make it pending again.
		return st
	case news:
		c = *unpacked
		switch c.Reason {
		case rukpakv1alpha1.ReasonUnpackPending:
			phase = rukpakv1alpha1.PhasePending
		case rukpakv1alpha1.ReasonUnpacking:
			phase = rukpakv1alpha1.PhaseUnpacking
		default:
			c.Reason = rukpakv1alpha1.ReasonUnpackFailed
		}
	case st.Phase != "":
		return st
	default:
		phase = rukpakv1alpha1.PhasePending
		c = cond(rukpakv1alpha1.TypeUnpacked, metav1.ConditionFalse, rukpakv1alpha1.ReasonUnpackPending,
			fmt.Sprintf("Waiting for the %s source of the Bundle to be fetched", sourceType))
	}
	c.ObservedGeneration = b.Generation
	c.LastTransitionTime = metav1.NewTime(f.Now)
	apimeta.SetStatusCondition(&st.Conditions, c)
	st.Phase = phase
	st.ObservedGeneration = b.Generation
	st.ContentURL = ""
	if phase != rukpakv1alpha1.PhaseUnpacked {
		st.ResolvedSource = nil
	} else if src := resolved(f, installedNow); src != nil {
		st.ResolvedSource = src
	}
	if st.ResolvedSource != nil {
		// Served from the source it names (adapter/contenturl).
		st.ContentURL = f.ContentURL
	}
	return st
}

// resolved is the Bundle's source pinned to what was fetched. rukpak
// pinned images and git commits and copied the other sources as they are.
func resolved(f Observed, installedNow bool) *rukpakv1alpha1.BundleSource {
	src := f.Resolved
	if src == nil && installedNow {
		src = f.Status.ResolvedSource
	}
	if src != nil {
		out := rukpakv1alpha1.SourceFromV1alpha2(*src)
		return &out
	}
	switch f.Bundle.Spec.Source.Type {
	case rukpakv1alpha1.SourceTypeHTTP, rukpakv1alpha1.SourceTypeConfigMaps, rukpakv1alpha1.SourceTypeUpload:
		return f.Bundle.Spec.Source.DeepCopy()
	}
	return nil
}

// installedMessage is rukpak's "Instantiated bundle <Bundle> successfully",
// with what the v1alpha2 message adds after naming the BundleDeployment.
func installedMessage(bd, bundle, v1alpha2Message string) string {
	msg := fmt.Sprintf("Instantiated bundle %s successfully", bundle)
	if rest, ok := strings.CutPrefix(v1alpha2Message, "Instantiated bundle "+bd); ok {
		msg += rest
	}
	return msg
}

// asV016 is an Installed failure in rukpak v0.16's reasons: it had no dry
// run before installing, so an API the cluster does not serve failed the
// install itself (InstallFailed "required resource not found"), where
// v1alpha2's rukpak reported ErrorGettingReleaseState.
func asV016(c metav1.Condition) metav1.Condition {
	if c.Reason == rukpakv1alpha2.ReasonErrorGettingReleaseState {
		c.Reason = rukpakv1alpha1.ReasonInstallFailed
	}
	return c
}

func setIf(set func(metav1.Condition), c *metav1.Condition) {
	if c != nil {
		set(*c)
	}
}

func withGen(c metav1.Condition, gen int64) metav1.Condition {
	c.ObservedGeneration = gen
	return c
}

func cond(t string, s metav1.ConditionStatus, reason, msg string) metav1.Condition {
	return metav1.Condition{Type: t, Status: s, Reason: reason, Message: msg}
}
