package v1alpha1

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/conversion"

	"github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
)

var (
	_ conversion.Convertible = &BundleDeployment{}
	_ conversion.Hub         = &v1alpha2.BundleDeployment{}
)

func imageTemplate(class, ref string) BundleTemplate {
	return BundleTemplate{Spec: BundleSpec{ProvisionerClassName: class, Source: BundleSource{Type: SourceTypeImage, Image: &ImageSource{Ref: ref}}}}
}

func spokeBD(name, class string, tmpl BundleTemplate) *BundleDeployment {
	bd := &BundleDeployment{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: BundleDeploymentSpec{ProvisionerClassName: class, Template: tmpl}}
	bd.SetGroupVersionKind(GroupVersion.WithKind("BundleDeployment"))
	return bd
}

func hubBD(name string, spec v1alpha2.BundleDeploymentSpec) *v1alpha2.BundleDeployment {
	bd := &v1alpha2.BundleDeployment{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: spec}
	bd.SetGroupVersionKind(v1alpha2.GroupVersion.WithKind("BundleDeployment"))
	return bd
}

// jsonOf is what the webhook sends back: comparing it compares what the
// API server would store or serve.
func jsonOf(t *testing.T, v any) string {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func TestToV1alpha2(t *testing.T) {
	cond := metav1.Condition{Type: TypeInstalled, Status: metav1.ConditionTrue, Reason: ReasonInstallationSucceeded, Message: "Instantiated bundle b-1 successfully"}
	for _, tc := range []struct {
		name string
		in   *BundleDeployment
		want *v1alpha2.BundleDeployment
	}{{
		name: "plain: the template's class and source become the BundleDeployment's; no install namespace",
		in:   spokeBD("plain", ClassPlain, imageTemplate(ClassPlain, "quay.io/b/plain:v1")),
		want: hubBD("plain", v1alpha2.BundleDeploymentSpec{ProvisionerClassName: ClassPlain,
			Source: v1alpha2.BundleSource{Type: "image", Image: &v1alpha2.ImageSource{Ref: "quay.io/b/plain:v1"}}}),
	}, {
		name: "registry+v1 (plain BD, registry template) is a registry BundleDeployment, as in rukpak v0.17",
		in:   spokeBD("reg", ClassPlain, imageTemplate(ClassRegistry, "quay.io/b/reg:v1")),
		want: hubBD("reg", v1alpha2.BundleDeploymentSpec{ProvisionerClassName: ClassRegistry,
			Source: v1alpha2.BundleSource{Type: "image", Image: &v1alpha2.ImageSource{Ref: "quay.io/b/reg:v1"}}}),
	}, {
		name: "an own class the template does not imply is kept",
		in:   spokeBD("odd", ClassHelm, imageTemplate(ClassRegistry, "quay.io/b/reg:v1")),
		want: func() *v1alpha2.BundleDeployment {
			bd := hubBD("odd", v1alpha2.BundleDeploymentSpec{ProvisionerClassName: ClassRegistry,
				Source: v1alpha2.BundleSource{Type: "image", Image: &v1alpha2.ImageSource{Ref: "quay.io/b/reg:v1"}}})
			bd.Annotations = map[string]string{AnnotationV1alpha1Spec: `{"provisionerClassName":"core-rukpak-io-helm"}`}
			return bd
		}(),
	}, {
		name: "helm config, template metadata, user annotations and status",
		in: func() *BundleDeployment {
			tmpl := BundleTemplate{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "hello"}, Annotations: map[string]string{"a": "b"}},
				Spec: BundleSpec{ProvisionerClassName: ClassHelm, Source: BundleSource{Type: SourceTypeGit, Git: &GitSource{
					Repository: "https://github.com/helm/examples", Directory: "./charts", Ref: GitRef{Branch: "main"},
					Auth: Authorization{Secret: LocalObjectReference{Name: "creds"}, InsecureSkipVerify: true}}}},
			}
			bd := spokeBD("helm", ClassHelm, tmpl)
			bd.Annotations = map[string]string{"owner": "team-a"}
			bd.Spec.Config = &apiextensionsv1.JSON{Raw: []byte(`{"values":"replicaCount: 1\n"}`)}
			bd.Status = BundleDeploymentStatus{Conditions: []metav1.Condition{cond}, ActiveBundle: "helm-5f7", ObservedGeneration: 3}
			return bd
		}(),
		want: func() *v1alpha2.BundleDeployment {
			bd := hubBD("helm", v1alpha2.BundleDeploymentSpec{ProvisionerClassName: ClassHelm,
				Source: v1alpha2.BundleSource{Type: "git", Git: &v1alpha2.GitSource{
					Repository: "https://github.com/helm/examples", Directory: "./charts", Ref: v1alpha2.GitRef{Branch: "main"},
					Auth: v1alpha2.Authorization{Secret: v1alpha2.LocalObjectReference{Name: "creds"}, InsecureSkipVerify: true}}},
				Config: &apiextensionsv1.JSON{Raw: []byte(`{"values":"replicaCount: 1\n"}`)}})
			bd.Annotations = map[string]string{
				"owner":                "team-a",
				AnnotationV1alpha1Spec: `{"templateMetadata":{"labels":{"app":"hello"},"annotations":{"a":"b"}}}`,
				AnnotationActiveBundle: "helm-5f7",
			}
			bd.Status = v1alpha2.BundleDeploymentStatus{Conditions: []metav1.Condition{cond}, ObservedGeneration: 3}
			return bd
		}(),
	}, {
		name: "an upload source keeps its type; that upload was set is recorded",
		in: spokeBD("up", ClassPlain, BundleTemplate{Spec: BundleSpec{ProvisionerClassName: ClassPlain,
			Source: BundleSource{Type: SourceTypeUpload, Upload: &UploadSource{}}}}),
		want: func() *v1alpha2.BundleDeployment {
			bd := hubBD("up", v1alpha2.BundleDeploymentSpec{ProvisionerClassName: ClassPlain, Source: v1alpha2.BundleSource{Type: "upload"}})
			bd.Annotations = map[string]string{AnnotationV1alpha1Spec: `{"upload":true}`}
			return bd
		}(),
	}, {
		name: "v1alpha2's fields come back from the annotation; configMaps and http map one to one",
		in: func() *BundleDeployment {
			bd := spokeBD("back", ClassPlain, BundleTemplate{Spec: BundleSpec{ProvisionerClassName: ClassPlain, Source: BundleSource{
				Type:       SourceTypeConfigMaps,
				ConfigMaps: []ConfigMapSource{{ConfigMap: LocalObjectReference{Name: "cm"}, Path: "manifests"}},
				HTTP:       &HTTPSource{URL: "https://x.example/b.tgz", Auth: Authorization{Secret: LocalObjectReference{Name: "s"}}},
			}}})
			bd.Annotations = map[string]string{AnnotationV1alpha2Fields: `{"installNamespace":"team-a","preflight":{"crdUpgradeSafety":{"disabled":true}},"contentURL":"u"}`}
			return bd
		}(),
		want: func() *v1alpha2.BundleDeployment {
			bd := hubBD("back", v1alpha2.BundleDeploymentSpec{InstallNamespace: "team-a", ProvisionerClassName: ClassPlain,
				Source: v1alpha2.BundleSource{
					Type:       "configMaps",
					ConfigMaps: []v1alpha2.ConfigMapSource{{ConfigMap: v1alpha2.LocalObjectReference{Name: "cm"}, Path: "manifests"}},
					HTTP:       &v1alpha2.HTTPSource{URL: "https://x.example/b.tgz", Auth: v1alpha2.Authorization{Secret: v1alpha2.LocalObjectReference{Name: "s"}}},
				},
				Preflight: &v1alpha2.PreflightConfig{CRDUpgradeSafety: &v1alpha2.CRDUpgradeSafetyPreflightConfig{Disabled: true}}})
			bd.Status.ContentURL = "u"
			return bd
		}(),
	}, {
		name: "image TLS settings need an image source: a v1alpha1 edit to git drops them",
		in: func() *BundleDeployment {
			bd := spokeBD("tls", ClassPlain, BundleTemplate{Spec: BundleSpec{ProvisionerClassName: ClassPlain, Source: BundleSource{
				Type: SourceTypeGit, Git: &GitSource{Repository: "r", Ref: GitRef{Tag: "v1"}}}}})
			bd.Annotations = map[string]string{AnnotationV1alpha2Fields: `{"installNamespace":"ns","image":{"insecureSkipTLSVerify":true}}`}
			return bd
		}(),
		want: hubBD("tls", v1alpha2.BundleDeploymentSpec{InstallNamespace: "ns", ProvisionerClassName: ClassPlain,
			Source: v1alpha2.BundleSource{Type: "git", Git: &v1alpha2.GitSource{Repository: "r", Ref: v1alpha2.GitRef{Tag: "v1"}}}}),
	}, {
		name: "a malformed record and foreign copies of the other side's keys are dropped, never an error",
		in: func() *BundleDeployment {
			bd := spokeBD("bad", ClassPlain, imageTemplate(ClassPlain, "i"))
			bd.Annotations = map[string]string{AnnotationV1alpha2Fields: `{"installNamespace":`, AnnotationActiveBundle: "forged", AnnotationV1alpha1Spec: "{}"}
			return bd
		}(),
		want: hubBD("bad", v1alpha2.BundleDeploymentSpec{ProvisionerClassName: ClassPlain,
			Source: v1alpha2.BundleSource{Type: "image", Image: &v1alpha2.ImageSource{Ref: "i"}}}),
	}} {
		t.Run(tc.name, func(t *testing.T) {
			in := tc.in.DeepCopy()
			got := ToV1alpha2(tc.in)
			if d := cmp.Diff(jsonOf(t, tc.want), jsonOf(t, got)); d != "" {
				t.Errorf("ToV1alpha2 (-want +got):\n%s", d)
			}
			if d := cmp.Diff(jsonOf(t, in), jsonOf(t, tc.in)); d != "" {
				t.Errorf("the input changed:\n%s", d)
			}
			hub := &v1alpha2.BundleDeployment{}
			if err := tc.in.ConvertTo(hub); err != nil || jsonOf(t, hub) != jsonOf(t, got) {
				t.Errorf("ConvertTo differs from ToV1alpha2 (%v)", err)
			}
		})
	}
}

