package deployments

import (
	"context"
	"errors"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/contenturl"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/internal/kube"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/internal/scope"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/status"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/v1alpha1/deployments/templates"
	rukpakv1alpha1 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha1"
	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
)

// BundleSet is what V1alpha1 needs of the Bundles in the cluster (Set), so its
// decisions are tested over an in-memory list.
type BundleSet interface {
	// List lists bd's Bundles and finds its current template's, or the one
	// to make: a read. The error is one to report and retry.
	List(ctx context.Context, bd *rukpakv1alpha1.BundleDeployment) (*scope.Generated, error)
	// Make releases the Bundles rukpak made and, when makeMissing is set,
	// makes g's missing Bundle. The error is one to report and retry.
	Make(ctx context.Context, g *scope.Generated, makeMissing bool) error
	// Report writes b's status when it differs from st.
	Report(ctx context.Context, b *rukpakv1alpha1.Bundle, st rukpakv1alpha1.BundleStatus) error
	// Prune deletes bd's Bundles other than current, which is installed.
	Prune(ctx context.Context, bd *rukpakv1alpha1.BundleDeployment, listed []rukpakv1alpha1.Bundle, current string) error
}

// V1alpha1 serves BundleDeployments of rukpak's first API: everything the
// BundleDeployment reconciler does differently for one happens here, behind its Bundles
// seam. A v1alpha1 BundleDeployment is installed through one App like a
// v1alpha2 one; before that its template's Bundle is found or made (Load),
// and its status is reported in v1alpha1's terms, with its Bundle's
// (Report).
type V1alpha1 struct {
	client   client.Client
	recorder events.EventRecorder
	bundles  BundleSet
	// systemNamespace is where rukpak v0.16 installed a plain or helm
	// bundle's objects that name no namespace.
	systemNamespace string
	// contentAddress is where Bundles' contentURLs point; empty: none.
	contentAddress string
}

// NewV1alpha1 serves rukpak's first API over the Bundles of b, writing the
// BundleDeployments' status through c; recorder may be nil.
func NewV1alpha1(c client.Client, recorder events.EventRecorder, b BundleSet, systemNamespace, contentAddress string) *V1alpha1 {
	return &V1alpha1{client: c, recorder: recorder, bundles: b, systemNamespace: systemNamespace, contentAddress: contentAddress}
}

// Serves says bd, as stored (v1alpha2), is one of rukpak's first API.
func (v *V1alpha1) Serves(bd *rukpakv1alpha2.BundleDeployment) bool {
	return rukpakv1alpha1.IsV1alpha1(bd)
}

// View is bd as it is installed: rukpak v0.16's install namespace.
func (v *V1alpha1) View(bd *rukpakv1alpha2.BundleDeployment) *rukpakv1alpha2.BundleDeployment {
	return templates.View(bd, v.systemNamespace)
}

// Read finds bd's Bundles and the current template's (or the one to make):
// a read, nothing written. reported is bd as the status computation reads
// what is installed (its active Bundle's resolved source). The error is a
// failed read, reported and retried.
func (v *V1alpha1) Read(ctx context.Context, bd *rukpakv1alpha2.BundleDeployment) (g *scope.Generated, reported *rukpakv1alpha2.BundleDeployment, err error) {
	g, err = v.bundles.List(ctx, rukpakv1alpha1.FromV1alpha2(bd))
	if g == nil {
		g = &scope.Generated{BD: rukpakv1alpha1.FromV1alpha2(bd)}
	}
	return g, templates.Reported(bd, g.Listed), err
}

// Prepare is the step that writes what Read found: rukpak's finalizer
// taken off the Bundles rukpak made and, for an install (makeMissing), the
// template's Bundle made. stop, when set, says nothing is installed now:
// the Bundle could not be made (its Err says why, or the Bundle limit
// does) or its source is an upload.
func (v *V1alpha1) Prepare(ctx context.Context, g *scope.Generated, makeMissing bool) (stop *scope.Outcome) {
	err := v.bundles.Make(ctx, g, makeMissing)
	switch {
	case err != nil:
		return &scope.Outcome{Err: err}
	case g.Bundle == nil:
		// The Bundle limit: the watch on Bundles brings it back when one goes.
		return &scope.Outcome{}
	case makeMissing && g.BD.Spec.Template.Spec.Source.Type == rukpakv1alpha1.SourceTypeUpload:
		return &scope.Outcome{Err: ErrUpload}
	}
	return nil
}

// ErrUpload refuses a template's upload source (scope.UploadRefused).
var ErrUpload = scope.UploadRefused("set spec.template.spec.source to it")

// Report is the BundleDeployment reconciler's status write for s's BundleDeployment: the
// v1alpha2 status out, computed from facts as for any BundleDeployment, is
// mapped to the BundleDeployment's and its current Bundle's v1alpha1
// statuses (templates.Status) and written when write (the BundleDeployment reconciler's
// decision) says so, or when the Bundle's news cannot wait; the Bundles the
// current one supersedes go once it is installed (when installing). wrote
// says the BundleDeployment's status was written, and installed is its
// Installed condition then.
func (v *V1alpha1) Report(ctx context.Context, s *scope.Scope, facts status.Facts, out status.Computed, write, installing bool) (wrote bool, installed *metav1.Condition, err error) {
	g := s.Generated
	if g == nil {
		// A step before the Bundles were read failed: its error is the news,
		// the status waits for a reconcile that read them.
		return false, nil, nil
	}
	res := templates.Status(templates.Observed{
		BD: g.BD, Bundle: g.Bundle, BundleFailure: g.Failure, Status: out.Status, Resolved: facts.Fetched,
		Invalid: status.InvalidContent(facts, s.View.Spec.ProvisionerClassName), Now: facts.Now,
		ContentURL: v.contentURL(g.Bundle),
	})
	wrote = write || newsOfBundle(g.BD.Status.Conditions, res.BD.Conditions)
	var errs []error
	if res.Bundle != nil && (wrote || g.Bundle.Status.Phase == "") {
		// A Bundle just made says Pending at once, as rukpak's did.
		errs = append(errs, v.bundles.Report(ctx, g.Bundle, *res.Bundle))
	}
	if wrote {
		installed = apimeta.FindStatusCondition(res.BD.Conditions, rukpakv1alpha1.TypeInstalled)
		errs = append(errs, kube.WriteV1alpha1Status(ctx, v.client, v.recorder, s.BD, res.BD))
	}
	if res.Installed && installing {
		errs = append(errs, v.bundles.Prune(ctx, g.BD, g.Listed, g.Bundle.Name))
	}
	return wrote, installed, errors.Join(errs...)
}

// contentURL is where b's content is served.
func (v *V1alpha1) contentURL(b *rukpakv1alpha1.Bundle) string {
	if b == nil {
		return ""
	}
	return contenturl.For(v.contentAddress, contenturl.KindBundle, b.Name)
}

// newsOfBundle says HasValidBundle changed in a way written at once even
// while the install is under way (when the v1alpha2 status is held): a
// failure, or a change out of a known state (a new template's Bundle, a
// failure fixed). Only the first wait for a Bundle to unpack is held.
func newsOfBundle(before, after []metav1.Condition) bool {
	b := apimeta.FindStatusCondition(before, rukpakv1alpha1.TypeHasValidBundle)
	a := apimeta.FindStatusCondition(after, rukpakv1alpha1.TypeHasValidBundle)
	if a == nil || (b != nil && b.Status == a.Status && b.Reason == a.Reason) {
		return false
	}
	return a.Status != metav1.ConditionTrue || (b != nil && b.Reason != rukpakv1alpha1.ReasonUnpackPending)
}
