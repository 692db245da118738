package takeover

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
)

// The finalizers rukpak v0.24.0 puts on every BundleDeployment. Only the
// rukpak process that owns the class removes them, and both clean rukpak's
// own cache; left on a BundleDeployment rukpak no longer handles, they
// would hold its deletion forever.
var RukpakFinalizers = []string{"core.rukpak.io/delete-cached-bundle", "core.rukpak.io/cleanup-unpack-cache"}

// StripRukpakFinalizers removes rukpak's finalizers from o (a
// BundleDeployment, or a Bundle rukpak v0.16 made, which carries the same
// two) and says whether there were any.
func StripRukpakFinalizers(o metav1.Object) bool {
	before := o.GetFinalizers()
	kept := slices.DeleteFunc(slices.Clone(before), func(f string) bool { return slices.Contains(RukpakFinalizers, f) })
	if len(kept) == len(before) {
		return false
	}
	o.SetFinalizers(kept)
	return true
}

// Metadata kapp writes on every object it manages; the values are kapp's.
var (
	KappLabels = []string{"kapp.k14s.io/app", "kapp.k14s.io/association"}
	// KappAnnotations kapp always writes. It usually also records the
	// applied object in kapp.k14s.io/original and original-diff-md5, but
	// not always (seen missing on a ConfigMap), so they are not predicted.
	KappAnnotations = []string{"kapp.k14s.io/identity"}
	// AsBundledAnnotations are the annotations an as-bundled App adds.
	AsBundledAnnotations = []string{"kapp.k14s.io/disable-default-label-scoping-rules", "kapp.k14s.io/disable-default-ownership-label-rules"}
)

// KappValue stands for a value kapp chooses when it applies.
const KappValue = "(set by kapp)"

// Input is what the take-over of one BundleDeployment is decided from.
type Input struct {
	BD *rukpakv1alpha2.BundleDeployment
	// Releases are bd's release Secrets (ReleaseSecrets), oldest first.
	Releases []corev1.Secret
	// Release is the newest of them, decoded; nil with ReleaseErr set when
	// it could not be read.
	Release    *Release
	ReleaseErr error
	// Installed are the objects of Release's manifest, placed (Place). The
	// take-over applies exactly these: what rukpak rendered and installed.
	Installed []*unstructured.Unstructured
	// ChartCRDs are the CustomResourceDefinitions of the chart's crds/
	// directory (ReleaseCRDs). Helm installs them apart from the release,
	// without its metadata or owner reference; the take-over applies them
	// too, so kapp owns them as it owns the CRDs of every helm install.
	ChartCRDs []*unstructured.Unstructured
	// Live holds each installed object as the cluster has it; a missing
	// entry means the object is gone. Nil when the objects were not read
	// (the adapter cannot read every kind): then they are assumed as rukpak
	// left them, and kapp itself refuses another app's objects.
	Live map[Ref]*unstructured.Unstructured
	// Rendered is what rukpak-kapp renders from bd's spec now (placed),
	// for the plain and registry+v1 classes; nil when it was not rendered.
	Rendered []*unstructured.Unstructured
	// SourceDifferences lists how the helm chart and values bd names now
	// differ from the release's (ChartDifferences); helm class only.
	SourceDifferences []string
	// RenderErr says the bundle bd names now could not be fetched or
	// rendered, so whether it is what rukpak installed is unknown.
	RenderErr error
	// Resolved is bd's source pinned to what was fetched now (image
	// digest, git commit), compared with the status.resolvedSource rukpak
	// wrote when it installed.
	Resolved *rukpakv1alpha2.BundleSource
}

// Plan is what the take-over of one BundleDeployment does.
type Plan struct {
	BundleDeployment string `json:"bundleDeployment"`
	Class            string `json:"class"`
	// Release names the Helm release revision taken over.
	Release  string         `json:"release,omitempty"`
	Objects  []ObjectChange `json:"objects,omitempty"`
	Blockers []Blocker      `json:"blockers,omitempty"`
	Cleanup  Cleanup        `json:"cleanup"`
	// Later lists what rukpak-kapp's own rendering will change at the
	// BundleDeployment's next spec change: reported now, not applied now.
	Later []string `json:"later,omitempty"`
}

