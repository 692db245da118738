package plan

import (
	"strings"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/status"
	rukpakv1alpha1 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha1"
	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
)

// Generated says b is a BundleDeployment's: its controller is one. Such a
// Bundle's status is written with its BundleDeployment's
// (v1alpha1/deployments), from kapp-controller's fetch.
func Generated(b *rukpakv1alpha1.Bundle) bool {
	ref := metav1.GetControllerOfNoCopy(b)
	return ref != nil && ref.Kind == "BundleDeployment" && strings.HasPrefix(ref.APIVersion, rukpakv1alpha1.GroupVersion.Group+"/")
}

// View is the BundleDeployment (at v1alpha2) whose content b's is: the
// built-in class b is unpacked as, src (b's source, or the source it was
// pinned to), and the namespace rukpak v0.16 put b's objects in, which a
// plain bundle's layout ignores and a registry+v1 bundle's conversion
// chooses itself (the CSV's suggested namespace, watching all
// namespaces; adapter/bundlefiles).
func View(b *rukpakv1alpha1.Bundle, class string, src rukpakv1alpha1.BundleSource, systemNamespace string) *rukpakv1alpha2.BundleDeployment {
	bd := &rukpakv1alpha2.BundleDeployment{
		ObjectMeta: metav1.ObjectMeta{Name: b.Name, UID: b.UID, Generation: b.Generation},
		Spec: rukpakv1alpha2.BundleDeploymentSpec{
			ProvisionerClassName: class,
			Source:               rukpakv1alpha1.SourceToV1alpha2(src),
		},
	}
	if class != rukpakv1alpha2.ClassRegistry {
		bd.Spec.InstallNamespace = systemNamespace
	}
	return bd
}

// Step is what a reconcile of a Bundle on its own does.
type Step int

const (
	// Rest: unpacked for its generation, its content kept here and its
	// status saying so: nothing to fetch and nothing to write.
	Rest Step = iota
	// Report: unpacked and kept, but the status says another contentURL
	// (the adapter's address changed, or rukpak wrote it): write it.
	Report
	// Refetch: the status says unpacked, but this replica does not hold
	// the content (it started since, or took over from rukpak): fetch the
	// source it was pinned to again, never the spec's, whose tag or branch
	// may have moved.
	Refetch
	// Unpack: not unpacked for its generation: fetch the spec's source.
	Unpack
	// Deleting: the Bundle is being deleted: once rukpak's finalizer is
	// off (the step every reconcile takes first), nothing is fetched or
	// written.
	Deleting
)

func (s Step) String() string {
	return [...]string{"Rest", "Report", "Refetch", "Unpack", "Deleting"}[s]
}

// Plan decides the step for b. stored says the content of b's pinned
// source is kept here by this replica's unpack; url is the contentURL b
// should report.
func Plan(b *rukpakv1alpha1.Bundle, stored bool, url string) Step {
	switch {
	case !b.DeletionTimestamp.IsZero():
		return Deleting
	case !ReportsUnpacked(b):
		return Unpack
	case !stored:
		return Refetch
	case b.Status.ContentURL != url:
		return Report
	}
	return Rest
}

// ReportsUnpacked says b's status reports its current generation unpacked, from
// a pinned source.
func ReportsUnpacked(b *rukpakv1alpha1.Bundle) bool {
	st := b.Status
	c := apimeta.FindStatusCondition(st.Conditions, rukpakv1alpha1.TypeUnpacked)
	return st.Phase == rukpakv1alpha1.PhaseUnpacked && st.ObservedGeneration == b.Generation && st.ResolvedSource != nil &&
		c != nil && c.Status == metav1.ConditionTrue
}

// Source is what the fetch of step (Unpack or Refetch) reads: the source
// the status pinned for a Refetch; for an Unpack, the source a failed
// refetch was pinned to (pinned, nil when none was, or for another Bundle
// of the name: its retry never fetches a tag that moved), else the spec's.
func Source(b *rukpakv1alpha1.Bundle, step Step, pinned *rukpakv1alpha1.BundleSource) rukpakv1alpha1.BundleSource {
	switch {
	case step == Refetch && b.Status.ResolvedSource != nil:
		return *b.Status.ResolvedSource
	case pinned != nil:
		return *pinned
	}
	return b.Spec.Source
}

// Waiting is what a reconcile reports while the fetch of step goes on
// past its wait: Unpacking for a first unpack; nil (nothing to write) for
// a refetch, whose status already says unpacked, and while the status
// says a failure (the retry keeps saying it until it ends) or already
// says Unpacking.
func Waiting(b *rukpakv1alpha1.Bundle, step Step, source string) *Outcome {
	if step != Unpack || b.Status.Phase == rukpakv1alpha1.PhaseFailing || b.Status.Phase == rukpakv1alpha1.PhaseUnpacking {
		return nil
	}
	return &Outcome{Phase: Unpacking, Source: source}
}

// FetchFailed is the outcome of a fetch that failed with f (classified as the
// BundleDeployment reconciler classifies a failure: an upload source is a spec the adapter
// cannot serve; a full content store, a failure of its own, retried), of
// the source source names.
func FetchFailed(f status.Failure, source string) Outcome {
	o := Outcome{Source: source, Cause: f.Message, Retrying: f.Retrying, NextAttempt: f.NextAttempt}
	switch f.Kind {
	case status.SourceFailed, status.SpecUnsupported:
		o.Phase = SourceFailed
	case status.BundleInvalid:
		o.Phase = Invalid
	default:
		o.Phase = Failed
	}
	return o
}
