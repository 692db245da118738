package packagingapi

import (
	"context"
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
)

// APIService is the APIService of kapp-controller's packaging API.
const APIService = "v1alpha1.data.packaging.carvel.dev"

// Error is err of what (a request to the packaging API), saying so when
// the API is not available: Packages and PackageMetadata are served by
// kapp-controller's own aggregated API server, which may be down (or not
// registered) while the cluster is not, and the API server's own error
// does not say whose server that is.
func Error(what string, err error) error {
	if Unavailable(err) {
		return fmt.Errorf("%s: kapp-controller's packaging API (APIService %s) is not available; check that kapp-controller runs: %w", what, APIService, err)
	}
	return fmt.Errorf("%s: %w", what, err)
}

// Unavailable says err is the packaging API's absence (its aggregated
// server down, or the API not registered), not a refusal of one object.
func Unavailable(err error) bool {
	return apierrors.IsServiceUnavailable(err) || apimeta.IsNoMatchError(err)
}

// Transient says err may pass by itself when the request is made again: a
// conflict with another writer, throttling, a timeout, a server error. It
// is no refusal of the object written.
func Transient(err error) bool {
	if apierrors.IsConflict(err) || apierrors.IsTooManyRequests(err) || apierrors.IsServerTimeout(err) || apierrors.IsTimeout(err) ||
		apierrors.IsInternalError(err) || apierrors.IsUnexpectedServerError(err) || errors.Is(err, context.DeadlineExceeded) {
		return true
	}
	var status apierrors.APIStatus
	return errors.As(err, &status) && status.Status().Code >= 500
}
