package deployments

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/fieldowner"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/internal/kube"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/internal/scope"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/translate"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/v1alpha1/deployments/templates"
	rukpakv1alpha1 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha1"
)

// Set reads Bundles from c (the informer cache) and direct (the API
// server, where the cache may lag behind a Bundle just made).
type Set struct {
	client   client.Client
	direct   client.Reader
	recorder events.EventRecorder
}

// New is a Set over c and direct; recorder (nil: none) records a
// generated Bundle's transitions as a Bundle on its own's are recorded.
func New(c client.Client, direct client.Reader, recorder events.EventRecorder) *Set {
	return &Set{client: c, direct: direct, recorder: recorder}
}

// List lists bd's Bundles and finds the one of its current template: a
// read, nothing written. When there is none, Missing is the Bundle to make
// (Make), or Failure says why none can be. The error is one to retry (a
// failed read); Failure then says it too.
func (s *Set) List(ctx context.Context, bd *rukpakv1alpha1.BundleDeployment) (*scope.Generated, error) {
	g := &scope.Generated{BD: bd}
	list := &rukpakv1alpha1.BundleList{}
	if err := s.client.List(ctx, list, client.MatchingLabels(templates.Selector(bd.Name))); err != nil {
		g.Failure = fmt.Sprintf("The Bundles of the BundleDeployment could not be listed, the adapter retries: %v", err)
		return g, fmt.Errorf("list the Bundles of %s: %w", bd.Name, err)
	}
	g.Listed = list.Items
	gen := templates.Generate(bd, g.Listed)
	switch {
	case gen.Current != nil:
		g.Bundle = gen.Current
	case gen.Blocked != "":
		g.Failure = gen.Blocked
	default:
		g.Missing = gen.Create
		g.Failure = fmt.Sprintf("The Bundle %s of the template does not exist", gen.Create.Name)
	}
	return g, nil
}

// Make writes what List found: it takes rukpak v0.16's finalizer off the
// Bundles rukpak made for bd and, when makeMissing is set (an install),
// makes the template's missing Bundle. The error is one to retry (a
// failed write); Failure then says it too. A Bundle the API server
// refuses to make is a spec error: it is reported, with an error only a
// new template ends.
func (s *Set) Make(ctx context.Context, g *scope.Generated, makeMissing bool) error {
	owned := templates.Owned(g.BD, g.Listed)
	for i := range owned {
		if err := kube.ReleaseBundleFromRukpak(ctx, s.client, &owned[i]); err != nil {
			g.Failure = fmt.Sprintf("rukpak's finalizer could not be removed from a Bundle, the adapter retries: %v", err)
			return err
		}
		if g.Bundle != nil && g.Bundle.Name == owned[i].Name {
			// Its status is written with the resourceVersion the patch left.
			g.Bundle = owned[i].DeepCopy()
		}
	}
	if g.Missing == nil || !makeMissing {
		return nil
	}
	b, err := s.create(ctx, g.BD, g.Missing)
	if err != nil {
		g.Failure = err.Error()
		return err
	}
	g.Bundle, g.Missing, g.Failure = b, nil, ""
	g.Listed = append(g.Listed, *b)
	return nil
}

// create makes b, or finds it made by an earlier reconcile the cache has
// not caught up with.
func (s *Set) create(ctx context.Context, bd *rukpakv1alpha1.BundleDeployment, b *rukpakv1alpha1.Bundle) (*rukpakv1alpha1.Bundle, error) {
	err := s.client.Create(ctx, b, client.FieldOwner(fieldowner.Name))
	switch {
	case err == nil:
		return b, nil
	case apierrors.IsInvalid(err):
		return nil, &translate.UnsupportedError{Reason: fmt.Sprintf("The API server refuses the Bundle %s of the template; fix spec.template: %v", b.Name, err)}
	case !apierrors.IsAlreadyExists(err):
		return nil, scope.InStep(scope.StepStore, "make the Bundle %s of the template, the adapter retries: %w", b.Name, err)
	}
	live := &rukpakv1alpha1.Bundle{}
	if err := s.direct.Get(ctx, client.ObjectKeyFromObject(b), live); err != nil {
		return nil, scope.InStep(scope.StepStore, "read the Bundle %s of the template, the adapter retries: %w", b.Name, err)
	}
	if owned := templates.Owned(bd, []rukpakv1alpha1.Bundle{*live}); len(owned) == 0 {
		return nil, &translate.UnsupportedError{Reason: fmt.Sprintf("A Bundle named %s exists and is not this BundleDeployment's; "+
			"delete it (or rename the BundleDeployment) and the template's Bundle is made", b.Name)}
	}
	return live, nil
}

// Report writes b's status when it differs from st, with its Event
// (kube.WriteBundleStatus, the one status writer of Bundles).
func (s *Set) Report(ctx context.Context, b *rukpakv1alpha1.Bundle, st rukpakv1alpha1.BundleStatus) error {
	return kube.WriteBundleStatus(ctx, s.client, s.recorder, b, st)
}

// Prune deletes bd's Bundles other than current, which is installed.
func (s *Set) Prune(ctx context.Context, bd *rukpakv1alpha1.BundleDeployment, listed []rukpakv1alpha1.Bundle, current string) error {
	uids := map[string]*rukpakv1alpha1.Bundle{}
	for i := range listed {
		uids[listed[i].Name] = &listed[i]
	}
	for _, name := range templates.Superseded(bd, listed, current) {
		b := uids[name]
		if err := s.client.Delete(ctx, b, client.Preconditions{UID: &b.UID}); client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("delete the superseded Bundle %s: %w", name, err)
		}
	}
	return nil
}
