package harness

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// ApplyYAML server-side applies every object of a multi-document YAML stream.
func ApplyYAML(ctx context.Context, c client.Client, data []byte) ([]*unstructured.Unstructured, error) {
	objs, err := DecodeYAML(data)
	if err != nil {
		return nil, err
	}
	for _, u := range objs {
		if err := c.Apply(ctx, client.ApplyConfigurationFromUnstructured(u), client.FieldOwner("rukpak-kapp-harness"), client.ForceOwnership); err != nil {
			return nil, fmt.Errorf("apply %s %s: %w", u.GetKind(), u.GetName(), err)
		}
	}
	return objs, nil
}

// DecodeYAML splits a YAML stream into objects, skipping empty documents.
func DecodeYAML(data []byte) ([]*unstructured.Unstructured, error) {
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	var out []*unstructured.Unstructured
	for {
		u := &unstructured.Unstructured{}
		if err := dec.Decode(&u.Object); err != nil {
			if errors.Is(err, io.EOF) {
				return out, nil
			}
			return nil, fmt.Errorf("decode yaml: %w", err)
		}
		if len(u.Object) > 0 {
			out = append(out, u)
		}
	}
}

// WaitForCRDs waits until each CRD among objs is Established.
func WaitForCRDs(ctx context.Context, c client.Client, objs []*unstructured.Unstructured) error {
	for _, u := range objs {
		if u.GetKind() != "CustomResourceDefinition" {
			continue
		}
		err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
			crd := &apiextensionsv1.CustomResourceDefinition{}
			if err := c.Get(ctx, client.ObjectKey{Name: u.GetName()}, crd); err != nil {
				return false, nil
			}
			for _, cond := range crd.Status.Conditions {
				if cond.Type == apiextensionsv1.Established && cond.Status == apiextensionsv1.ConditionTrue {
					return true, nil
				}
			}
			return false, nil
		})
		if err != nil {
			return fmt.Errorf("crd %s not established: %w", u.GetName(), err)
		}
		// Established is not yet served: discovery, and so the client's
		// REST mapper, can lag behind it.
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := c.Get(ctx, client.ObjectKey{Name: u.GetName()}, crd); err != nil {
			return err
		}
		gk := schema.GroupKind{Group: crd.Spec.Group, Kind: crd.Spec.Names.Kind}
		err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
			_, err := c.RESTMapper().RESTMapping(gk)
			return err == nil, nil
		})
		if err != nil {
			return fmt.Errorf("crd %s not served: %w", u.GetName(), err)
		}
	}
	return nil
}
