package convert

import "k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

// DecodeAll reads every YAML or JSON document of data, a List flattened
// into its items, as kapp and Helm read a manifest.
func DecodeAll(data []byte) ([]*unstructured.Unstructured, error) { return decodeAll(data) }
