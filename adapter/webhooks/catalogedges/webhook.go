package catalogedges

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/catalog"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/webhooks"
)

// What config/webhook declares.
const (
	// Path is where the API server sends the BundleDeployment updates.
	Path = "/validate-catalog-upgrade"
	// WebhookName is quoted in the API server's refusal.
	WebhookName = "catalog-upgrade.core.rukpak.io"
)

// listBound is how long the channel's Packages are read for the message,
// well within the webhook's timeout: the decision does not wait on them.
const listBound = 4 * time.Second

// Channels reads a channel's graph among the catalog Packages seen from
// a namespace (packagingapi.Packages: from a cache indexed by channel, so
// that a request never lists a namespace).
type Channels interface {
	Channel(ctx context.Context, ns, refName string) (nodes []catalog.Node, unreadable, err error)
	// Retracted is the revision that retracted bundle from the channel
	// (catalog.AnnotationRetracted); ok is false when it is not retracted.
	Retracted(ctx context.Context, ns, refName, bundle string) (revision string, ok bool, err error)
}

// Add serves the check on srv, reading channels through channels; nil srv
// (webhooks turned off) adds nothing. Its configuration's caBundle is the
// one crdsafety keeps (the same ValidatingWebhookConfiguration).
func Add(srv *webhooks.Server, channels Channels) error {
	if srv == nil {
		return nil
	}
	srv.Register(Path, &admission.Webhook{Handler: &handler{channels: channels}})
	return nil
}

type handler struct {
	channels Channels
}

// meta is what the check reads of a BundleDeployment, of either API
// generation: the request comes in the version the client wrote.
type meta struct {
	metav1.ObjectMeta `json:"metadata"`
	Spec              struct {
		// v1alpha2.
		Source imageSource `json:"source"`
		// v1alpha1.
		Template struct {
			Spec struct {
				Source imageSource `json:"source"`
			} `json:"spec"`
		} `json:"template"`
	} `json:"spec"`
}

type imageSource struct {
	Image *struct {
		Ref string `json:"ref"`
	} `json:"image"`
}

// image is the bundle image the BundleDeployment names ("" for another
// source).
func (m meta) image() string {
	for _, s := range []imageSource{m.Spec.Source, m.Spec.Template.Spec.Source} {
		if s.Image != nil && s.Image.Ref != "" {
			return s.Image.Ref
		}
	}
	return ""
}

func (h *handler) Handle(ctx context.Context, req admission.Request) admission.Response {
	if req.Operation != admissionv1.Update {
		return admission.Allowed("only updates are judged")
	}
	var old, new meta
	if err := json.Unmarshal(req.OldObject.Raw, &old); err != nil {
		return admission.Errored(http.StatusBadRequest, fmt.Errorf("decode the stored BundleDeployment: %w", err))
	}
	if err := json.Unmarshal(req.Object.Raw, &new); err != nil {
		return admission.Errored(http.StatusBadRequest, fmt.Errorf("decode the updated BundleDeployment: %w", err))
	}
	installed, ok := catalog.EntryOf(old.Labels, old.Annotations)
	if !ok {
		return admission.Allowed("the stored BundleDeployment was not installed from a catalog")
	}
	asked, ok := catalog.EntryOf(new.Labels, new.Annotations)
	if !ok {
		return admission.Allowed("the update leaves the catalog")
	}
	if asked.Bundle == installed.Bundle {
		if was, is := old.image(), new.image(); was != is {
			// The image moved without the catalog entry: a hand edit the
			// channel's graph knows nothing of.
			log.FromContext(ctx).Info("refused a catalog BundleDeployment's image moved off its catalog entry", "bundleDeployment", new.Name, "from", was, "to", is, "user", req.UserInfo.Username)
			return admission.Denied(fmt.Sprintf("BundleDeployment %s installs bundle %s of catalog package %s, whose image is %s: its image changes only with a move along the channel. "+
				"Ask for another version through its PackageInstall (kctrl package installed update --version), or take it out of the catalog's hands by removing its label %s.",
				new.Name, installed.Bundle, installed.Package, orNone(was), catalog.LabelPackage))
		}
		return admission.Allowed("the catalog entry and its image are unchanged")
	}
	policy := new.Annotations[catalog.AnnotationUpgradeEdge]
	// The catalog's namespace as stored: an update that removes it is judged
	// as the object was published, not waved through unread.
	ns := new.Annotations[catalog.AnnotationPackagesNS]
	if ns == "" {
		ns = old.Annotations[catalog.AnnotationPackagesNS]
	}
	install := ""
	if name := new.Annotations[catalog.AnnotationInstall]; ns != "" && name != "" {
		install = ns + "/" + name
	}
	nodes, listed, err := h.channel(ctx, asked.RefName, ns)
	if err != nil {
		// The webhook guards the move: one it cannot judge is refused, to
		// be asked again once the channel can be read.
		log.FromContext(ctx).Info("refused a catalog move that could not be judged", "bundleDeployment", new.Name, "installed", installed.Bundle, "asked", asked.Bundle, "error", err.Error())
		return admission.Denied(fmt.Sprintf("BundleDeployment %s asks to move from bundle %s to %s of catalog package %s, but the channel's Packages in namespace %s could not be read to judge the move (%v), so it is refused: "+
			"try again once kapp-controller's packaging API answers (rukpak-kapp check says whether it does).",
			new.Name, installed.Bundle, asked.Bundle, asked.Package, ns, err))
	}
	if listed {
		// A version the catalog retracted is kept only for the installs
		// that have it: nothing moves to it, whatever edge leads there.
		if rev, retracted, err := h.channels.Retracted(ctx, ns, asked.RefName, asked.Bundle); err == nil && retracted {
			log.FromContext(ctx).Info("refused a move to a retracted catalog version", "bundleDeployment", new.Name, "asked", asked.Bundle, "revision", rev)
			return admission.Denied((&catalog.RetractedError{Asked: asked, Revision: rev, Install: install}).Error())
		}
		// The image moves with the entry, to the image the entry's
		// Package names: a hand edit of both is judged as well.
		if want, ok := nodeOf(nodes, asked.Bundle); ok && new.image() != "" && !want.Installs(new.image()) {
			log.FromContext(ctx).Info("refused a catalog BundleDeployment's image that is not its entry's", "bundleDeployment", new.Name, "bundle", asked.Bundle, "image", new.image(), "user", req.UserInfo.Username)
			return admission.Denied(fmt.Sprintf("BundleDeployment %s asks for bundle %s of catalog package %s with image %s, but the catalog's Package of that bundle installs %s: "+
				"ask for another version through its PackageInstall (kctrl package installed update --version), or take it out of the catalog's hands by removing its label %s.",
				new.Name, asked.Bundle, asked.Package, orNone(new.image()), want.Image, catalog.LabelPackage))
		}
	}
	if catalog.CheckUpgrade(installed, asked, policy, []string{}, "") == nil {
		return h.approved(ctx, new, installed, asked, install, "")
	}
	if listed {
		if path := catalog.ShortestPath(installed, asked, nodes); path != nil {
			// The adapter installs the path one step at a time.
			return h.approved(ctx, new, installed, asked, install, "the channel reaches it along "+describe(path))
		}
	}
	var reachable []string
	if listed {
		reachable = catalog.Reachable(installed, entries(nodes))
	}
	err = catalog.CheckUpgrade(installed, asked, policy, reachable, install)
	log.FromContext(ctx).Info("refused a catalog upgrade", "bundleDeployment", new.Name, "installed", installed.Bundle, "asked", asked.Bundle, "user", req.UserInfo.Username)
	return admission.Denied(err.Error())
}