// Blocked says whether the take-over must not start.
func (p Plan) Blocked() bool { return len(p.Blockers) > 0 }

// ObjectChange is what the take-over changes on one object. Spec and data
// never change: kapp applies what rukpak rendered.
type ObjectChange struct {
	Ref Ref `json:"ref"`
	// Action is "adopt" (updated in place, UID kept), "create" (the
	// object rukpak installed is gone and is created again) or "keep" (a
	// CRD of the chart's crds/, left as it is: kapp never owns it).
	Action          string    `json:"action"`
	Labels          MapChange `json:"labels,omitempty"`
	Annotations     MapChange `json:"annotations,omitempty"`
	OwnerReferences MapChange `json:"ownerReferences,omitempty"`
}

// MapChange lists keys removed, added and changed (to their new value).
type MapChange struct {
	Removed map[string]string `json:"removed,omitempty"`
	Added   map[string]string `json:"added,omitempty"`
	Changed map[string]string `json:"changed,omitempty"`
}

// Empty says whether nothing changes.
func (m MapChange) Empty() bool { return len(m.Removed)+len(m.Added)+len(m.Changed) == 0 }

// Cleanup is what is removed once kapp manages everything, and what stays.
type Cleanup struct {
	// ReleaseSecrets are deleted: before the App is created (so a rukpak
	// still running cannot re-apply its release over kapp's changes) and
	// again once the App deployed.
	ReleaseSecrets []string `json:"releaseSecrets,omitempty"`
	// Finalizers are rukpak's, removed from the BundleDeployment.
	Finalizers []string `json:"finalizers,omitempty"`
	// Kept explains what stays as it is.
	Kept []string `json:"kept,omitempty"`
}

// Blocker is one reason the take-over must not start.
type Blocker struct {
	Ref     *Ref   `json:"ref,omitempty"`
	Reason  string `json:"reason"`
	Message string `json:"message"`
}

// Blocker reasons.
const (
	BlockNoRelease      = "NoRelease"
	BlockReleaseFailed  = "ReleaseNotDeployed"
	BlockSourceChanged  = "SourceChanged"
	BlockOtherOwner     = "OwnedElsewhere"
	BlockUnreadable     = "ReleaseUnreadable"
	BlockNotInstalledBy = "NotInstalledByRukpak"
	BlockSourceUnknown  = "SourceUnreadable"
	// BlockChartCRDMissing: a CRD of the chart's crds/ is gone.
	BlockChartCRDMissing = "ChartCRDMissing"
)

