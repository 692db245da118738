package servemode

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	kappctrlv1alpha1 "carvel.dev/kapp-controller/pkg/apis/kappctrl/v1alpha1"
	datav1alpha1 "carvel.dev/kapp-controller/pkg/apiserver/apis/datapackaging/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/bundlefiles"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/fieldowner"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/internal/scope"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/internal/store"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/packaging"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/packagingapi"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/translate"
	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
	"github.com/rukpak-kapp/rukpak-kapp/convert"
)

// LabelPackageValues marks the Secrets that hold a served Package's values.
const LabelPackageValues = "core.rukpak.io/package-values"

// templateFile names the Package's App spec where a version is made of it.
const templateFile = "package-template.json"

// desiredPackage makes the packaging objects for the scope's generation,
// reading what the bundle says of itself and what is published already.
func (m *PackageInstaller) desiredPackage(ctx context.Context, s *scope.Scope, f store.Fetched) (*packageSet, error) {
	bd := s.View
	d, err := draftPackage(bd, s.Cfg, f.Packed(), translate.StyleOf(s.Live))
	if err != nil {
		return nil, err
	}
	identity, schema, err := m.identityOf(ctx, bd, s.AppNS, f)
	if err != nil {
		return nil, err
	}
	version, made, err := m.packageVersion(ctx, bd, s.AppNS, identity, d.template)
	if err != nil {
		return nil, err
	}
	set := packageObjects(bd, s.AppNS, d, version, identity, schema)
	set.made = made
	return set, nil
}

// identityOf is what the bundle says of itself: a chart's Chart.yaml (and
// its values schema) from the content Secrets, a registry+v1 bundle's CSV.
func (m *PackageInstaller) identityOf(ctx context.Context, bd *rukpakv1alpha2.BundleDeployment, ns string, f store.Fetched) (packaging.Identity, []byte, error) {
	switch bd.Spec.ProvisionerClassName {
	case rukpakv1alpha2.ClassRegistry:
		var csv *convert.Package
		if f.Bundle != nil {
			csv = &f.Bundle.Package
		}
		return packaging.IdentityOf(bd, csv, nil)
	case rukpakv1alpha2.ClassHelm:
		for _, s := range f.Secrets {
			if s.Dir != bundlefiles.ChartDir {
				continue
			}
			secret := &corev1.Secret{}
			if err := m.client.Get(ctx, client.ObjectKey{Namespace: ns, Name: s.Name}, secret); err != nil {
				return packaging.Identity{}, nil, scope.InStep(scope.StepStore, "read content secret %s: %w", s.Name, err)
			}
			if _, ok := secret.Data["Chart.yaml"]; ok {
				return packaging.IdentityOf(bd, nil, secret.Data)
			}
		}
		return packaging.Identity{}, nil, errors.New("the chart's Chart.yaml is not in its content Secrets")
	}
	return packaging.IdentityOf(bd, nil, nil)
}

// packageVersion is the version of the Package made of template. Two
// contents under one version (a chart changed without a version bump, a
// registry+v1 bundle converted again) must not change a published
// Package, so the second gets a content version; once it has one it
// keeps it, even after the first is cleaned up. made names what the
// version was picked from: the bundle's own version and the template's
// content version.
func (m *PackageInstaller) packageVersion(ctx context.Context, bd *rukpakv1alpha2.BundleDeployment, ns string, identity packaging.Identity, template *kappctrlv1alpha1.AppSpec) (version, made string, err error) {
	files, err := templateFiles(template)
	if err != nil {
		return "", "", err
	}
	v, err := packaging.Version(bd, identity, files)
	if err != nil {
		return "", "", &translate.UnsupportedError{Reason: err.Error()}
	}
	cv := packaging.ContentVersion(files)
	made = v + " " + cv
	if v == cv {
		return v, made, nil
	}
	if picked, ok := m.published.get(bd.Name, made); ok {
		return picked, made, nil
	}
	atV, err := m.publishedVersion(ctx, ns, bd.Name, v)
	if err != nil {
		return "", "", err
	}
	atCV := ""
	if atV == "" {
		if atCV, err = m.publishedVersion(ctx, ns, bd.Name, cv); err != nil {
			return "", "", err
		}
	}
	return pickVersion(v, cv, atV, atCV), made, nil
}

// publishedVersion is the content version of the template the published
// Package of version holds; "" when there is none.
func (m *PackageInstaller) publishedVersion(ctx context.Context, ns, bdName, version string) (string, error) {
	pkg := &datav1alpha1.Package{}
	name := packaging.PackageName(packaging.RefName(bdName), version)
	err := m.direct.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, pkg)
	if apierrors.IsNotFound(err) {
		return "", nil
	}
	if err != nil {
		return "", packagingAPIError("read Package "+name, err)
	}
	files, err := templateFiles(pkg.Spec.Template.Spec)
	if err != nil {
		return "", err
	}
	return packaging.ContentVersion(files), nil
}

func templateFiles(template *kappctrlv1alpha1.AppSpec) (map[string][]byte, error) {
	data, err := json.Marshal(template)
	if err != nil {
		return nil, fmt.Errorf("encode the Package's template: %w", err)
	}
	return map[string][]byte{templateFile: data}, nil
}

// publish writes the PackageMetadata, the Package (never changed once
// published: its version names its template) and the values Secret.
// What was published for bdName's current template is not read again.
func (m *PackageInstaller) publish(ctx context.Context, bdName string, set *packageSet) error {
	if _, ok := m.published.get(bdName, set.made); !ok {
		if err := m.publishPackage(ctx, set); err != nil {
			return err
		}
		m.published.set(bdName, set.made, set.version)
	}
	if set.values == nil {
		return nil
	}
	err := m.client.Get(ctx, client.ObjectKeyFromObject(set.values), &corev1.Secret{})
	if apierrors.IsNotFound(err) {
		err = client.IgnoreAlreadyExists(m.client.Create(ctx, set.values, client.FieldOwner(fieldowner.Name)))
	}
	if err != nil {
		return scope.InStep(scope.StepStore, "write values secret %s: %w", set.values.Name, err)
	}
	return nil
}

// publishPackage writes the PackageMetadata and the Package through
// kapp-controller's packaging API: the PackageMetadata is updated when its
// spec or labels changed, the Package never is.
func (m *PackageInstaller) publishPackage(ctx context.Context, set *packageSet) error {
	_, err := m.packages.Put(ctx, m.direct, set.metadata, &datav1alpha1.PackageMetadata{}, func(live client.Object) client.Object {
		meta := live.(*datav1alpha1.PackageMetadata)
		if apiequality.Semantic.DeepEqual(meta.Spec, set.metadata.Spec) && packagingapi.LabelsHold(meta, set.metadata) {
			return nil
		}
		meta.Spec, meta.Labels = set.metadata.Spec, set.metadata.Labels
		return meta
	})
	if err == nil {
		_, err = m.packages.Put(ctx, m.direct, set.pkg, &datav1alpha1.Package{}, packagingapi.Never)
	}
	if err != nil {
		return scope.InStep(scope.StepStore, "%w", err)
	}
	return nil
}

// packagingAPIError is a failed request to the packaging API, in the
// store's step.
func packagingAPIError(what string, err error) error {
	return scope.InStep(scope.StepStore, "%w", packagingapi.Error(what, err))
}