func TestFromV1alpha2(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   *v1alpha2.BundleDeployment
		want *BundleDeployment
	}{{
		name: "registry+v1 reads as rukpak v0.16 wired it: a plain BundleDeployment of a registry template",
		in: hubBD("reg", v1alpha2.BundleDeploymentSpec{InstallNamespace: "operators", ProvisionerClassName: ClassRegistry,
			Source: v1alpha2.BundleSource{Type: "image", Image: &v1alpha2.ImageSource{Ref: "quay.io/b/reg:v1", ImagePullSecretName: "pull", CertificateData: "PEM"}}}),
		want: func() *BundleDeployment {
			bd := spokeBD("reg", ClassPlain, imageTemplate(ClassRegistry, "quay.io/b/reg:v1"))
			bd.Spec.Template.Spec.Source.Image.ImagePullSecretName = "pull"
			bd.Annotations = map[string]string{AnnotationV1alpha2Fields: `{"installNamespace":"operators","image":{"certificateData":"PEM"}}`}
			return bd
		}(),
	}, {
		name: "status: resolvedSource and contentURL are kept in the record, activeBundle comes from its annotation",
		in: func() *v1alpha2.BundleDeployment {
			bd := hubBD("st", v1alpha2.BundleDeploymentSpec{ProvisionerClassName: ClassHelm,
				Source: v1alpha2.BundleSource{Type: "http", HTTP: &v1alpha2.HTTPSource{URL: "https://x/c.tgz"}}})
			bd.Annotations = map[string]string{AnnotationActiveBundle: "st-abc", AnnotationV1alpha2Fields: "stale"}
			bd.Status = v1alpha2.BundleDeploymentStatus{ObservedGeneration: 2,
				ResolvedSource: &v1alpha2.BundleSource{Type: "http", HTTP: &v1alpha2.HTTPSource{URL: "https://x/c.tgz"}}}
			return bd
		}(),
		want: func() *BundleDeployment {
			bd := spokeBD("st", ClassHelm, BundleTemplate{Spec: BundleSpec{ProvisionerClassName: ClassHelm,
				Source: BundleSource{Type: "http", HTTP: &HTTPSource{URL: "https://x/c.tgz"}}}})
			bd.Annotations = map[string]string{AnnotationV1alpha2Fields: `{"resolvedSource":{"type":"http","http":{"url":"https://x/c.tgz","auth":{"secret":{}}}}}`}
			bd.Status = BundleDeploymentStatus{ActiveBundle: "st-abc", ObservedGeneration: 2}
			return bd
		}(),
	}, {
		name: "a malformed v1alpha1 record is dropped",
		in: func() *v1alpha2.BundleDeployment {
			bd := hubBD("bad", v1alpha2.BundleDeploymentSpec{InstallNamespace: "ns", ProvisionerClassName: ClassPlain,
				Source: v1alpha2.BundleSource{Type: "image", Image: &v1alpha2.ImageSource{Ref: "i"}}})
			bd.Annotations = map[string]string{AnnotationV1alpha1Spec: "[1]"}
			return bd
		}(),
		want: func() *BundleDeployment {
			bd := spokeBD("bad", ClassPlain, imageTemplate(ClassPlain, "i"))
			bd.Annotations = map[string]string{AnnotationV1alpha2Fields: `{"installNamespace":"ns"}`}
			return bd
		}(),
	}} {
		t.Run(tc.name, func(t *testing.T) {
			got := FromV1alpha2(tc.in)
			if d := cmp.Diff(jsonOf(t, tc.want), jsonOf(t, got)); d != "" {
				t.Errorf("FromV1alpha2 (-want +got):\n%s", d)
			}
			spoke := &BundleDeployment{}
			if err := spoke.ConvertFrom(tc.in); err != nil || jsonOf(t, spoke) != jsonOf(t, got) {
				t.Errorf("ConvertFrom differs from FromV1alpha2 (%v)", err)
			}
		})
	}
}