// Take computes the take-over of in.BD.
func Take(in Input) Plan {
	bd := in.BD
	p := Plan{BundleDeployment: bd.Name, Class: bd.Spec.ProvisionerClassName}
	for _, f := range RukpakFinalizers {
		if slices.Contains(bd.Finalizers, f) {
			p.Cleanup.Finalizers = append(p.Cleanup.Finalizers, f)
		}
	}
	for _, s := range in.Releases {
		p.Cleanup.ReleaseSecrets = append(p.Cleanup.ReleaseSecrets, s.Name)
	}
	switch {
	case in.ReleaseErr != nil:
		p.block(nil, BlockUnreadable, fmt.Sprintf("rukpak's release cannot be read: %v", in.ReleaseErr))
		return p
	case in.Release == nil:
		p.block(nil, BlockNoRelease, "rukpak has no Helm release for this BundleDeployment (it never installed it, or its release Secrets are gone); there is nothing to take over in place")
		return p
	}
	rel := in.Release
	p.Release = fmt.Sprintf("%s (revision %d, %s)", rel.Secret, rel.Version, rel.Status)
	if rel.Status != StatusDeployed {
		p.block(nil, BlockReleaseFailed, fmt.Sprintf("rukpak's last release %s is %q, not deployed: rukpak did not finish installing; let it finish (or fix the BundleDeployment) before the take-over", rel.Secret, rel.Status))
	}

	chartCRD := map[Ref]bool{}
	for _, obj := range in.ChartCRDs {
		chartCRD[RefOf(obj)] = true
	}
	for _, obj := range append(append([]*unstructured.Unstructured{}, in.Installed...), in.ChartCRDs...) {
		ref := RefOf(obj)
		live, ok := in.Live[ref]
		if in.Live == nil {
			live, ok = AsRukpakLeftIt(bd, obj), true
			if chartCRD[ref] {
				live = obj
			}
		}
		switch {
		case chartCRD[ref] && !ok:
			r := ref
			p.block(&r, BlockChartCRDMissing, fmt.Sprintf("%s, a CRD of the chart's crds/, is gone: rukpak-kapp leaves a chart's CRDs as Helm does and does not create it for the release it takes over; "+
				"apply it from the chart's crds/ again (its custom resources are gone with it) before the take-over", ref))
			continue
		case chartCRD[ref]:
			// Helm installed it bare, shares it with every release of the
			// chart and never deletes it: the take-over leaves it so.
			p.Objects = append(p.Objects, ObjectChange{Ref: ref, Action: "keep"})
			continue
		case !ok:
			p.Objects = append(p.Objects, ObjectChange{Ref: ref, Action: "create"})
			continue
		}
		if app := live.GetLabels()[KappLabels[0]]; app != "" {
			r := ref
			p.block(&r, BlockOtherOwner, fmt.Sprintf("%s is already managed by the kapp app with label %s=%s; kapp refuses to take an object from another app", ref, KappLabels[0], app))
		}
		if !ownedBy(live.GetOwnerReferences(), bd) && live.GetAnnotations()[annotationHelmReleaseName] != bd.Name {
			r := ref
			p.block(&r, BlockNotInstalledBy, fmt.Sprintf("%s exists but is neither owned by BundleDeployment %s nor part of its Helm release; it is someone else's object", ref, bd.Name))
		}
		p.Objects = append(p.Objects, adopt(bd, obj, live))
	}
	p.checkSource(in)
	p.later(in)
	p.Cleanup.Kept = append(p.Cleanup.Kept,
		"every object of rukpak's release, as rukpak rendered it (RBAC that rukpak named differently included): kapp owns it from now on and replaces it with rukpak-kapp's own rendering at the BundleDeployment's next spec change, so nothing stays without an owner",
		"custom resources of the installed CRDs: they are not part of the release and are not touched")
	if len(in.ChartCRDs) > 0 {
		p.Cleanup.Kept = append(p.Cleanup.Kept,
			"the CRDs of the chart's crds/: as Helm keeps them, shared by every BundleDeployment of the chart and never deleted with one (docs/crd-safety.md)")
	}
	sort.Slice(p.Blockers, func(i, j int) bool { return p.Blockers[i].Message < p.Blockers[j].Message })
	return p
}

func (p *Plan) block(ref *Ref, reason, msg string) {
	p.Blockers = append(p.Blockers, Blocker{Ref: ref, Reason: reason, Message: msg})
}

const (
	labelHelmManagedBy          = "app.kubernetes.io/managed-by"
	annotationHelmReleaseName   = "meta.helm.sh/release-name"
	annotationHelmReleaseNS     = "meta.helm.sh/release-namespace"
	annotationDeploymentRevison = "deployment.kubernetes.io/revision"
	labelNamespaceName          = "kubernetes.io/metadata.name"
)

