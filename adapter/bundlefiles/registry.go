package bundlefiles

import (
	"encoding/json"
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
	"github.com/rukpak-kapp/rukpak-kapp/convert"
)

// RegistryFiles converts a fetched registry+v1 bundle into a plain bundle:
// one file per object under manifests/, in apply order, with the bundle's
// metadata and the converter's notes.
func RegistryFiles(bd *rukpakv1alpha2.BundleDeployment, files map[string][]byte, certs convert.CertSource) (*Layout, error) {
	opts, namespace, err := registryOptions(bd, files)
	if err != nil {
		return nil, err
	}
	opts.Certificates = certs
	res, err := convert.Convert(files, opts)
	if err != nil {
		// The converter's errors say what they are about.
		return nil, &InvalidError{Err: err}
	}
	objs := res.Objects
	if namespace != nil {
		objs = append([]*unstructured.Unstructured{namespace}, objs...)
	}
	out := map[string][]byte{}
	if len(objs) == 0 {
		// A CSV without deployments converts to nothing; the App still
		// needs a file to template, and kapp is told an empty set is fine.
		out[ManifestsDir+"/0000.yaml"] = []byte("# This registry+v1 bundle converts to no objects.\n")
	}
	for i, o := range objs {
		data, err := convert.Marshal(o)
		if err != nil {
			return nil, &InvalidError{Reason: "write converted object", Err: err}
		}
		// Secret keys allow few characters, so files are numbered.
		out[fmt.Sprintf("%s/%04d.yaml", ManifestsDir, i)] = data
	}
	return &Layout{Files: out, Metadata: &res.Metadata, Notes: res.Notes}, nil
}

// WatchNamespaces reads spec.config.watchNamespaces, the namespaces a
// registry+v1 operator watches. rukpak's schema keeps config free-form.
func WatchNamespaces(bd *rukpakv1alpha2.BundleDeployment) ([]string, error) {
	if bd.Spec.Config == nil || len(bd.Spec.Config.Raw) == 0 {
		return nil, nil
	}
	var cfg struct {
		WatchNamespaces *[]string `json:"watchNamespaces"`
	}
	if err := json.Unmarshal(bd.Spec.Config.Raw, &cfg); err != nil {
		var typeErr *json.UnmarshalTypeError
		if errors.As(err, &typeErr) {
			return nil, invalid("spec.config.watchNamespaces must be a list of namespace names, with \"\" for all namespaces")
		}
		return nil, invalid(fmt.Sprintf("parse spec.config: %v", err))
	}
	if cfg.WatchNamespaces == nil {
		return nil, nil
	}
	return *cfg.WatchNamespaces, nil
}
