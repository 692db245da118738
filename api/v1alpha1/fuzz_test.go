package v1alpha1

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/randfill"

	"github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
)

var reserved = []string{AnnotationV1alpha1Spec, AnnotationActiveBundle, AnnotationV1alpha2Fields}

// filler makes objects as the API server would hold them: metadata only
// where the schemas keep it (a template keeps name, namespace, labels,
// annotations and finalizers), times in whole seconds, config an object.
func filler(data []byte) *randfill.Filler {
	return randfill.NewFromGoFuzz(data).NilChance(0.3).NumElements(0, 3).Funcs(
		func(m *metav1.ObjectMeta, c randfill.Continue) {
			m.Name = c.String(6)
			m.Namespace = c.String(3)
			c.Fill(&m.Labels)
			c.Fill(&m.Annotations)
			c.Fill(&m.Finalizers)
			if c.Bool() {
				// Garbage under the conversion's own keys.
				m.Annotations = setAnnotation(m.Annotations, reserved[c.Intn(len(reserved))], c.String(4))
			}
		},
		func(cond *metav1.Condition, c randfill.Continue) {
			c.FillNoCustom(cond)
			cond.LastTransitionTime = metav1.NewTime(time.Unix(c.Int63n(1<<33), 0).UTC())
		},
		func(j *apiextensionsv1.JSON, c randfill.Continue) {
			values := map[string]string{}
			c.Fill(&values)
			j.Raw, _ = json.Marshal(values)
		},
		func(class *classChoice, c randfill.Continue) {
			*class = classChoice([]string{ClassPlain, ClassRegistry, ClassHelm, c.String(5)}[c.Intn(4)])
		},
	)
}

// classChoice makes classes collide with the ones the conversion treats
// specially often enough to matter.
type classChoice string

// normal is what the API server would serve: the object as JSON and back,
// without the conversion's own annotations.
func normal[T any](t *testing.T, in *T, meta func(*T) *metav1.ObjectMeta) *T {
	t.Helper()
	out := stored(t, in)
	m := meta(out)
	for _, k := range reserved {
		delete(m.Annotations, k)
	}
	m.Annotations = emptyAsNil(m.Annotations)
	return out
}

// stored is an object through the webhook's JSON and back, as the API
// server stores or serves a converted object.
func stored[T any](t *testing.T, in *T) *T {
	t.Helper()
	data, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	out := new(T)
	if err := json.Unmarshal(data, out); err != nil {
		t.Fatal(err)
	}
	return out
}

func spokeMeta(bd *BundleDeployment) *metav1.ObjectMeta        { return &bd.ObjectMeta }
func hubMeta(bd *v1alpha2.BundleDeployment) *metav1.ObjectMeta { return &bd.ObjectMeta }

// FuzzConversion checks that nothing is lost either way: v1alpha1 →
// v1alpha2 → v1alpha1 and v1alpha2 → v1alpha1 → v1alpha2 give back what
// went in, and an object carrying garbage under the conversion's keys
// converts without error and stably.
func FuzzConversion(f *testing.F) {
	f.Add([]byte("rukpak v0.16.0"))
	f.Add([]byte{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25})
	f.Add([]byte("a registry+v1 template with labels, an upload source and status"))
	f.Fuzz(func(t *testing.T, data []byte) {
		var classes [3]classChoice
		var spoke BundleDeployment
		var hub v1alpha2.BundleDeployment
		fill := filler(data)
		fill.Fill(&classes)
		fill.Fill(&spoke)
		fill.Fill(&hub)
		spoke.Spec.ProvisionerClassName = string(classes[0])
		spoke.Spec.Template.Spec.ProvisionerClassName = string(classes[1])
		hub.Spec.ProvisionerClassName = string(classes[2])
		spoke.TypeMeta = metav1.TypeMeta{APIVersion: GroupVersion.String(), Kind: "BundleDeployment"}
		hub.TypeMeta = metav1.TypeMeta{APIVersion: v1alpha2.GroupVersion.String(), Kind: "BundleDeployment"}

		// Each way from what a user may write.
		x := normal(t, &spoke, spokeMeta)
		if got := stored(t, FromV1alpha2(stored(t, ToV1alpha2(x)))); !cmp.Equal(x, got) {
			t.Fatalf("v1alpha1 → v1alpha2 → v1alpha1 (-in +out):\n%s", cmp.Diff(x, got))
		}
		if got := OwnClass(stored(t, ToV1alpha2(x))); got != x.Spec.ProvisionerClassName {
			t.Fatalf("OwnClass of the stored form is %q, the v1alpha1 class %q", got, x.Spec.ProvisionerClassName)
		}
		y := normal(t, &hub, hubMeta)
		if got := stored(t, ToV1alpha2(stored(t, FromV1alpha2(y)))); !cmp.Equal(y, got) {
			t.Fatalf("v1alpha2 → v1alpha1 → v1alpha2 (-in +out):\n%s", cmp.Diff(y, got))
		}

		// With garbage where the conversion keeps its records: once
		// converted, the object is stable.
		once := stored(t, ToV1alpha2(stored(t, &spoke)))
		if again := stored(t, ToV1alpha2(stored(t, FromV1alpha2(once)))); !cmp.Equal(once, again) {
			t.Fatalf("unstable v1alpha2 form (-first +second):\n%s", cmp.Diff(once, again))
		}
		back := stored(t, FromV1alpha2(stored(t, &hub)))
		if again := stored(t, FromV1alpha2(stored(t, ToV1alpha2(back)))); !cmp.Equal(back, again) {
			t.Fatalf("unstable v1alpha1 form (-first +second):\n%s", cmp.Diff(back, again))
		}
	})
}
