package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"github.com/google/go-containerregistry/pkg/authn"
	"os"
	"path/filepath"
	"reflect"
	"sort"

	kcv1alpha1 "carvel.dev/kapp-controller/pkg/apis/kappctrl/v1alpha1"
	pkgv1alpha1 "carvel.dev/kapp-controller/pkg/apis/packaging/v1alpha1"
	datav1alpha1 "carvel.dev/kapp-controller/pkg/apiserver/apis/datapackaging/v1alpha1"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/rukpak-kapp/rukpak-kapp/ocibundle"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

// PackageName is the Carvel package's refName:
// kctrl package install -p rukpak-kapp.core.rukpak.io --version ...
const PackageName = "rukpak-kapp.core.rukpak.io"

// kappControllerVersions are the kapp-controller versions the package is
// tested with (the harness runs v0.53.1).
const kappControllerVersions = ">=0.53.1"

type release struct {
	manifest, pkg, metadata, repository []byte
	packageBundle, repoBundle           string
}

func (r *release) files() map[string][]byte {
	return map[string][]byte{
		"rukpak-kapp.yaml":        r.manifest,
		"package.yaml":            r.pkg,
		"package-metadata.yaml":   r.metadata,
		"package-repository.yaml": r.repository,
	}
}

func (r *release) fileNames() []string {
	var names []string
	for n := range r.files() {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// makeRelease writes the manifest for image and pushes the package and
// repository bundles.
func makeRelease(ctx context.Context, o *options, info buildInfo, image string) (*release, error) {
	manifest, err := pinnedManifest(ctx, o.root, image, info.Version)
	if err != nil {
		return nil, err
	}
	r := &release{manifest: manifest}

	config := map[string][]byte{"config/rukpak-kapp.yaml": manifest}
	for _, f := range []string{"schema.yaml", "overlay.yaml"} {
		data, err := os.ReadFile(filepath.Join(o.root, "config", "package", f))
		if err != nil {
			return nil, err
		}
		config["config/"+f] = data
	}
	if err := checkDefaultValues(ctx, o.root, config, manifest); err != nil {
		return nil, err
	}
	config[ocibundle.ImagesLockPath] = ocibundle.ImagesLock(image)
	pkgBundle, err := bundleImage(config, info, "rukpak-kapp package")
	if err != nil {
		return nil, err
	}
	if r.packageBundle, err = ocibundle.Push(ctx, authn.DefaultKeychain, o.registry+"/rukpak-kapp-package", info.Version, pkgBundle); err != nil {
		return nil, err
	}

	schema, err := valuesSchema(ctx, o.root)
	if err != nil {
		return nil, err
	}
	if r.pkg, err = toYAML(carvelPackage(info, r.packageBundle, schema)); err != nil {
		return nil, err
	}
	if r.metadata, err = toYAML(packageMetadata()); err != nil {
		return nil, err
	}
	repo := map[string][]byte{
		"packages/" + PackageName + "/metadata.yml":             r.metadata,
		"packages/" + PackageName + "/" + info.Version + ".yml": r.pkg,
		ocibundle.ImagesLockPath:                                ocibundle.ImagesLock(r.packageBundle),
	}
	repoBundle, err := bundleImage(repo, info, "rukpak-kapp package repository")
	if err != nil {
		return nil, err
	}
	if r.repoBundle, err = ocibundle.Push(ctx, authn.DefaultKeychain, o.registry+"/rukpak-kapp-repo", info.Version, repoBundle); err != nil {
		return nil, err
	}
	if r.repository, err = toYAML(packageRepository(r.repoBundle)); err != nil {
		return nil, err
	}
	return r, nil
}

// bundleImage is an imgpkg bundle of files, labelled with the build.
func bundleImage(files map[string][]byte, info buildInfo, title string) (v1.Image, error) {
	return ocibundle.Bundle(files, ocibundle.BundleOptions{Created: info.Created, Annotations: info.annotations(title), CreatedBy: "rukpak-kapp release: " + title})
}

// checkDefaultValues renders the package's config as kapp-controller will,
// with no values, and fails unless that is exactly the release manifest:
// the schema's defaults and the manifest must not drift apart.
func checkDefaultValues(ctx context.Context, root string, config map[string][]byte, manifest []byte) error {
	dir, err := os.MkdirTemp("", "rukpak-kapp-package-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	for name, data := range config {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			return err
		}
	}
	rendered, err := runTool(ctx, root, "ytt", "-f", filepath.Join(dir, "config"))
	if err != nil {
		return err
	}
	got, err := decodeDocs(rendered)
	if err != nil {
		return err
	}
	want, err := decodeDocs(manifest)
	if err != nil {
		return err
	}
	if len(got) != len(want) {
		return fmt.Errorf("config/package with default values renders %d objects, the release manifest has %d", len(got), len(want))
	}
	for i := range want {
		if !reflect.DeepEqual(got[i], want[i]) {
			g, _ := yaml.Marshal(got[i])
			return fmt.Errorf("config/package with default values changes object %d of the release manifest; make config/package/schema.yaml's defaults match config/default. Rendered:\n%s", i, g)
		}
	}
	return nil
}

func decodeDocs(data []byte) ([]map[string]any, error) {
	var docs []map[string]any
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	for {
		var doc map[string]any
		if err := dec.Decode(&doc); err != nil {
			if err.Error() == "EOF" {
				return docs, nil
			}
			return nil, fmt.Errorf("decode YAML: %w", err)
		}
		if doc != nil {
			docs = append(docs, doc)
		}
	}
}

// valuesSchema is config/package/schema.yaml as OpenAPI v3, generated by ytt.
func valuesSchema(ctx context.Context, root string) ([]byte, error) {
	out, err := runTool(ctx, root, "ytt", "-f", filepath.Join(root, "config", "package", "schema.yaml"), "--data-values-schema-inspect", "-o", "openapi-v3")
	if err != nil {
		return nil, err
	}
	var doc struct {
		Components struct {
			Schemas struct {
				DataValues json.RawMessage `json:"dataValues"`
			} `json:"schemas"`
		} `json:"components"`
	}
	if err := yaml.Unmarshal(out, &doc); err != nil {
		return nil, fmt.Errorf("read ytt's OpenAPI schema: %w", err)
	}
	if len(doc.Components.Schemas.DataValues) == 0 {
		return nil, fmt.Errorf("ytt printed no data values schema for config/package/schema.yaml")
	}
	return doc.Components.Schemas.DataValues, nil
}

func carvelPackage(info buildInfo, bundle string, schema []byte) *datav1alpha1.Package {
	return &datav1alpha1.Package{
		TypeMeta:   metav1.TypeMeta{APIVersion: datav1alpha1.SchemeGroupVersion.String(), Kind: "Package"},
		ObjectMeta: metav1.ObjectMeta{Name: PackageName + "." + info.Version},
		Spec: datav1alpha1.PackageSpec{
			RefName:      PackageName,
			Version:      info.Version,
			ReleasedAt:   metav1.NewTime(info.Created),
			ReleaseNotes: "rukpak-kapp " + info.Version + ", built from " + info.Source + " at commit " + info.Revision,
			ValuesSchema: datav1alpha1.ValuesSchema{OpenAPIv3: runtime.RawExtension{Raw: schema}},
			Template: datav1alpha1.AppTemplateSpec{Spec: &kcv1alpha1.AppSpec{
				Fetch: []kcv1alpha1.AppFetch{{ImgpkgBundle: &kcv1alpha1.AppFetchImgpkgBundle{Image: bundle}}},
				Template: []kcv1alpha1.AppTemplate{
					{Ytt: &kcv1alpha1.AppTemplateYtt{Paths: []string{"config/"}}},
					{Kbld: &kcv1alpha1.AppTemplateKbld{Paths: []string{"-", ".imgpkg/images.yml"}}},
				},
				Deploy: []kcv1alpha1.AppDeploy{{Kapp: &kcv1alpha1.AppDeployKapp{}}},
			}},
			KappControllerVersionSelection: &datav1alpha1.VersionSelection{Constraints: kappControllerVersions},
		},
	}
}

func packageMetadata() *datav1alpha1.PackageMetadata {
	return &datav1alpha1.PackageMetadata{
		TypeMeta:   metav1.TypeMeta{APIVersion: datav1alpha1.SchemeGroupVersion.String(), Kind: "PackageMetadata"},
		ObjectMeta: metav1.ObjectMeta{Name: PackageName},
		Spec: datav1alpha1.PackageMetadataSpec{
			DisplayName:      "rukpak-kapp",
			ShortDescription: "rukpak's BundleDeployment API, installed by kapp-controller",
			LongDescription: "rukpak-kapp serves rukpak's BundleDeployment API (core.rukpak.io/v1alpha2) and hands the " +
				"installing to kapp-controller: every BundleDeployment becomes one App. Plain, helm and registry+v1 " +
				"(OLM) bundles from images, git, http and ConfigMaps.",
			ProviderName: "rukpak-kapp",
			Categories:   []string{"package-management", "operators"},
		},
	}
}

func packageRepository(bundle string) *pkgv1alpha1.PackageRepository {
	return &pkgv1alpha1.PackageRepository{
		TypeMeta:   metav1.TypeMeta{APIVersion: pkgv1alpha1.SchemeGroupVersion.String(), Kind: "PackageRepository"},
		ObjectMeta: metav1.ObjectMeta{Name: "rukpak-kapp"},
		Spec: pkgv1alpha1.PackageRepositorySpec{
			Fetch: &pkgv1alpha1.PackageRepositoryFetch{ImgpkgBundle: &kcv1alpha1.AppFetchImgpkgBundle{Image: bundle}},
		},
	}
}

// toYAML marshals obj without the empty fields the API types always carry.
func toYAML(obj any) ([]byte, error) {
	data, err := json.Marshal(obj)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, err
	}
	if meta, ok := m["metadata"].(map[string]any); ok {
		delete(meta, "creationTimestamp")
	}
	delete(m, "status")
	return yaml.Marshal(m)
}