// adopt predicts what kapp leaves on live when it applies installed with
// an as-bundled App: labels and annotations become the applied object's
// plus kapp's own (kapp replaces both maps, keeping only what its rebase
// rules keep), and the BundleDeployment owner reference goes.
func adopt(bd *rukpakv1alpha2.BundleDeployment, installed, live *unstructured.Unstructured) ObjectChange {
	labels := copyMap(installed.GetLabels())
	labels[rukpakv1alpha2.LabelOwnerKind] = rukpakv1alpha2.OwnerKind
	labels[rukpakv1alpha2.LabelOwnerName] = bd.Name
	for _, k := range KappLabels {
		labels[k] = KappValue
	}
	if live.GroupVersionKind().GroupKind().String() == "Namespace" {
		// The API server sets it on every Namespace, whatever is applied
		// (rukpak v0.16's registry+v1 releases hold one).
		if v, ok := live.GetLabels()[labelNamespaceName]; ok {
			labels[labelNamespaceName] = v
		}
	}
	annotations := copyMap(installed.GetAnnotations())
	for _, k := range AsBundledAnnotations {
		annotations[k] = ""
	}
	for _, k := range KappAnnotations {
		annotations[k] = KappValue
	}
	for _, k := range keptByKapp(live) {
		if v, ok := live.GetAnnotations()[k]; ok {
			annotations[k] = v
		}
	}
	before, after := refsMap(live.GetOwnerReferences()), map[string]string{}
	for _, r := range live.GetOwnerReferences() {
		if !isBundleDeploymentRef(r) {
			after[refKey(r)] = before[refKey(r)]
		}
	}
	return ObjectChange{
		Ref:             RefOf(live),
		Action:          "adopt",
		Labels:          diffMaps(live.GetLabels(), labels),
		Annotations:     diffMaps(live.GetAnnotations(), annotations),
		OwnerReferences: diffMaps(before, after),
	}
}

// AsRukpakLeftIt is an installed object as rukpak's Helm applied it: the
// release's rendering with Helm's ownership metadata.
func AsRukpakLeftIt(bd *rukpakv1alpha2.BundleDeployment, installed *unstructured.Unstructured) *unstructured.Unstructured {
	u := installed.DeepCopy()
	labels := u.GetLabels()
	if labels == nil {
		labels = map[string]string{}
	}
	labels[labelHelmManagedBy] = "Helm"
	u.SetLabels(labels)
	annotations := u.GetAnnotations()
	if annotations == nil {
		annotations = map[string]string{}
	}
	annotations[annotationHelmReleaseName] = bd.Name
	annotations[annotationHelmReleaseNS] = bd.Spec.InstallNamespace
	u.SetAnnotations(annotations)
	return u
}

// keptByKapp are annotations kapp's default rebase rules keep from the
// cluster although the applied object lacks them.
func keptByKapp(live *unstructured.Unstructured) []string {
	switch live.GroupVersionKind().GroupKind().String() {
	case "Deployment.apps":
		return []string{annotationDeploymentRevison}
	case "PersistentVolumeClaim":
		return []string{"pv.kubernetes.io/bind-completed", "pv.kubernetes.io/bound-by-controller", "pv.kubernetes.io/migrated-to", "volume.beta.kubernetes.io/storage-provisioner"}
	case "Namespace":
		return []string{"openshift.io/sa.scc.mcs", "openshift.io/sa.scc.supplemental-groups", "openshift.io/sa.scc.uid-range"}
	}
	return nil
}

func refsMap(refs []metav1.OwnerReference) map[string]string {
	out := map[string]string{}
	for _, r := range refs {
		v := "uid " + string(r.UID)
		if r.Controller != nil && *r.Controller {
			v += ", controller"
		}
		out[refKey(r)] = v
	}
	return out
}

func refKey(r metav1.OwnerReference) string { return r.Kind + "." + r.APIVersion + "/" + r.Name }

func diffMaps(before, after map[string]string) MapChange {
	var c MapChange
	for k, v := range before {
		nv, ok := after[k]
		switch {
		case !ok:
			c.Removed = put(c.Removed, k, v)
		case nv != v:
			c.Changed = put(c.Changed, k, nv)
		}
	}
	for k, v := range after {
		if _, ok := before[k]; !ok {
			c.Added = put(c.Added, k, v)
		}
	}
	return c
}

