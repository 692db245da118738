package operatorcatalog

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/packagingapi"
	catalogsv1alpha1 "github.com/rukpak-kapp/rukpak-kapp/api/catalogs/v1alpha1"
)

// waitWhat is what every message of an unavailable packaging API says to
// do, and what then happens.
const waitWhat = "check that kapp-controller runs (rukpak-kapp check says what it finds). The catalog is published as soon as the API is back, without a restart of rukpak-kapp."

// waitingMessage is what an OperatorCatalog says while kapp-controller's
// packaging API is not served: one sentence, the same at every look, so a
// catalog's status is written once per outage.
var waitingMessage = fmt.Sprintf("Nothing of this catalog can be published or withdrawn while kapp-controller's packaging API (APIService %s) is not served: %s",
	packagingapi.APIService, waitWhat)

// outageMessage is what an OperatorCatalog says while the packaging API,
// served before, does not answer: what answered (the same for the whole
// outage, so the status is written once) and what to do.
func outageMessage(answer string) string {
	return fmt.Sprintf("Nothing of this catalog can be published or withdrawn: kapp-controller's packaging API (APIService %s) stopped answering (%s). %s",
		packagingapi.APIService, answer, strings.ToUpper(waitWhat[:1])+waitWhat[1:])
}

// ReportWaiting says on every OperatorCatalog reader lists that it waits for
// kapp-controller's packaging API, through status, where its status does
// not say so already: the catalog controller runs only while that API is
// served, and a catalog made or left meanwhile would say nothing. A cluster
// without the OperatorCatalog API has nothing to say it on (the list's
// error says so).
func ReportWaiting(ctx context.Context, reader client.Reader, status StatusWriter) error {
	var list catalogsv1alpha1.OperatorCatalogList
	if err := reader.List(ctx, &list); err != nil {
		return fmt.Errorf("list OperatorCatalogs to say they wait for kapp-controller's packaging API: %w", err)
	}
	var errs []error
	for i := range list.Items {
		cat := &list.Items[i]
		if !cat.DeletionTimestamp.IsZero() {
			continue
		}
		before := cat.DeepCopy()
		setPublished(&cat.Status, cat.Generation, metav1.ConditionFalse, catalogsv1alpha1.ReasonPackagingAPIUnavailable, waitingMessage)
		if reflect.DeepEqual(&cat.Status, &before.Status) {
			continue
		}
		if err := status(ctx, cat, before, before.Status.Conditions, cat.Status.Conditions); err != nil {
			errs = append(errs, fmt.Errorf("write the status of OperatorCatalog %s/%s: %w", cat.Namespace, cat.Name, err))
		}
	}
	return errors.Join(errs...)
}
