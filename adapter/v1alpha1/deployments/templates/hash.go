package templates

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"math/big"

	rukpakv1alpha1 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha1"
)

// TemplateHash is the value of a generated Bundle's
// core.rukpak.io/bundle-template-hash label for a template, exactly as
// rukpak v0.16 computed it: the base 36 text of the SHA-224 of the
// template encoded by encoding/json's Encoder (with its newline) as
// rukpak's Go types encoded it.
//
// The spec encodes as api/v1alpha1's types (their JSON tags and field
// order are rukpak's). The metadata does not: rukpak's ObjectMeta, from
// apimachinery v0.26, always wrote "creationTimestamp":null, which newer
// ObjectMetas omit, so templateMetadata below spells rukpak's encoding
// out. Only the fields the CRD keeps of a template's metadata can be set.
func TemplateHash(t rukpakv1alpha1.BundleTemplate) string {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	err := enc.Encode(hashedTemplate{
		Metadata: templateMetadata{
			Name: t.Name, Namespace: t.Namespace, Labels: t.Labels, Annotations: t.Annotations, Finalizers: t.Finalizers,
		},
		Spec: t.Spec,
	})
	if err != nil {
		// Strings, maps and slices of strings encode without error.
		panic(fmt.Sprintf("encode a bundle template: %v", err))
	}
	sum := sha256.Sum224(buf.Bytes())
	return new(big.Int).SetBytes(sum[:]).Text(36)
}

type hashedTemplate struct {
	Metadata templateMetadata          `json:"metadata,omitempty"`
	Spec     rukpakv1alpha1.BundleSpec `json:"spec"`
}

// templateMetadata encodes as apimachinery v0.26's ObjectMeta with only
// these fields set, in its field order.
type templateMetadata struct {
	Name              string            `json:"name,omitempty"`
	Namespace         string            `json:"namespace,omitempty"`
	CreationTimestamp json.RawMessage   `json:"creationTimestamp"`
	Labels            map[string]string `json:"labels,omitempty"`
	Annotations       map[string]string `json:"annotations,omitempty"`
	Finalizers        []string          `json:"finalizers,omitempty"`
}

// BundleName is the name of the Bundle generated for a template of hash h,
// as rukpak v0.16 named it: <bd>-<hash>, the hash cut so that the name
// fits a Bundle's 52 characters.
func BundleName(bd, hash string) string {
	if len(bd) > rukpakv1alpha1.MaxBundleDeploymentNameLength {
		bd = bd[:rukpakv1alpha1.MaxBundleDeploymentNameLength]
	}
	if room := rukpakv1alpha1.MaxBundleNameLength - len(bd) - 1; len(hash) > room {
		hash = hash[:room]
	}
	return bd + "-" + hash
}
