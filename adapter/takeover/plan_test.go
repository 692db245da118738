package takeover

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
)

// rendered is an object as rukpak's Helm release records it: the bundle's
// object plus rukpak's owner labels and owner reference.
func rendered(t *testing.T, yaml string) *unstructured.Unstructured {
	t.Helper()
	objs, err := ParseManifest([]byte(yaml))
	if err != nil || len(objs) != 1 {
		t.Fatalf("parse %q: %v", yaml, err)
	}
	return objs[0]
}

func asRukpakRendered(u *unstructured.Unstructured) *unstructured.Unstructured {
	u = u.DeepCopy()
	labels := u.GetLabels()
	if labels == nil {
		labels = map[string]string{}
	}
	labels[rukpakv1alpha2.LabelOwnerKind] = "BundleDeployment"
	labels[rukpakv1alpha2.LabelOwnerName] = "bd"
	u.SetLabels(labels)
	u.SetOwnerReferences(controllerRef("bd-uid"))
	return u
}

// asLive is how the cluster holds a rukpak-installed object: Helm's
// ownership metadata on top, and whatever else is given.
func asLive(u *unstructured.Unstructured, mutate ...func(*unstructured.Unstructured)) *unstructured.Unstructured {
	u = u.DeepCopy()
	labels := u.GetLabels()
	labels["app.kubernetes.io/managed-by"] = "Helm"
	u.SetLabels(labels)
	annotations := u.GetAnnotations()
	if annotations == nil {
		annotations = map[string]string{}
	}
	annotations["meta.helm.sh/release-name"] = "bd"
	annotations["meta.helm.sh/release-namespace"] = "apps"
	u.SetAnnotations(annotations)
	u.SetUID("obj-uid")
	for _, m := range mutate {
		m(u)
	}
	return u
}

const (
	cmYAML  = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\n  namespace: apps\n  annotations: {note: kept}\ndata: {a: b}\n"
	depYAML = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n  namespace: apps\n  labels: {app: web}\nspec:\n  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}}\n    spec: {containers: [{name: c, image: web:v1}]}\n"
)

