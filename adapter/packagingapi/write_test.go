package packagingapi

import (
	"context"
	"errors"
	"strings"
	"testing"

	datav1alpha1 "carvel.dev/kapp-controller/pkg/apiserver/apis/datapackaging/v1alpha1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/fieldowner"
)

func metadata(labels map[string]string, short string) *datav1alpha1.PackageMetadata {
	return &datav1alpha1.PackageMetadata{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p.example", Labels: labels},
		Spec:       datav1alpha1.PackageMetadataSpec{ShortDescription: short},
	}
}

// recording is a client holding objs that records the writes it receives,
// with their field owner.
func recording(t *testing.T, objs ...client.Object) (client.Client, *[]string) {
	t.Helper()
	scheme := runtime.NewScheme()
	if err := datav1alpha1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	var writes []string
	base := fake.NewClientBuilder().WithScheme(scheme).WithObjects(objs...).Build()
	c := interceptor.NewClient(base.(client.WithWatch), interceptor.Funcs{
		Create: func(ctx context.Context, c client.WithWatch, o client.Object, opts ...client.CreateOption) error {
			co := &client.CreateOptions{}
			co.ApplyOptions(opts)
			writes = append(writes, "create "+o.GetName()+" as "+co.FieldManager)
			return c.Create(ctx, o, opts...)
		},
		Update: func(ctx context.Context, c client.WithWatch, o client.Object, opts ...client.UpdateOption) error {
			uo := &client.UpdateOptions{}
			uo.ApplyOptions(opts)
			writes = append(writes, "update "+o.GetName()+" as "+uo.FieldManager)
			return c.Update(ctx, o, opts...)
		},
	})
	return c, &writes
}

// relabel writes want's spec and labels over the live object, when they
// differ.
func relabel(want *datav1alpha1.PackageMetadata) Change {
	return func(live client.Object) client.Object {
		m := live.(*datav1alpha1.PackageMetadata)
		if m.Spec.ShortDescription == want.Spec.ShortDescription && LabelsHold(m, want) {
			return nil
		}
		m.Spec, m.Labels = want.Spec, want.Labels
		return m
	}
}

// Put creates what is missing, updates what its caller judges changed and
// leaves the rest, always as the adapter's field owner.
func TestPut(t *testing.T) {
	ctx := context.Background()
	owned := map[string]string{"owner": "a"}
	for _, tc := range []struct {
		name   string
		live   []client.Object
		want   *datav1alpha1.PackageMetadata
		change func(*datav1alpha1.PackageMetadata) Change
		writes string
		short  string
	}{
		{"missing: created", nil, metadata(owned, "new"), relabel, "create p.example as " + fieldowner.Name, "new"},
		{"changed: updated", []client.Object{metadata(owned, "old")}, metadata(owned, "new"), relabel, "update p.example as " + fieldowner.Name, "new"},
		{"a label lost: updated", []client.Object{metadata(nil, "new")}, metadata(owned, "new"), relabel, "update p.example as " + fieldowner.Name, "new"},
		{"as wanted, with a label of someone else's: left", []client.Object{metadata(map[string]string{"owner": "a", "other": "x"}, "new")}, metadata(owned, "new"), relabel, "", "new"},
		{"never changed: left", []client.Object{metadata(owned, "old")}, metadata(owned, "new"), func(*datav1alpha1.PackageMetadata) Change { return Never }, "", "old"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, writes := recording(t, tc.live...)
			written, err := NewWriter(c, c).Put(ctx, c, tc.want, &datav1alpha1.PackageMetadata{}, tc.change(tc.want))
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Join(*writes, "; "); got != tc.writes {
				t.Errorf("writes %q, want %q", got, tc.writes)
			}
			if (written != nil) != (tc.writes != "") || (written != nil && written.GetResourceVersion() == "") {
				t.Errorf("written %v after writes %q", written, tc.writes)
			}
			got := &datav1alpha1.PackageMetadata{}
			if err := c.Get(ctx, client.ObjectKeyFromObject(tc.want), got); err != nil {
				t.Fatal(err)
			}
			if got.Spec.ShortDescription != tc.short {
				t.Errorf("spec %+v, want %q", got.Spec, tc.short)
			}
		})
	}
}

// emptyReader finds nothing: a cache that has not seen the object yet.
type emptyReader struct{ client.Reader }

func (emptyReader) Get(context.Context, client.ObjectKey, client.Object, ...client.GetOption) error {
	return apierrors.NewNotFound(schema.GroupResource{Group: datav1alpha1.SchemeGroupVersion.Group, Resource: "packagemetadatas"}, "p.example")
}

// An object a cache behind did not show is read again directly and
// judged as it is, not refused as existing.
func TestPut_madeSinceReadLooked(t *testing.T) {
	ctx := context.Background()
	c, writes := recording(t, metadata(nil, "old"))
	want := metadata(map[string]string{"owner": "a"}, "new")
	written, err := NewWriter(c, c).Put(ctx, emptyReader{}, want, &datav1alpha1.PackageMetadata{}, relabel(want))
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(*writes, "; "); got != "create p.example as "+fieldowner.Name+"; update p.example as "+fieldowner.Name || written == nil {
		t.Errorf("writes %q, written %v", got, written)
	}
}

// Every failure names the request and the object; one of an API server
// that is not available says whose it is, once.
func TestPut_errors(t *testing.T) {
	ctx := context.Background()
	down := apierrors.NewServiceUnavailable("the server is currently unable to handle the request")
	c, _ := recording(t)
	failing := interceptor.NewClient(c.(client.WithWatch), interceptor.Funcs{
		Create: func(context.Context, client.WithWatch, client.Object, ...client.CreateOption) error { return down },
	})
	_, err := NewWriter(failing, failing).Put(ctx, failing, metadata(nil, "new"), &datav1alpha1.PackageMetadata{}, Never)
	if !errors.Is(err, down) || !strings.HasPrefix(err.Error(), "create PackageMetadata p.example: kapp-controller's packaging API (APIService v1alpha1.data.packaging.carvel.dev) is not available") {
		t.Errorf("error %v", err)
	}
}

func TestError(t *testing.T) {
	refused := errors.New("denied")
	noMatch := &apimeta.NoKindMatchError{GroupKind: schema.GroupKind{Group: datav1alpha1.SchemeGroupVersion.Group, Kind: "Package"}}
	for _, tc := range []struct {
		err  error
		want string
	}{
		{refused, "list Packages: denied"},
		{noMatch, "list Packages: kapp-controller's packaging API (APIService v1alpha1.data.packaging.carvel.dev) is not available; check that kapp-controller runs: " + noMatch.Error()},
	} {
		err := Error("list Packages", tc.err)
		if err.Error() != tc.want || !errors.Is(err, tc.err) {
			t.Errorf("Error(%v) = %q, want %q wrapping it", tc.err, err, tc.want)
		}
	}
}
