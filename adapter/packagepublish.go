package adapter

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"path"

	kappctrlv1alpha1 "carvel.dev/kapp-controller/pkg/apis/kappctrl/v1alpha1"
	packagingv1alpha1 "carvel.dev/kapp-controller/pkg/apis/packaging/v1alpha1"
	datav1alpha1 "carvel.dev/kapp-controller/pkg/apiserver/apis/datapackaging/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/bundle"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/packaging"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/translate"
	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
)

// LabelPackageValues marks the Secrets that hold a served Package's values.
const LabelPackageValues = "core.rukpak.io/package-values"

// templateFile names the Package's App spec where a version is made of it.
const templateFile = "package-template.json"

// packageSet is what one generation publishes and installs in the serve
// mode.
type packageSet struct {
	version  string
	metadata *datav1alpha1.PackageMetadata
	pkg      *datav1alpha1.Package
	// values is nil when the Package takes none.
	values  *corev1.Secret
	install *packagingv1alpha1.PackageInstall
}

// desiredPackage makes the packaging objects for bd's generation: the
// Package's App spec is the App the App mode would write (in the live
// App's style, so switching modes changes no selector), with helm values
// moved to a values Secret so a values change is no new Package.
func (r *Reconciler) desiredPackage(ctx context.Context, bd *rukpakv1alpha2.BundleDeployment, f fetched, live *kappctrlv1alpha1.App) (*packageSet, error) {
	c := f.content()
	var values []byte
	if bd.Spec.ProvisionerClassName == rukpakv1alpha2.ClassHelm {
		var err error
		if values, err = bundle.HelmValues(bd); err != nil {
			return nil, err
		}
		c = withoutValues(c)
	}
	app, err := translate.AppInStyle(bd, r.cfg, c, translate.StyleOf(live))
	if err != nil {
		return nil, err
	}
	template := packaging.AppTemplate(app, app.Spec.Fetch[0], bundle.ChartDir)
	identity, schema, err := r.identityOf(ctx, bd, f)
	if err != nil {
		return nil, err
	}
	version, err := r.packageVersion(ctx, bd, identity, template)
	if err != nil {
		return nil, err
	}
	set := &packageSet{version: version}
	for _, o := range packaging.Objects(packaging.Spec{
		BundleDeployment: bd, Version: version, Identity: identity, Template: template, ValuesSchema: schema, Values: values,
		Namespace: r.cfg.SystemNamespace, ServiceAccountName: app.Spec.ServiceAccountName, SyncPeriod: app.Spec.SyncPeriod,
	}) {
		o.SetLabels(translate.OwnerLabels(bd.Name))
		switch o := o.(type) {
		case *datav1alpha1.PackageMetadata:
			set.metadata = o
		case *datav1alpha1.Package:
			set.pkg = o
		case *corev1.Secret:
			set.values = valuesSecret(bd, o)
		case *packagingv1alpha1.PackageInstall:
			set.install = o
		}
	}
	pi := set.install
	// Content versions do not order, and the BundleDeployment's spec,
	// not the highest version, decides what is installed.
	pi.Annotations = map[string]string{packagingDowngradable: ""}
	pi.OwnerReferences = translate.OwnerReferences(bd)
	if set.values != nil {
		pi.Spec.Values[0].SecretRef.Name = set.values.Name
	}
	return set, nil
}

// packagingDowngradable lets a PackageInstall install a version lower than
// the last it attempted (kapp-controller v0.53.1
// pkg/packageinstall/packageinstall.go).
const packagingDowngradable = "packaging.carvel.dev/downgradable"

// valuesSecret is the values Secret named by its values: new values are a
// new Secret, so the PackageInstall's spec and its App's change with them
// and kapp-controller's report of the App speaks for them.
func valuesSecret(bd *rukpakv1alpha2.BundleDeployment, s *corev1.Secret) *corev1.Secret {
	data := []byte(s.StringData[packaging.ValuesKey])
	sum := sha256.Sum256(data)
	immutable := true
	s.Name = packaging.ValuesSecretName(bd.Name) + "-" + hex.EncodeToString(sum[:])[:10]
	s.Labels[LabelPackageValues] = "true"
	s.OwnerReferences = translate.OwnerReferences(bd)
	s.StringData, s.Data, s.Immutable = nil, map[string][]byte{packaging.ValuesKey: data}, &immutable
	return s
}

// withoutValues drops the Secret holding the values file from c.
func withoutValues(c *translate.Content) *translate.Content {
	if c == nil {
		return nil
	}
	out := *c
	out.Secrets = nil
	for _, s := range c.Secrets {
		if s.Dir != path.Dir(bundle.ValuesFile) {
			out.Secrets = append(out.Secrets, s)
		}
	}
	return &out
}