func TestTake(t *testing.T) {
	t.Parallel()
	cm := rendered(t, cmYAML)
	dep := rendered(t, depYAML)
	installed := []*unstructured.Unstructured{asRukpakRendered(cm), asRukpakRendered(dep)}
	secrets := []corev1.Secret{{ObjectMeta: metav1.ObjectMeta{Name: "sh.helm.release.v1.bd.v1"}}, {ObjectMeta: metav1.ObjectMeta{Name: "sh.helm.release.v1.bd.v2"}}}
	deployed := &Release{Secret: "sh.helm.release.v1.bd.v2", Name: "bd", Version: 2, Status: StatusDeployed}
	liveOf := func(mutate ...func(*unstructured.Unstructured)) map[Ref]*unstructured.Unstructured {
		out := map[Ref]*unstructured.Unstructured{}
		for _, o := range installed {
			out[RefOf(o)] = asLive(o, mutate...)
		}
		return out
	}
	cmRef, depRef := RefOf(cm), RefOf(dep)

	wantAdopt := func(ref Ref, extraAnnotations map[string]string) ObjectChange {
		added := map[string]string{
			"kapp.k14s.io/disable-default-label-scoping-rules": "", "kapp.k14s.io/disable-default-ownership-label-rules": "",
			"kapp.k14s.io/identity": KappValue,
		}
		return ObjectChange{
			Ref: ref, Action: "adopt",
			Labels:          MapChange{Removed: map[string]string{"app.kubernetes.io/managed-by": "Helm"}, Added: map[string]string{"kapp.k14s.io/app": KappValue, "kapp.k14s.io/association": KappValue}},
			Annotations:     MapChange{Removed: map[string]string{"meta.helm.sh/release-name": "bd", "meta.helm.sh/release-namespace": "apps"}, Added: added},
			OwnerReferences: MapChange{Removed: map[string]string{"BundleDeployment.core.rukpak.io/v1alpha2/bd": "uid bd-uid, controller"}},
		}
	}

	tests := []struct {
		name          string
		in            func(in *Input)
		wantBlockers  []string
		wantObjects   []ObjectChange
		wantLater     []string
		checkMessages []string
	}{
		{
			name:        "rukpak's objects are adopted in place: Helm's metadata and the owner reference go, kapp's come",
			wantObjects: []ObjectChange{wantAdopt(cmRef, nil), wantAdopt(depRef, nil)},
		},
		{
			name: "kapp keeps the Deployment revision and foreign owner references",
			in: func(in *Input) {
				in.Live = liveOf(func(u *unstructured.Unstructured) {
					if u.GetKind() == "Deployment" {
						a := u.GetAnnotations()
						a["deployment.kubernetes.io/revision"] = "1"
						u.SetAnnotations(a)
					}
					u.SetOwnerReferences(append(u.GetOwnerReferences(), metav1.OwnerReference{APIVersion: "v1", Kind: "ConfigMap", Name: "other", UID: "o"}))
				})
			},
			wantObjects: []ObjectChange{wantAdopt(cmRef, nil), wantAdopt(depRef, nil)},
		},
		{
			name:        "objects not read (the adapter's view) are taken as rukpak's Helm left them",
			in:          func(in *Input) { in.Live = nil },
			wantObjects: []ObjectChange{wantAdopt(cmRef, nil), wantAdopt(depRef, nil)},
		},
		{
			name:          "a bundle that cannot be fetched blocks: it may no longer be what rukpak installed",
			in:            func(in *Input) { in.RenderErr = errors.New("fetch the bundle: 401") },
			wantBlockers:  []string{BlockSourceUnknown},
			checkMessages: []string{"fetch the bundle: 401"},
		},
		{
			name: "a chart's crds/ CRD that Helm installed bare is kept as it is, not adopted, not blocked as someone else's",
			in: func(in *Input) {
				crd := rendered(t, "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: greetings.hello.test}\n")
				in.ChartCRDs = []*unstructured.Unstructured{crd}
				in.Live[RefOf(crd)] = crd
			},
			wantObjects: []ObjectChange{wantAdopt(cmRef, nil), wantAdopt(depRef, nil), {
				Ref: Ref{Group: "apiextensions.k8s.io", Kind: "CustomResourceDefinition", Name: "greetings.hello.test"}, Action: "keep",
			}},
		},
		{
			name: "a chart's crds/ CRD that is gone blocks: the release's custom resources need it",
			in: func(in *Input) {
				in.ChartCRDs = []*unstructured.Unstructured{rendered(t, "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: greetings.hello.test}\n")}
			},
			wantBlockers:  []string{BlockChartCRDMissing},
			checkMessages: []string{"apply it from the chart's crds/ again"},
		},
		{
			name: "an object rukpak installed that is gone is created again",
			in: func(in *Input) {
				delete(in.Live, cmRef)
			},
			wantObjects: []ObjectChange{{Ref: cmRef, Action: "create"}, wantAdopt(depRef, nil)},
		},
		{
			name:         "no release: nothing to take over",
			in:           func(in *Input) { in.Release, in.Installed, in.Releases = nil, nil, nil },
			wantBlockers: []string{BlockNoRelease},
		},
		{
			name:         "an unreadable release blocks",
			in:           func(in *Input) { in.Release, in.ReleaseErr = nil, errors.New("bad gzip") },
			wantBlockers: []string{BlockUnreadable},
		},
		{
			name: "a release rukpak did not finish blocks",
			in: func(in *Input) {
				r := *deployed
				r.Status = "failed"
				in.Release = &r
			},
			wantBlockers: []string{BlockReleaseFailed},
			wantObjects:  []ObjectChange{wantAdopt(cmRef, nil), wantAdopt(depRef, nil)},
		},
		{
			name: "an object another kapp app manages blocks",
			in: func(in *Input) {
				in.Live[cmRef].SetLabels(map[string]string{"kapp.k14s.io/app": "123"})
			},
			wantBlockers: []string{BlockOtherOwner},
		},
		{
			name: "an object of the same name that rukpak did not install blocks",
			in: func(in *Input) {
				in.Live[cmRef].SetOwnerReferences(nil)
				in.Live[cmRef].SetAnnotations(nil)
			},
			wantBlockers: []string{BlockNotInstalledBy},
		},
		{
			name: "a plain bundle that changed since rukpak installed it blocks, naming what rukpak installed",
			in: func(in *Input) {
				in.BD.Status.ResolvedSource = &rukpakv1alpha2.BundleSource{Type: "image", Image: &rukpakv1alpha2.ImageSource{Ref: "reg/b@sha256:1"}}
				changed := dep.DeepCopy()
				_ = unstructured.SetNestedField(changed.Object, "web:v2", "spec", "template", "spec", "containers", "0", "image")
				containers, _, _ := unstructured.NestedSlice(changed.Object, "spec", "template", "spec", "containers")
				containers[0].(map[string]any)["image"] = "web:v2"
				_ = unstructured.SetNestedSlice(changed.Object, containers, "spec", "template", "spec", "containers")
				in.Rendered = []*unstructured.Unstructured{cm, changed, rendered(t, "apiVersion: v1\nkind: Secret\nmetadata: {name: new, namespace: apps}\n")}
			},
			wantBlockers:  []string{BlockSourceChanged},
			checkMessages: []string{"Deployment.apps apps/web differs", "Secret apps/new is new", "reg/b@sha256:1"},
		},
		{
			name: "a tag that moved since rukpak installed it blocks, whatever the class",
			in: func(in *Input) {
				in.BD.Spec.ProvisionerClassName = rukpakv1alpha2.ClassRegistry
				in.BD.Status.ResolvedSource = &rukpakv1alpha2.BundleSource{Type: "image", Image: &rukpakv1alpha2.ImageSource{Ref: "reg/b@sha256:1"}}
				in.Resolved = &rukpakv1alpha2.BundleSource{Type: "image", Image: &rukpakv1alpha2.ImageSource{Ref: "reg/b@sha256:2"}}
			},
			wantBlockers:  []string{BlockSourceChanged},
			checkMessages: []string{"resolves to reg/b@sha256:2, rukpak installed reg/b@sha256:1"},
		},
		{
			name: "the same digest rukpak installed does not block",
			in: func(in *Input) {
				in.BD.Status.ResolvedSource = &rukpakv1alpha2.BundleSource{Type: "image", Image: &rukpakv1alpha2.ImageSource{Ref: "reg/b@sha256:1"}}
				in.Resolved = &rukpakv1alpha2.BundleSource{Type: "image", Image: &rukpakv1alpha2.ImageSource{Ref: "reg/b@sha256:1"}}
			},
		},
		{
			name: "a plain bundle rendered as rukpak did (owner metadata aside) does not block",
			in:   func(in *Input) { in.Rendered = []*unstructured.Unstructured{cm, dep} },
		},
		{
			name: "registry+v1: rukpak-kapp's own conversion is reported for later, not applied and not blocking",
			in: func(in *Input) {
				in.BD.Spec.ProvisionerClassName = rukpakv1alpha2.ClassRegistry
				ours := dep.DeepCopy()
				_ = unstructured.SetNestedStringMap(ours.Object, map[string]string{"olm.targetNamespaces": ""}, "spec", "template", "metadata", "annotations")
				in.Rendered = []*unstructured.Unstructured{ours, rendered(t, "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata: {name: ours}\n")}
			},
			wantLater: []string{
				"ConfigMap apps/settings (rukpak's rendering only) will be deleted by kapp",
				"ClusterRole.rbac.authorization.k8s.io ours (rukpak-kapp's rendering) will be created",
				"Deployment.apps apps/web will change at .spec.template.metadata.annotations: its pod template changes, so it rolls out",
			},
		},
		{
			name: "helm: other chart or values than released block",
			in: func(in *Input) {
				in.BD.Spec.ProvisionerClassName = rukpakv1alpha2.ClassHelm
				in.SourceDifferences = []string{"spec.config.values differ from the released values"}
			},
			wantBlockers: []string{BlockSourceChanged},
		},
		{
			name: "helm: templates rukpak-kapp cannot reproduce and hooks are reported for later",
			in: func(in *Input) {
				in.BD.Spec.ProvisionerClassName = rukpakv1alpha2.ClassHelm
				r := *deployed
				r.Hooks = []string{"Job/migrate"}
				r.Chart = Chart{Templates: map[string][]byte{"templates/secret.yaml": []byte(`pw: {{ randAlphaNum 10 }} {{ .Capabilities.KubeVersion }}`), "templates/cm.yaml": []byte(`{{ .Values.x }}`)}}
				in.Release = &r
			},
			wantLater: []string{
				"chart template templates/secret.yaml uses .Capabilities, randAlphaNum: helm template without a cluster renders it differently from rukpak's install, so the objects it makes may change at the next change of the BundleDeployment",
				"Helm ran hook Job/migrate at install; kapp-controller's helm template applies hooks as ordinary objects",
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			in := Input{BD: testBD(rukpakv1alpha2.ClassPlain), Releases: secrets, Release: deployed, Installed: installed, Live: liveOf()}
			if tt.in != nil {
				tt.in(&in)
			}
			p := Take(in)
			var reasons []string
			for _, b := range p.Blockers {
				reasons = append(reasons, b.Reason)
			}
			if !cmp.Equal(reasons, tt.wantBlockers) {
				t.Errorf("blockers = %+v, want reasons %q", p.Blockers, tt.wantBlockers)
			}
			if p.Blocked() != (len(tt.wantBlockers) > 0) {
				t.Errorf("Blocked() = %v", p.Blocked())
			}
			if tt.wantObjects != nil {
				if diff := cmp.Diff(tt.wantObjects, p.Objects); diff != "" {
					t.Errorf("objects (-want +got):\n%s", diff)
				}
			}
			if diff := cmp.Diff(tt.wantLater, p.Later); diff != "" {
				t.Errorf("later (-want +got):\n%s", diff)
			}
			all := ""
			for _, b := range p.Blockers {
				all += b.Message + "\n"
			}
			for _, m := range tt.checkMessages {
				if !strings.Contains(all, m) {
					t.Errorf("blocker messages lack %q:\n%s", m, all)
				}
			}
			if in.Release != nil && in.ReleaseErr == nil {
				if want := []string{"sh.helm.release.v1.bd.v1", "sh.helm.release.v1.bd.v2"}; !cmp.Equal(p.Cleanup.ReleaseSecrets, want) {
					t.Errorf("release secrets to delete = %q, want %q", p.Cleanup.ReleaseSecrets, want)
				}
				if want := []string{"core.rukpak.io/delete-cached-bundle", "core.rukpak.io/cleanup-unpack-cache"}; !cmp.Equal(p.Cleanup.Finalizers, want) {
					t.Errorf("finalizers to remove = %q, want rukpak's only", p.Cleanup.Finalizers)
				}
			}
		})
	}
}