func put(m map[string]string, k, v string) map[string]string {
	if m == nil {
		m = map[string]string{}
	}
	m[k] = v
	return m
}

func copyMap(m map[string]string) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// checkSource blocks when bd's spec now names other content than rukpak
// installed: the take-over applies rukpak's release as it is, so a changed
// source would silently wait for the next change. Change one at a time.
func (p *Plan) checkSource(in Input) {
	if in.RenderErr != nil {
		p.block(nil, BlockSourceUnknown, fmt.Sprintf("cannot tell whether the bundle is still what rukpak installed: %v", in.RenderErr))
	}
	if was, now := pinned(in.BD.Status.ResolvedSource), pinned(in.Resolved); was != "" && now != "" && was != now {
		p.block(nil, BlockSourceChanged, fmt.Sprintf("the source now resolves to %s, rukpak installed %s: point spec.source at what rukpak installed for the take-over, then change it", now, was))
	}
	for _, d := range in.SourceDifferences {
		p.block(nil, BlockSourceChanged, "the chart or values differ from rukpak's release: "+d+"; take over with what rukpak installed, then change the BundleDeployment")
	}
	if in.Rendered == nil || p.Class == rukpakv1alpha2.ClassRegistry {
		return
	}
	installed := byRef(in.Installed)
	rendered := byRef(in.Rendered)
	var diffs []string
	for _, ref := range sortedRefs(rendered) {
		i, ok := installed[ref]
		switch {
		case !ok:
			diffs = append(diffs, ref.String()+" is new")
		case !sameContent(i, rendered[ref]):
			diffs = append(diffs, ref.String()+" differs")
		}
	}
	for _, ref := range sortedRefs(installed) {
		if _, ok := rendered[ref]; !ok {
			diffs = append(diffs, ref.String()+" is no longer in the bundle")
		}
	}
	if len(diffs) > 0 {
		msg := "the bundle the BundleDeployment names now differs from what rukpak installed (" + strings.Join(diffs, "; ") + ")"
		if src := in.BD.Status.ResolvedSource; src != nil && src.Image != nil {
			msg += fmt.Sprintf("; rukpak installed %s: point spec.source at it for the take-over, then change it", src.Image.Ref)
		} else {
			msg += "; take over with the content rukpak installed, then change it"
		}
		p.block(nil, BlockSourceChanged, msg)
	}
}

// pinned is the image digest reference or git commit a resolved source
// names, "" when it pins nothing comparable.
func pinned(src *rukpakv1alpha2.BundleSource) string {
	switch {
	case src == nil:
		return ""
	case src.Image != nil && strings.Contains(src.Image.Ref, "@sha256:"):
		return src.Image.Ref
	case src.Git != nil && src.Git.Ref.Commit != "":
		return src.Git.Repository + "@" + src.Git.Ref.Commit
	}
	return ""
}

func byRef(objs []*unstructured.Unstructured) map[Ref]*unstructured.Unstructured {
	out := map[Ref]*unstructured.Unstructured{}
	for _, o := range objs {
		out[RefOf(o)] = o
	}
	return out
}

// sameContent compares two renderings of an object, ignoring what rukpak's
// post-renderers added (owner labels and references).
func sameContent(a, b *unstructured.Unstructured) bool {
	return apiequality.Semantic.DeepEqual(withoutOwnerMetadata(a).Object, withoutOwnerMetadata(b).Object)
}

func withoutOwnerMetadata(u *unstructured.Unstructured) *unstructured.Unstructured {
	u = u.DeepCopy()
	u.SetOwnerReferences(nil)
	labels := u.GetLabels()
	delete(labels, rukpakv1alpha2.LabelOwnerKind)
	delete(labels, rukpakv1alpha2.LabelOwnerName)
	if len(labels) == 0 {
		labels = nil
	}
	u.SetLabels(labels)
	return u
}
