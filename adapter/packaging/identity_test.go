package packaging

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
	"github.com/rukpak-kapp/rukpak-kapp/convert"
)

func TestIdentityOf(t *testing.T) {
	bd := func(class string) *rukpakv1alpha2.BundleDeployment {
		return &rukpakv1alpha2.BundleDeployment{ObjectMeta: metav1.ObjectMeta{Name: "web"}, Spec: rukpakv1alpha2.BundleDeploymentSpec{ProvisionerClassName: class}}
	}
	chart := map[string][]byte{"Chart.yaml": []byte("name: hello\nversion: 0.1.0\ndescription: says hello\n"), "values.schema.json": []byte(`{"type":"object"}`)}
	for _, tt := range []struct {
		name       string
		bd         *rukpakv1alpha2.BundleDeployment
		csv        *convert.Package
		chart      map[string][]byte
		want       Identity
		wantSchema bool
		wantErr    string
	}{
		{name: "plain: the BundleDeployment's name", bd: bd(rukpakv1alpha2.ClassPlain), want: Identity{DisplayName: "web", Description: "Bundle web"}},
		{name: "registry+v1: the CSV", bd: bd(rukpakv1alpha2.ClassRegistry), csv: &convert.Package{Name: "argocd-operator", Version: "0.6.0"},
			want: Identity{Version: "0.6.0", DisplayName: "argocd-operator", Description: "The registry+v1 bundle of argocd-operator 0.6.0, converted to plain objects"}},
		{name: "registry+v1 without its metadata", bd: bd(rukpakv1alpha2.ClassRegistry), wantErr: "metadata was not recorded"},
		{name: "helm: Chart.yaml and its schema", bd: bd(rukpakv1alpha2.ClassHelm), chart: chart,
			want: Identity{Version: "0.1.0", DisplayName: "hello", Description: "says hello"}, wantSchema: true},
		{name: "helm with a schema that is no JSON: none", bd: bd(rukpakv1alpha2.ClassHelm),
			chart: map[string][]byte{"Chart.yaml": chart["Chart.yaml"], "values.schema.json": []byte("{")},
			want:  Identity{Version: "0.1.0", DisplayName: "hello", Description: "says hello"}},
		{name: "helm without Chart.yaml", bd: bd(rukpakv1alpha2.ClassHelm), chart: map[string][]byte{"values.yaml": nil}, wantErr: "no Chart.yaml"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, schema, err := IdentityOf(tt.bd, tt.csv, tt.chart)
			switch {
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Fatalf("err = %v, want %q", err, tt.wantErr)
			case tt.wantErr == "" && err != nil:
				t.Fatal(err)
			case got != tt.want || (schema != nil) != tt.wantSchema:
				t.Fatalf("IdentityOf = %+v, schema %q; want %+v, schema %t", got, schema, tt.want, tt.wantSchema)
			}
		})
	}
}