// identityOf is what the bundle says of itself: a chart's Chart.yaml (and
// its values schema) from the content Secrets, a registry+v1 bundle's CSV.
func (r *Reconciler) identityOf(ctx context.Context, bd *rukpakv1alpha2.BundleDeployment, f fetched) (packaging.Identity, []byte, error) {
	switch bd.Spec.ProvisionerClassName {
	case rukpakv1alpha2.ClassRegistry:
		if f.bundle == nil {
			return packaging.Identity{}, nil, errors.New("the registry+v1 bundle's metadata was not recorded")
		}
		return registryIdentity(f.bundle.Package), nil, nil
	case rukpakv1alpha2.ClassHelm:
		for _, s := range f.secrets {
			if s.Dir != bundle.ChartDir {
				continue
			}
			secret := &corev1.Secret{}
			if err := r.client.Get(ctx, client.ObjectKey{Namespace: r.cfg.SystemNamespace, Name: s.Name}, secret); err != nil {
				return packaging.Identity{}, nil, inStep(stepStore, "read content secret %s: %w", s.Name, err)
			}
			chart, ok := secret.Data["Chart.yaml"]
			if !ok {
				continue
			}
			identity, err := packaging.ChartIdentity(chart)
			var schema []byte
			if s, ok := secret.Data["values.schema.json"]; ok && json.Valid(s) {
				schema = s
			}
			return identity, schema, err
		}
		return packaging.Identity{}, nil, errors.New("the chart's Chart.yaml is not in its content Secrets")
	}
	return plainIdentity(bd), nil, nil
}

// packageVersion is the version of the Package made of template. Two
// contents under one version (a chart changed without a version bump, a
// registry+v1 bundle converted again) must not change a published
// Package, so the second gets a content version; once it has one it
// keeps it, even after the first is cleaned up.
func (r *Reconciler) packageVersion(ctx context.Context, bd *rukpakv1alpha2.BundleDeployment, identity packaging.Identity, template *kappctrlv1alpha1.AppSpec) (string, error) {
	files, err := templateFiles(template)
	if err != nil {
		return "", err
	}
	v, err := packaging.Version(bd, identity, files)
	if err != nil {
		return "", &translate.UnsupportedError{Reason: err.Error()}
	}
	cv := packaging.ContentVersion(files)
	if v == cv {
		return v, nil
	}
	held, err := r.publishedVersion(ctx, bd.Name, v)
	switch {
	case err != nil:
		return "", err
	case held == cv:
		return v, nil
	case held != "":
		return cv, nil
	}
	fellBack, err := r.publishedVersion(ctx, bd.Name, cv)
	if err != nil {
		return "", err
	}
	if fellBack != "" {
		return cv, nil
	}
	return v, nil
}

// publishedVersion is the content version of the template the published
// Package of version holds; "" when there is none.
func (r *Reconciler) publishedVersion(ctx context.Context, bdName, version string) (string, error) {
	pkg := &datav1alpha1.Package{}
	name := packaging.PackageName(packaging.RefName(bdName), version)
	err := r.direct.Get(ctx, client.ObjectKey{Namespace: r.cfg.SystemNamespace, Name: name}, pkg)
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
func (r *Reconciler) publish(ctx context.Context, set *packageSet) error {
	meta := &datav1alpha1.PackageMetadata{}
	err := r.direct.Get(ctx, client.ObjectKeyFromObject(set.metadata), meta)
	switch {
	case apierrors.IsNotFound(err):
		err = r.client.Create(ctx, set.metadata, client.FieldOwner(FieldOwner))
	case err == nil && !(apiequality.Semantic.DeepEqual(meta.Spec, set.metadata.Spec) && labelsHold(meta, set.metadata)):
		meta.Spec, meta.Labels = set.metadata.Spec, set.metadata.Labels
		err = r.client.Update(ctx, meta, client.FieldOwner(FieldOwner))
	}
	if err != nil {
		return packagingAPIError("publish PackageMetadata "+set.metadata.Name, err)
	}
	err = r.direct.Get(ctx, client.ObjectKeyFromObject(set.pkg), &datav1alpha1.Package{})
	if apierrors.IsNotFound(err) {
		err = client.IgnoreAlreadyExists(r.client.Create(ctx, set.pkg, client.FieldOwner(FieldOwner)))
	}
	if err != nil {
		return packagingAPIError("publish Package "+set.pkg.Name, err)
	}
	if set.values == nil {
		return nil
	}
	err = r.client.Get(ctx, client.ObjectKeyFromObject(set.values), &corev1.Secret{})
	if apierrors.IsNotFound(err) {
		err = client.IgnoreAlreadyExists(r.client.Create(ctx, set.values, client.FieldOwner(FieldOwner)))
	}
	if err != nil {
		return inStep(stepStore, "write values secret %s: %w", set.values.Name, err)
	}
	return nil
}

func labelsHold(live, desired client.Object) bool {
	for k, v := range desired.GetLabels() {
		if live.GetLabels()[k] != v {
			return false
		}
	}
	return true
}

// packagingAPIError says which of kapp-controller's APIs failed: Packages
// and PackageMetadata are served by its own aggregated API server, which
// may be down while the cluster is not.
func packagingAPIError(what string, err error) error {
	if apierrors.IsServiceUnavailable(err) || apimeta.IsNoMatchError(err) {
		return inStep(stepStore, "%s: kapp-controller's packaging API (APIService v1alpha1.data.packaging.carvel.dev) is not available; check that kapp-controller runs: %w", what, err)
	}
	return inStep(stepStore, "%s: %w", what, err)
}
