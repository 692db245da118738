package fakekube

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"

	kappctrlv1alpha1 "carvel.dev/kapp-controller/pkg/apis/kappctrl/v1alpha1"
	packagingv1alpha1 "carvel.dev/kapp-controller/pkg/apis/packaging/v1alpha1"
	datav1alpha1 "carvel.dev/kapp-controller/pkg/apiserver/apis/datapackaging/v1alpha1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/fetch"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/packagingapi"
	rukpakv1alpha1 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha1"
	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
)

// Scheme knows the kinds the adapter's scheme knows (adapter.Scheme, which
// the packages under test cannot import: it imports them).
func Scheme() *runtime.Scheme {
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, rukpakv1alpha1.AddToScheme, rukpakv1alpha2.AddToScheme, kappctrlv1alpha1.AddToScheme,
		packagingv1alpha1.AddToScheme, datav1alpha1.AddToScheme} {
		if err := add(s); err != nil {
			panic(err)
		}
	}
	return s
}

// The verbs a Call records. Writes are every verb but Get and List.
const (
	Get, List                  = "get", "list"
	Create, Update, Patch      = "create", "update", "patch"
	Apply, Delete, DeleteAllOf = "apply", "delete", "deleteallof"
	StatusUpdate, StatusPatch  = "status-update", "status-patch"
)

// The readers a Call goes through.
const (
	ViaClient = "client"
	ViaDirect = "direct"
)

// Call is one call of a client.
type Call struct {
	// Via is ViaClient or ViaDirect: the reader it went through.
	Via       string
	Verb      string
	Kind      string
	Namespace string
	Name      string
}

func (c Call) String() string {
	return fmt.Sprintf("%s %s %s/%s", c.Verb, c.Kind, c.Namespace, c.Name)
}

// Write says whether the call changes the cluster.
func (c Call) Write() bool { return c.Verb != Get && c.Verb != List }

// Cluster is a fake API server with two clients over one store: Client,
// what the adapter writes through (and reads as its informer cache), and
// Direct, the reader of the API server.
type Cluster struct {
	Client client.Client
	Direct client.Reader
	// Raw is the store itself: what a test sets up or changes through it
	// (as another controller or a user would) is not recorded.
	Raw client.Client
	// Fail, when set, is asked before every call; an error it returns is
	// the call's, and the call is not made.
	Fail func(Call) error

	scheme *runtime.Scheme
	mu     sync.Mutex
	calls  []Call
}

// New is a Cluster holding objs. Apps, PackageInstalls and
// BundleDeployments have a status subresource, as on a real API server.
// mapper answers the scope of kinds (nil: none known).
func New(mapper meta.RESTMapper, objs ...client.Object) *Cluster {
	c := &Cluster{scheme: Scheme()}
	b := fake.NewClientBuilder().WithScheme(c.scheme).WithObjects(objs...).
		WithStatusSubresource(&rukpakv1alpha2.BundleDeployment{}, &rukpakv1alpha1.BundleDeployment{}, &rukpakv1alpha1.Bundle{}, &kappctrlv1alpha1.App{}, &packagingv1alpha1.PackageInstall{})
	if mapper != nil {
		b = b.WithRESTMapper(mapper)
	}
	// Catalog Packages' metadata, indexed as the adapter's cache of them.
	for name, fn := range packagingapi.Indexes() {
		b = b.WithIndex(packagingapi.CatalogPackage(), name, fn)
	}
	store := b.Build()
	c.Raw = store
	c.Client = interceptor.NewClient(store, c.funcs(ViaClient))
	c.Direct = interceptor.NewClient(store, c.funcs(ViaDirect))
	return c
}

// Calls are the calls made since the last Reset, in order.
func (c *Cluster) Calls() []Call {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.calls)
}

// Writes are the writes made since the last Reset, in order.
func (c *Cluster) Writes() []Call {
	var out []Call
	for _, call := range c.Calls() {
		if call.Write() {
			out = append(out, call)
		}
	}
	return out
}

// Wrote is Writes as "verb Kind namespace/name" strings.
func (c *Cluster) Wrote() []string {
	var out []string
	for _, w := range c.Writes() {
		out = append(out, w.String())
	}
	return out
}

// ExpectWrites fails t unless the writes since the last Reset are want,
// in order, and then resets.
func (c *Cluster) ExpectWrites(t testing.TB, what string, want ...string) {
	t.Helper()
	if got := c.Wrote(); !slices.Equal(got, want) {
		t.Fatalf("%s: wrote %q, want %q", what, got, want)
	}
	c.Reset()
}

// Count is how many calls since the last Reset match via, verb and kind
// ("": any).
func (c *Cluster) Count(via, verb, kind string) int {
	n := 0
	for _, call := range c.Calls() {
		if (via == "" || call.Via == via) && (verb == "" || call.Verb == verb) && (kind == "" || call.Kind == kind) {
			n++
		}
	}
	return n
}

// Reset forgets the calls made so far.
func (c *Cluster) Reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.calls = nil
}

