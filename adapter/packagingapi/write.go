package packagingapi

import (
	"context"

	datav1alpha1 "carvel.dev/kapp-controller/pkg/apiserver/apis/datapackaging/v1alpha1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/fieldowner"
)

// Writer writes Packages and PackageMetadata.
type Writer struct {
	client client.Client
	// direct reads an object a create found made since the caller's read
	// looked: the caller may have read a cache that is behind.
	direct client.Reader
}

// NewWriter is a writer writing through c and reading through direct.
func NewWriter(c client.Client, direct client.Reader) Writer {
	return Writer{client: c, direct: direct}
}

// Change is what Put writes over the live object it read: live changed,
// or the wanted object with live's resourceVersion; nil leaves it as it
// is.
type Change func(live client.Object) client.Object

// Never leaves a live object as it is: for what never changes once
// published (a Package, whose version names its template).
func Never(client.Object) client.Object { return nil }

// Put makes want so in its namespace. read (a cache or the API server)
// reads it into live, an empty object of want's kind, whole or its
// metadata only; want is created when there is none (one made meanwhile is
// read again directly); otherwise change says what is written over it.
// written is what was created or updated, with its new resourceVersion;
// nil when nothing was.
func (w Writer) Put(ctx context.Context, read client.Reader, want, live client.Object, change Change) (written client.Object, err error) {
	what := kindOf(want) + " " + want.GetName()
	key := client.ObjectKeyFromObject(want)
	err = read.Get(ctx, key, live)
	if apierrors.IsNotFound(err) {
		err = w.client.Create(ctx, want, client.FieldOwner(fieldowner.Name))
		if err == nil {
			return want, nil
		}
		if !apierrors.IsAlreadyExists(err) {
			return nil, Error("create "+what, err)
		}
		// Made since read looked (a cache behind, another writer):
		// judged as it is now.
		err = w.direct.Get(ctx, key, live)
	}
	if err != nil {
		return nil, Error("read "+what, err)
	}
	over := change(live)
	if over == nil {
		return nil, nil
	}
	if err := w.client.Update(ctx, over, client.FieldOwner(fieldowner.Name)); err != nil {
		return nil, Error("update "+what, err)
	}
	return over, nil
}

// kindOf names o's kind in errors: typed objects carry no kind of their
// own.
func kindOf(o client.Object) string {
	switch o.(type) {
	case *datav1alpha1.Package:
		return "Package"
	case *datav1alpha1.PackageMetadata:
		return "PackageMetadata"
	}
	return o.GetObjectKind().GroupVersionKind().Kind
}
