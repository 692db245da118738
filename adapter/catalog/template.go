package catalog

import (
	"encoding/json"
	"fmt"
	"strings"

	kappctrlv1alpha1 "carvel.dev/kapp-controller/pkg/apis/kappctrl/v1alpha1"

	catalogsv1alpha1 "github.com/rukpak-kapp/rukpak-kapp/api/catalogs/v1alpha1"
	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
)

// The files of a catalog Package's inline fetch. ytt renders them with the
// PackageInstall's values (kapp-controller adds its values Secrets to the
// first ytt step) and two values from the App itself (downward API): the
// App's name and namespace, which are the PackageInstall's.
const (
	schemaFile          = "values-schema.yml"
	operatorInstallFile = "operatorinstall.yml"
	kappConfigFile      = "kapp-config.yml"
)

// Install is what a catalog Package installs.
type Install struct {
	Entry Entry
	// Image is the bundle's image reference, as the catalog names it.
	Image string
	// InstallNamespace is the default install namespace: the CSV's
	// suggested namespace, else the package name.
	InstallNamespace string
	// Class is the provisioner class: registry+v1, or plain for a plain+v0
	// bundle.
	Class string
}

// AppTemplate is the App spec of the Package that installs in: ytt makes
// one OperatorInstall named after the PackageInstall (and, unless the
// values say otherwise, its install namespace), and kapp deploys it and
// waits until the adapter reports the generation installed or held. kapp
// leaves BundleDeployments alone (its filter): the OperatorInstall's
// controller writes the one that installs the bundle, and a
// BundleDeployment an earlier template made stays in place for it to adopt.
func AppTemplate(in Install) *kappctrlv1alpha1.AppSpec {
	return &kappctrlv1alpha1.AppSpec{
		Fetch: []kappctrlv1alpha1.AppFetch{{Inline: &kappctrlv1alpha1.AppFetchInline{Paths: map[string]string{
			schemaFile:          valuesSchemaYtt(in),
			operatorInstallFile: operatorInstallYtt(in),
			kappConfigFile:      kappConfig,
		}}}},
		Template: []kappctrlv1alpha1.AppTemplate{{Ytt: &kappctrlv1alpha1.AppTemplateYtt{
			ValuesFrom: []kappctrlv1alpha1.AppTemplateValuesSource{{DownwardAPI: &kappctrlv1alpha1.AppTemplateValuesDownwardAPI{
				Items: []kappctrlv1alpha1.AppTemplateValuesDownwardAPIItem{
					{Name: "app.name", FieldPath: "metadata.name"},
					{Name: "app.namespace", FieldPath: "metadata.namespace"},
				},
			}}},
		}}},
		Deploy: []kappctrlv1alpha1.AppDeploy{{Kapp: &kappctrlv1alpha1.AppDeployKapp{RawOptions: []string{leaveBundleDeployments}}}},
	}
}

// quote makes s a YAML scalar (a JSON string is one).
func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// valuesSchemaYtt declares the values ytt accepts, with their defaults:
// the same values as the Package's OpenAPI schema (values), which says
// the same to kctrl.
func valuesSchemaYtt(in Install) string {
	var b strings.Builder
	b.WriteString(`#@data/values-schema
---
#! The PackageInstall's name and namespace (downward API), not for users.
app:
  name: ""
  namespace: ""
`)
	// Every value, a plain bundle's too: a plain bundle's install has always
	// accepted (and ignored) watchNamespaces, and an install that passes it
	// must keep rendering.
	for _, v := range values(in.InstallNamespace, nil, false) {
		switch d := v.def.(type) {
		case string:
			fmt.Fprintf(&b, "%s: %s\n", v.name, quote(d))
		case bool:
			fmt.Fprintf(&b, "%s: %t\n", v.name, d)
		case []string:
			// A ytt schema's list names its items' type by one item; its
			// default is empty.
			fmt.Fprintf(&b, "%s:\n- \"\"\n", v.name)
		}
	}
	return b.String()
}

// leaveBundleDeployments keeps kapp's deploy off BundleDeployments: none is
// in the template, and one a template of an earlier release rendered (it
// still carries kapp's label) is the OperatorInstall's to adopt, not kapp's
// to delete.
const leaveBundleDeployments = `--filter={"not":{"resource":{"kinds":["BundleDeployment"]}}}`