// Index is the position of the first call since the last Reset matching
// verb, kind and name, -1 when there is none.
func (c *Cluster) Index(verb, kind, name string) int {
	for i, call := range c.Calls() {
		if call.Verb == verb && call.Kind == kind && call.Name == name {
			return i
		}
	}
	return -1
}

func (c *Cluster) record(call Call) error {
	c.mu.Lock()
	c.calls = append(c.calls, call)
	fail := c.Fail
	c.mu.Unlock()
	if fail != nil {
		return fail(call)
	}
	return nil
}

func (c *Cluster) call(via, verb string, obj runtime.Object, key client.ObjectKey) Call {
	kind := ""
	if gvk, err := apiutil.GVKForObject(obj, c.scheme); err == nil {
		kind = gvk.Kind
	}
	if verb == List {
		kind = kind[:len(kind)-len("List")]
	}
	if o, ok := obj.(client.Object); ok && key == (client.ObjectKey{}) {
		key = client.ObjectKeyFromObject(o)
	}
	return Call{Via: via, Verb: verb, Kind: kind, Namespace: key.Namespace, Name: key.Name}
}

// applied reads the kind and name of a server-side apply.
func applied(via string, obj runtime.ApplyConfiguration) Call {
	var head struct {
		Kind     string `json:"kind"`
		Metadata struct {
			Name      string `json:"name"`
			Namespace string `json:"namespace"`
		} `json:"metadata"`
	}
	data, _ := json.Marshal(obj)
	_ = json.Unmarshal(data, &head)
	return Call{Via: via, Verb: Apply, Kind: head.Kind, Namespace: head.Metadata.Namespace, Name: head.Metadata.Name}
}

// then records call and, unless Fail refuses it, makes it.
func (c *Cluster) then(call Call, do func() error) error {
	if err := c.record(call); err != nil {
		return err
	}
	return do()
}

func (c *Cluster) funcs(via string) interceptor.Funcs {
	none := client.ObjectKey{}
	return interceptor.Funcs{
		Get: func(ctx context.Context, w client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			return c.then(c.call(via, Get, obj, key), func() error { return w.Get(ctx, key, obj, opts...) })
		},
		List: func(ctx context.Context, w client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
			ns := client.ObjectKey{Namespace: (&client.ListOptions{}).ApplyOptions(opts).Namespace}
			return c.then(c.call(via, List, list, ns), func() error { return w.List(ctx, list, opts...) })
		},
		Create: func(ctx context.Context, w client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			return c.then(c.call(via, Create, obj, none), func() error { return w.Create(ctx, obj, opts...) })
		},
		Update: func(ctx context.Context, w client.WithWatch, obj client.Object, opts ...client.UpdateOption) error {
			return c.then(c.call(via, Update, obj, none), func() error { return w.Update(ctx, obj, opts...) })
		},
		Patch: func(ctx context.Context, w client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
			return c.then(c.call(via, Patch, obj, none), func() error { return w.Patch(ctx, obj, patch, opts...) })
		},
		Apply: func(ctx context.Context, w client.WithWatch, obj runtime.ApplyConfiguration, opts ...client.ApplyOption) error {
			return c.then(applied(via, obj), func() error { return w.Apply(ctx, obj, opts...) })
		},
		Delete: func(ctx context.Context, w client.WithWatch, obj client.Object, opts ...client.DeleteOption) error {
			return c.then(c.call(via, Delete, obj, none), func() error { return w.Delete(ctx, obj, opts...) })
		},
		DeleteAllOf: func(ctx context.Context, w client.WithWatch, obj client.Object, opts ...client.DeleteAllOfOption) error {
			return c.then(c.call(via, DeleteAllOf, obj, none), func() error { return w.DeleteAllOf(ctx, obj, opts...) })
		},
		SubResourceUpdate: func(ctx context.Context, w client.Client, sub string, obj client.Object, opts ...client.SubResourceUpdateOption) error {
			return c.then(c.call(via, sub+"-update", obj, none), func() error { return w.SubResource(sub).Update(ctx, obj, opts...) })
		},
		SubResourcePatch: func(ctx context.Context, w client.Client, sub string, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
			return c.then(c.call(via, sub+"-patch", obj, none), func() error { return w.SubResource(sub).Patch(ctx, obj, patch, opts...) })
		},
	}
}

// Offline is the content store's fetcher on a machine without a network,
// for the parts whose bundles kapp-controller fetches: a fetch fails T.
type Offline struct{ T testing.TB }

// Fetch fails the test.
func (o Offline) Fetch(context.Context, *rukpakv1alpha2.BundleDeployment) (fetch.Files, *rukpakv1alpha2.BundleSource, error) {
	o.T.Error("the store fetched")
	return nil, nil, errors.New("offline")
}

// RemoteHead fails the test.
func (o Offline) RemoteHead(context.Context, *rukpakv1alpha2.GitSource) (string, error) {
	o.T.Error("the store asked a remote")
	return "", errors.New("offline")
}
