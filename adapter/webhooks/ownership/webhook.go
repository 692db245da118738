package ownership

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	admissionv1 "k8s.io/api/admission/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/catalog"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/fieldowner"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/webhooks"
)

// What config/webhook declares.
const (
	// Path is where the API server sends the BundleDeployment updates.
	Path = "/validate-operatorinstall-ownership"
	// WebhookName is quoted in the API server's refusal.
	WebhookName = "operatorinstall-ownership.core.rukpak.io"
)

// Add serves the check on srv; nil srv (webhooks turned off) adds nothing.
// Its configuration's caBundle is the one crdsafety keeps (the same
// ValidatingWebhookConfiguration).
func Add(srv *webhooks.Server) error {
	if srv == nil {
		return nil
	}
	srv.Register(Path, &admission.Webhook{Handler: handler{}})
	return nil
}

type handler struct{}

// object is what the check reads of a BundleDeployment, of either API
// generation: the request comes in the version the client wrote.
type object struct {
	metav1.ObjectMeta `json:"metadata"`
	Spec              json.RawMessage `json:"spec"`
}

func (handler) Handle(ctx context.Context, req admission.Request) admission.Response {
	if req.Operation != admissionv1.Update {
		return admission.Allowed("only updates are judged")
	}
	var old, new object
	if err := json.Unmarshal(req.OldObject.Raw, &old); err != nil {
		return admission.Errored(http.StatusBadRequest, fmt.Errorf("decode the stored BundleDeployment: %w", err))
	}
	if err := json.Unmarshal(req.Object.Raw, &new); err != nil {
		return admission.Errored(http.StatusBadRequest, fmt.Errorf("decode the updated BundleDeployment: %w", err))
	}
	owner := old.Annotations[catalog.AnnotationOperatorInstall]
	switch {
	case owner == "":
		return admission.Allowed("no OperatorInstall writes the BundleDeployment")
	case new.Annotations[catalog.AnnotationOperatorInstall] == "":
		return admission.Allowed("the update takes the BundleDeployment out of its OperatorInstall's hands")
	case sameSpec(old.Spec, new.Spec) && sameEntry(old.Annotations, new.Annotations):
		return admission.Allowed("the spec and the catalog entry are unchanged")
	}
	if m := fieldManager(req.Options.Raw); m == fieldowner.Name {
		return admission.Allowed("the OperatorInstall writes it")
	}
	ns, name, _ := strings.Cut(owner, "/")
	log.FromContext(ctx).Info("refused a change by hand of a BundleDeployment an OperatorInstall writes", "bundleDeployment", new.Name, "operatorInstall", owner, "user", req.UserInfo.Username)
	return admission.Denied(fmt.Sprintf("BundleDeployment %s is written by OperatorInstall %s: its bundle, its catalog entry and its values change through it "+
		"(kctrl package installed update -n %s -i %s --version or --values-file). To take it out of the install's hands, remove its annotation %s first",
		new.Name, owner, ns, name, catalog.AnnotationOperatorInstall))
}

// entryAnnotations are what the OperatorInstall says of what its
// BundleDeployment installs: its catalog entry, and which install and
// generation wrote it.
var entryAnnotations = []string{catalog.AnnotationOperatorInstall, catalog.AnnotationOperatorInstallGeneration, catalog.AnnotationChannel, catalog.AnnotationBundle, catalog.AnnotationVersion}

// sameEntry says the update leaves entryAnnotations as they were.
func sameEntry(old, new map[string]string) bool {
	for _, k := range entryAnnotations {
		if old[k] != new[k] {
			return false
		}
	}
	return true
}

// sameSpec compares two specs as JSON values.
func sameSpec(a, b json.RawMessage) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return bytes.Equal(a, b)
	}
	ja, _ := json.Marshal(x)
	jb, _ := json.Marshal(y)
	return bytes.Equal(ja, jb)
}

// fieldManager is the field manager an update's or patch's options name.
func fieldManager(options []byte) string {
	var o struct {
		FieldManager string `json:"fieldManager"`
	}
	if json.Unmarshal(options, &o) != nil {
		return ""
	}
	return o.FieldManager
}