func TestIsV1alpha1(t *testing.T) {
	first := ToV1alpha2(spokeBD("a", ClassPlain, imageTemplate(ClassPlain, "i")))
	if !IsV1alpha1(first) {
		t.Error("a BundleDeployment written at v1alpha1 is a v1alpha1 one")
	}
	second := hubBD("b", v1alpha2.BundleDeploymentSpec{InstallNamespace: "default", ProvisionerClassName: ClassPlain})
	if IsV1alpha1(ToV1alpha2(FromV1alpha2(second))) {
		t.Error("a v1alpha2 BundleDeployment read and written back at v1alpha1 stays a v1alpha2 one")
	}
}

func TestOwnClass(t *testing.T) {
	for _, tc := range []struct {
		name          string
		own, template string
	}{
		{"plain", ClassPlain, ClassPlain},
		{"registry+v1 through the plain provisioner", ClassPlain, ClassRegistry},
		{"helm", ClassHelm, ClassHelm},
		{"an alias", "kapp-plain", ClassRegistry},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := OwnClass(ToV1alpha2(spokeBD("a", tc.own, imageTemplate(tc.template, "i")))); got != tc.own {
				t.Fatalf("OwnClass = %q, want %q", got, tc.own)
			}
		})
	}
	malformed := hubBD("b", v1alpha2.BundleDeploymentSpec{ProvisionerClassName: ClassRegistry})
	malformed.Annotations = map[string]string{AnnotationV1alpha1Spec: "{"}
	if got := OwnClass(malformed); got != ClassPlain {
		t.Fatalf("a malformed record is dropped, as the conversion drops it: %q", got)
	}
}