// operatorInstallYtt is the OperatorInstall, named after the
// PackageInstall, asking for in's bundle with the PackageInstall's values.
func operatorInstallYtt(in Install) string {
	format := catalogsv1alpha1.FormatRegistryV1
	if in.Class == rukpakv1alpha2.ClassPlain {
		format = catalogsv1alpha1.FormatPlainV0
	}
	var b strings.Builder
	b.WriteString(`#@ load("@ytt:data", "data")
#@ load("@ytt:assert", "assert")
#@ v = data.values
#@ if v.upgradeConstraintPolicy not in ["` + PolicyCatalogProvided + `", "` + PolicySelfCertified + `"]:
#@   assert.fail("upgradeConstraintPolicy must be ` + PolicyCatalogProvided + ` or ` + PolicySelfCertified + `, not " + v.upgradeConstraintPolicy)
#@ end
#@ if v.upgradeApproval not in ["` + ApprovalAutomatic + `", "` + ApprovalManual + `"]:
#@   assert.fail("upgradeApproval must be ` + ApprovalAutomatic + ` or ` + ApprovalManual + `, not " + v.upgradeApproval)
#@ end
#@ if v.createNamespace:
---
apiVersion: v1
kind: Namespace
metadata:
  name: #@ v.installNamespace
  annotations:
    #! An existing namespace is taken as it is; uninstalling keeps it and
    #! whatever else lives in it.
    kapp.k14s.io/create-strategy: fallback-on-update
    kapp.k14s.io/delete-strategy: orphan
#@ end
---
apiVersion: ` + catalogsv1alpha1.GroupVersion.String() + `
kind: OperatorInstall
metadata:
  name: #@ v.app.name
  namespace: #@ v.app.namespace
  labels:
    ` + LabelPackage + `: ` + quote(in.Entry.Package) + `
spec:
  packageName: ` + quote(in.Entry.Package) + `
  channel: ` + quote(in.Entry.Channel) + `
  refName: ` + quote(in.Entry.RefName) + `
  version: ` + quote(in.Entry.Version) + `
  bundle: ` + quote(in.Entry.Bundle) + `
  image: ` + quote(in.Image) + `
  format: ` + quote(format) + `
  installNamespace: #@ v.installNamespace
`)
	if in.Class == rukpakv1alpha2.ClassRegistry {
		b.WriteString(`  #@ if len(v.watchNamespaces) > 0:
  watchNamespaces: #@ v.watchNamespaces
  #@ end
`)
	}
	b.WriteString(`  serviceAccountName: #@ v.serviceAccountName
  bundleDeploymentName: #@ v.bundleDeploymentName
  upgradeConstraintPolicy: #@ v.upgradeConstraintPolicy
  upgradeApproval: #@ v.upgradeApproval
  approvedVersion: #@ v.approvedVersion
  installDependencies: #@ v.installDependencies
  healthExpressions: #@ v.healthExpressions
  #@ if v.stepHealthTimeout:
  stepHealthTimeout: #@ v.stepHealthTimeout
  #@ end
`)
	return b.String()
}

// kappConfig makes kapp wait for the OperatorInstall's controller with
// kapp's own condition matchers, each judged at the OperatorInstall's
// generation: the deploy fails with the controller's message when the
// generation is not installed (kapp-controller retries with backoff), and
// succeeds once it is Installed, or Held (the version asked for waits for
// approval, or was retracted, and the version installed runs: no
// failure). An approval is a change of the spec, so a hold said before it
// is of an older generation and ends no wait.
const kappConfig = `apiVersion: kapp.k14s.io/v1alpha1
kind: Config
waitRules:
- resourceMatchers:
  - apiVersionKindMatcher: {apiVersion: catalogs.rukpak-kapp.dev/v1alpha1, kind: OperatorInstall}
  conditionMatchers:
  - {type: ` + catalogsv1alpha1.TypeInstalled + `, status: "False", failure: true, supportsObservedGeneration: true}
  - {type: ` + catalogsv1alpha1.TypeInstalled + `, status: "True", success: true, supportsObservedGeneration: true}
  - {type: ` + catalogsv1alpha1.TypeHeld + `, status: "True", success: true, supportsObservedGeneration: true}
`