func TestChartDifferences(t *testing.T) {
	t.Parallel()
	rel := &Release{Values: map[string]any{"replicaCount": float64(2)}, Chart: Chart{Name: "hello", Version: "0.1.0", Templates: map[string][]byte{
		"templates/a.yaml": []byte("a"), "charts/sub/templates/s.yaml": []byte("s"),
	}}}
	chart := map[string][]byte{"Chart.yaml": []byte("name: hello\nversion: 0.1.0\n"), "templates/a.yaml": []byte("a"), "values.yaml": []byte("x: 1")}
	tests := []struct {
		name   string
		chart  map[string][]byte
		values map[string]any
		want   []string
	}{
		{"the released chart and values", chart, map[string]any{"replicaCount": 2}, nil},
		{"other values", chart, map[string]any{"replicaCount": 3}, []string{"spec.config.values differ from the released values"}},
		{"a changed template and a new one", map[string][]byte{"Chart.yaml": chart["Chart.yaml"], "templates/a.yaml": []byte("b"), "templates/new.yaml": nil}, map[string]any{"replicaCount": 2},
			[]string{"template templates/a.yaml differs", "template templates/new.yaml is new"}},
		{"another version", map[string][]byte{"Chart.yaml": []byte("name: hello\nversion: 0.2.0\n"), "templates/a.yaml": []byte("a")}, map[string]any{"replicaCount": 2},
			[]string{"chart hello 0.2.0 is not the released hello 0.1.0"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := ChartDifferences(rel, tt.chart, tt.values); !cmp.Equal(got, tt.want) {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
	if got := ChartDifferences(&Release{Chart: rel.Chart}, chart, nil); len(got) != 0 {
		t.Errorf("no values on either side: %q", got)
	}
}

func TestPlace(t *testing.T) {
	t.Parallel()
	objs, err := ParseManifest([]byte(`---
apiVersion: v1
kind: ConfigMap
metadata: {name: a}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: r, namespace: stray}
---
apiVersion: v1
kind: List
items:
- {apiVersion: example.com/v1, kind: Widget, metadata: {name: w}}
- {apiVersion: apiextensions.k8s.io/v1, kind: CustomResourceDefinition, metadata: {name: widgets.example.com}, spec: {group: example.com, scope: Namespaced, names: {kind: Widget}}}
`))
	if err != nil {
		t.Fatal(err)
	}
	scope := func(gk schema.GroupKind) (bool, bool) {
		switch gk.Kind {
		case "ConfigMap":
			return true, true
		case "ClusterRole", "CustomResourceDefinition":
			return false, true
		}
		return false, false
	}
	placed, err := Place(objs, "apps", scope)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, o := range placed {
		got = append(got, RefOf(o).String())
	}
	want := []string{"ConfigMap apps/a", "ClusterRole.rbac.authorization.k8s.io r", "Widget.example.com apps/w", "CustomResourceDefinition.apiextensions.k8s.io widgets.example.com"}
	if !cmp.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
	if objs[0].GetNamespace() != "" {
		t.Error("Place modified its input")
	}
	if _, err := Place([]*unstructured.Unstructured{rendered(t, "apiVersion: x/v1\nkind: Gadget\nmetadata: {name: g}\n")}, "apps", scope); err == nil || !strings.Contains(err.Error(), "Gadget.x g") {
		t.Errorf("unknown kind: err = %v", err)
	}
}

func TestFiles(t *testing.T) {
	t.Parallel()
	dep := asRukpakRendered(rendered(t, depYAML))
	dep.SetOwnerReferences(append(dep.GetOwnerReferences(), metav1.OwnerReference{APIVersion: "v1", Kind: "ConfigMap", Name: "keep", UID: "k"}))
	files, err := Files([]*unstructured.Unstructured{dep})
	if err != nil {
		t.Fatal(err)
	}
	back, err := ParseManifest(files["manifests/0000.yaml"])
	if err != nil || len(files) != 1 || len(back) != 1 {
		t.Fatalf("files %v: %v", files, err)
	}
	if refs := back[0].GetOwnerReferences(); len(refs) != 1 || refs[0].Name != "keep" {
		t.Errorf("owner references = %+v, want only the foreign one", refs)
	}
	want := dep.DeepCopy()
	want.SetOwnerReferences(back[0].GetOwnerReferences())
	if diff := cmp.Diff(want.Object, back[0].Object); diff != "" {
		t.Errorf("content changed (-want +got):\n%s", diff)
	}
	if dep.GetOwnerReferences()[0].Kind != "BundleDeployment" {
		t.Error("Files modified its input")
	}
}

func TestReleaseCRDs(t *testing.T) {
	t.Parallel()
	rel := &Release{Chart: Chart{Files: map[string][]byte{
		"crds/b.yaml":  []byte("apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: b}\n"),
		"crds/a.json":  []byte(`{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","metadata":{"name":"a"}}`),
		"crds/README":  []byte("not a manifest"),
		"files/x.yaml": []byte("kind: ConfigMap"),
	}}}
	objs, err := ReleaseCRDs(rel)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, o := range objs {
		names = append(names, o.GetName())
	}
	if want := []string{"a", "b"}; !cmp.Equal(names, want) {
		t.Errorf("got %q, want %q", names, want)
	}
}

func TestKeepsRukpakRendering(t *testing.T) {
	t.Parallel()
	bd := testBD(rukpakv1alpha2.ClassPlain)
	bd.Generation = 4
	for _, tt := range []struct {
		annotations map[string]string
		want        bool
	}{
		{nil, false},
		{map[string]string{AnnotationTakenOver: "4"}, true},
		{map[string]string{AnnotationTakenOver: "3"}, false},
		{map[string]string{AnnotationTakenOver: "x"}, false},
	} {
		if got := KeepsRukpakRendering(bd, tt.annotations); got != tt.want {
			t.Errorf("%v: got %v", tt.annotations, got)
		}
	}
}

// rukpak v0.16 installed registry+v1 bundles with their Namespace, which
// the API server labels with its name whatever is applied.
func TestTake_NamespaceKeepsItsNameLabel(t *testing.T) {
	t.Parallel()
	ns := asRukpakRendered(rendered(t, "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: prometheus-system\n"))
	live := asLive(ns, func(u *unstructured.Unstructured) {
		labels := u.GetLabels()
		labels["kubernetes.io/metadata.name"] = "prometheus-system"
		u.SetLabels(labels)
	})
	p := Take(Input{
		BD:        &rukpakv1alpha2.BundleDeployment{ObjectMeta: metav1.ObjectMeta{Name: "bd", UID: "bd-uid"}},
		Releases:  []corev1.Secret{{ObjectMeta: metav1.ObjectMeta{Name: "sh.helm.release.v1.bd.v1"}}},
		Release:   &Release{Secret: "sh.helm.release.v1.bd.v1", Name: "bd", Version: 1, Status: StatusDeployed},
		Installed: []*unstructured.Unstructured{ns},
		Live:      map[Ref]*unstructured.Unstructured{RefOf(ns): live},
	})
	if len(p.Objects) != 1 {
		t.Fatalf("objects: %+v", p.Objects)
	}
	if _, removed := p.Objects[0].Labels.Removed["kubernetes.io/metadata.name"]; removed {
		t.Errorf("the plan says the API server's label goes: %+v", p.Objects[0].Labels)
	}
}
