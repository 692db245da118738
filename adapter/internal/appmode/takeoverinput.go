package appmode

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/bundlefiles"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/internal/store"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/takeover"
	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
	"github.com/rukpak-kapp/rukpak-kapp/convert"
)

// TakeOverInput reads what takeover.Take decides the take-over of bd
// from: rukpak's release Secrets in the system namespace, the bundle bd
// names now (fetched and rendered as rukpak-kapp renders it) and, with
// readLive, every object of rukpak's release as the cluster has it (this
// needs read access to every kind the release holds). bd must carry the
// built-in class it is installed as.
func TakeOverInput(ctx context.Context, c client.Reader, mapper meta.RESTMapper, fetcher store.Fetcher, systemNamespace string, bd *rukpakv1alpha2.BundleDeployment, readLive bool) (takeover.Input, error) {
	in := takeover.Input{BD: bd}
	secrets := &corev1.SecretList{}
	if err := c.List(ctx, secrets, client.InNamespace(systemNamespace)); err != nil {
		return in, fmt.Errorf("list release secrets in %s: %w", systemNamespace, err)
	}
	in.Releases = takeover.ReleaseSecrets(bd, secrets.Items)
	in.Release, in.ReleaseErr = takeover.CurrentRelease(in.Releases)
	if errors.Is(in.ReleaseErr, takeover.ErrNoRelease) {
		in.Release, in.ReleaseErr = nil, nil
	}
	kinds := scopeOfKinds(mapper)
	if in.Release != nil {
		objs, err := takeover.ParseManifest([]byte(in.Release.Manifest))
		if err == nil {
			objs, err = takeover.Place(objs, bd.Spec.InstallNamespace, kinds)
		}
		var crds []*unstructured.Unstructured
		if err == nil {
			crds, err = takeover.ReleaseCRDs(in.Release)
		}
		if err == nil {
			crds, err = takeover.Place(crds, bd.Spec.InstallNamespace, kinds)
		}
		if err != nil {
			in.Release, in.ReleaseErr = nil, fmt.Errorf("%s: %w", in.Releases[len(in.Releases)-1].Name, err)
		}
		in.Installed, in.ChartCRDs = objs, crds
	}
	if in.Release != nil {
		in.RenderErr = renderForTakeOver(ctx, fetcher, bd, kinds, &in)
	}
	if !readLive || in.Release == nil {
		return in, nil
	}
	in.Live = map[takeover.Ref]*unstructured.Unstructured{}
	for _, o := range takeover.TakeOverObjects(in) {
		live := &unstructured.Unstructured{}
		live.SetGroupVersionKind(o.GroupVersionKind())
		err := c.Get(ctx, client.ObjectKeyFromObject(o), live)
		switch {
		case apierrors.IsNotFound(err):
		case err != nil:
			return in, fmt.Errorf("read %s: %w", takeover.RefOf(o), err)
		default:
			in.Live[takeover.RefOf(o)] = live
		}
	}
	return in, nil
}

// renderForTakeOver fetches the bundle bd names now and renders it as
// rukpak-kapp would, so the take-over can tell whether it is still what
// rukpak installed.
func renderForTakeOver(ctx context.Context, fetcher store.Fetcher, bd *rukpakv1alpha2.BundleDeployment, kinds takeover.ScopeOfKind, in *takeover.Input) error {
	m, err := store.Materialize(ctx, fetcher, bd, convert.FreshCertificates(time.Now()))
	switch {
	case !m.Fetched:
		return fmt.Errorf("fetch the bundle: %w", err)
	case err != nil:
		return fmt.Errorf("read the bundle: %w", err)
	}
	in.Resolved = m.Resolved
	laid := m.Layout.Files
	if bd.Spec.ProvisionerClassName == rukpakv1alpha2.ClassHelm {
		chart := map[string][]byte{}
		for name, data := range laid {
			if rest, ok := strings.CutPrefix(name, bundlefiles.ChartDir+"/"); ok {
				chart[rest] = data
			}
		}
		var values map[string]any
		if err := yaml.Unmarshal(laid[bundlefiles.ValuesFile], &values); err != nil {
			return fmt.Errorf("read the values: %w", err)
		}
		in.SourceDifferences = takeover.ChartDifferences(in.Release, chart, values)
		return nil
	}
	names := make([]string, 0, len(laid))
	for name := range laid {
		names = append(names, name)
	}
	sort.Strings(names)
	var objs []*unstructured.Unstructured
	for _, name := range names {
		parsed, err := takeover.ParseManifest(laid[name])
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		objs = append(objs, parsed...)
	}
	if in.Rendered, err = takeover.Place(objs, bd.Spec.InstallNamespace, kinds); err != nil {
		return err
	}
	return nil
}

// scopeOfKinds answers takeover.ScopeOfKind from the API server's discovery.
func scopeOfKinds(mapper meta.RESTMapper) takeover.ScopeOfKind {
	return func(gk schema.GroupKind) (bool, bool) {
		m, err := mapper.RESTMapping(gk)
		if err != nil {
			return false, false
		}
		return m.Scope.Name() == meta.RESTScopeNameNamespace, true
	}
}