// approved allows a move the channel allows. One that the install holds
// for approval (upgradeApproval: Manual, no approval of the version asked
// for) is allowed too: the reconciler holds it where installs happen (its
// App keeps the version installed, with the update's other fields, and
// the BundleDeployment says Held), so that the update's values land and
// its PackageInstall's reconcile does not fail.
func (h *handler) approved(ctx context.Context, new meta, installed, asked catalog.Entry, install, reason string) admission.Response {
	if err := catalog.Held(installed, true, asked, catalog.ApprovalOf(new.Annotations), "", install, new.Name); err != nil {
		log.FromContext(ctx).Info("admitted a catalog upgrade the adapter holds for approval", "bundleDeployment", new.Name, "installed", installed.Bundle, "asked", asked.Bundle)
		return admission.Allowed("held for approval by the adapter: " + err.Error())
	}
	return admission.Allowed(reason)
}

func orNone(image string) string {
	if image == "" {
		return "none"
	}
	return image
}

// channel lists the versions published for refName in namespace (and
// kapp-controller's global packaging namespace, which its API adds): the
// channel's graph. listed is false when the BundleDeployment names no
// channel or namespace to read; an error, when they could not be read.
func (h *handler) channel(ctx context.Context, refName, namespace string) (nodes []catalog.Node, listed bool, err error) {
	if refName == "" || namespace == "" {
		return nil, false, nil
	}
	ctx, cancel := context.WithTimeout(ctx, listBound)
	defer cancel()
	// A Package whose image cannot be read is still an edge of the graph;
	// a move to it is refused by the image check (nodeOf finds no image).
	nodes, _, err = h.channels.Channel(ctx, namespace, refName)
	if err != nil {
		return nil, false, err
	}
	return nodes, true, nil
}

func entries(nodes []catalog.Node) []catalog.Entry {
	out := make([]catalog.Entry, len(nodes))
	for i, n := range nodes {
		out[i] = n.Entry
	}
	return out
}

// nodeOf is the published version of bundle; ok is false when no Package
// of the channel names it with an image.
func nodeOf(nodes []catalog.Node, bundle string) (catalog.Node, bool) {
	for _, n := range nodes {
		if n.Entry.Bundle == bundle && n.Image != "" {
			return n, true
		}
	}
	return catalog.Node{}, false
}

func describe(path []catalog.Node) string {
	vs := make([]string, len(path))
	for i, n := range path {
		vs[i] = n.Entry.Version
	}
	return catalog.Describe(vs)
}
