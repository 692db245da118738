package client

import (
	"context"
	"errors"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/rukpak-kapp/rukpak-kapp/adapter"
)

// The webhook probe's verdict by what the API server answers its dry-run
// create: someone who may only read is told what was not verified, not
// that the installation fails.
func TestCheckWebhooks_Probe(t *testing.T) {
	t.Parallel()
	scheme, err := adapter.Scheme()
	if err != nil {
		t.Fatal(err)
	}
	gr := schema.GroupResource{Group: "core.rukpak.io", Resource: "bundledeployments"}
	for _, tc := range []struct {
		name string
		err  error
		want string
	}{
		{name: "served", want: CheckOK},
		{name: "read-only user", err: apierrors.NewForbidden(gr, "", errors.New(`User "viewer" cannot create resource "bundledeployments"`)), want: CheckWarn},
		{name: "webhook unreachable", err: apierrors.NewInternalError(errors.New(`conversion webhook for core.rukpak.io/v1alpha2 failed: connection refused`)), want: CheckFail},
		{name: "refused otherwise", err: apierrors.NewBadRequest("no"), want: CheckFail},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := fake.NewClientBuilder().WithScheme(scheme).WithInterceptorFuncs(interceptor.Funcs{
				Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
					return tc.err
				},
			}).Build()
			got := checker{c: c, ns: "rukpak-system", now: time.Now()}.webhooks(context.Background())
			if len(got) == 0 || got[0].Status != tc.want {
				t.Fatalf("got %+v, want %s first", got, tc.want)
			}
		})
	}
}
