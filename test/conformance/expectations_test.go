package conformance_test

// Every spec of rukpak v0.24.0's test/e2e, by its full text, and what
// running it against rukpak-kapp must give. A spec missing here, or named
// here and missing there, fails the suite; so does any outcome other than
// the one expected.

// expected is one spec's outcome.
type expected struct {
	// skip is why the spec cannot run here; it is skipped with
	// --ginkgo.skip, and this suite checks what a user sees instead
	// (ownspecs_test.go, named by replacedBy).
	skip       string
	replacedBy string
	// differs is a deliberate difference from rukpak, listed in docs/differences.md
	// ("Differences from rukpak v0.24.0"): the spec fails, and exactly so.
	differs *difference
	// pending specs are marked pending upstream (PIt, PWhen).
	pending bool
}

// difference is how a spec fails against rukpak-kapp, and why.
type difference struct {
	why string
	// in is the node that fails (It, AfterEach, ...), and message a part of
	// the failure's message that names the cause.
	in, message string
	// orPasses marks a spec whose outcome depends on timing that the
	// spec leaves open: it may also pass (the why says when).
	orPasses bool
}

// needsPod is why the git specs are skipped: each lists the pods labelled
// app=core (rukpak's own Deployment) and execs /ls in one to see the
// bundle's cached tarball. rukpak-kapp has no such pod, and no pod runs on
// the harness's fake nodes.
const needsPod = "execs into rukpak's own core Pod to list its bundle cache (/var/cache/bundles/<bd>.tgz); rukpak-kapp has no such Pod and no Pod runs on the fake nodes"

// Difference reasons, one line each; docs/differences.md says more.
const (
	whySubdirs = "subdirectories under manifests/ are read (rukpak refused them): this bundle's manifests/emptydir/.gitignore is then read as YAML, " +
		"and the install fails on it as rukpak's did on any file that holds no object"
	whyCRDsAndCRs  = "a bundle holding a CRD and custom resources of it installs (kapp applies the CRD first; rukpak's Helm could not)"
	whyDeleteOrder = "the BundleDeployment is deleted after its objects (its finalizer holds it until kapp removed them, so a failed delete stays visible); " +
		"rukpak's went at once and garbage collection removed the objects afterwards. It passes when the BundleDeployment is gone within the spec's one-second poll of its CRDs going"
	whyNameWording = "the limit is rukpak's (52 characters) but Kubernetes 1.37's API server words it `may not be more than 52 bytes`; rukpak ran on 1.30, which said `may not be longer than 52`"
)

var upstream = map[string]expected{
	// api_validation_test.go
	"bundle api validation when the bundle name is too long should fail the long name of bundle deployment during creation": {
		differs: &difference{why: whyNameWording, in: "It", message: "metadata.name: Too long: may not be more than 52 bytes"},
	},
	"bundle api validation when the bundle deployment with multiple sources should fail the bundle creation":                {},
	"bundle api validation when the bundle with no sources should fail the bundle creation":                                 {},
	"bundle api validation when the bundle source type is git and more than 1 refs are set should fail the bundle creation": {},
	"bundle api validation when the bundle source type is git and no refs are set should fail the bundle creation":          {},
	"bundle api validation when a Bundle references an invalid provisioner class name should fail validation":               {},
	"bundle api validation when a BundleDeployment references an invalid provisioner class name should fail validation":     {},

	// crdvalidator_test.go
	"crdvalidator when a crd event is emitted when an incoming crd event is safe should allow the crd update event to occur without being owned by RukPak":                                                    {},
	"crdvalidator when a crd event is emitted when an incoming crd event is safe should allow the crd update event to occur being owned by RukPak":                                                            {},
	"crdvalidator when a crd event is emitted when an incoming crd event modifies the schema in a way that breaks an existing cr should be invalidated if owned by RukPak":                                    {},
	"crdvalidator when a crd event is emitted when an incoming crd event modifies the schema in a way that breaks an existing cr should be admitted if not owned by RukPak":                                   {},
	"crdvalidator when a crd event is emitted when an incoming crd event modifies the schema in a way that breaks an existing cr should be admitted if owned by RukPak but disabled explicitly by annotation": {},
	"crdvalidator when a crd event is emitted when an incoming crd event removes a stored version should deny admission":                                                                                      {pending: true},

	// helm_provisioner_test.go
	"helm provisioner bundledeployment when a BundleDeployment targets a valid Bundle should rollout the bundle contents successfully":                                                                                      {},
	"helm provisioner bundledeployment when a BundleDeployment targets a valid Bundle when the underlying helm chart contains a deployment manifest should eventually result in an available deployment resource":           {},
	"helm provisioner bundledeployment when a BundleDeployment targets a valid Bundle when the underlying helm chart contains a deployment manifest should re-create a deployment resource when manually deleted":           {},
	"helm provisioner bundledeployment when a BundleDeployment targets a Bundle with an invalid url should fail rolling out the bundle contents":                                                                            {},
	"helm provisioner bundledeployment when a BundleDeployment targets a Bundle with a none-tgz file url should fail rolling out the bundle contents":                                                                       {},
	"helm provisioner bundledeployment when a BundleDeployment targets a Bundle with a none chart tgz url should fail rolling out the bundle contents":                                                                      {},
	"helm provisioner bundledeployment when a BundleDeployment targets a valid Bundle in Github should rollout the bundle contents successfully":                                                                            {},
	"helm provisioner bundledeployment when a BundleDeployment targets a valid Bundle in Github when the underlying helm chart contains a deployment manifest should eventually result in an available deployment resource": {},
	"helm provisioner bundledeployment when a BundleDeployment targets a valid Bundle in Github when the underlying helm chart contains a deployment manifest should re-create a deployment resource when manually deleted": {pending: true},
	"helm provisioner bundledeployment when a BundleDeployment targets a valid Bundle with no chart directory in Github should rollout the bundle contents successfully":                                                    {},
	"helm provisioner bundledeployment when a BundleDeployment targets a valid Bundle with values should rollout the bundle contents successfully":                                                                          {},

	// plain_provisioner_test.go
	"plain provisioner bundle when a valid Bundle references the wrong unique provisioner ID should consistently contain an empty status":                                               {},
	"plain provisioner bundle when a valid Bundle Deployment referencing a remote container image is created should eventually report a successful state":                               {},
	"plain provisioner bundle when a valid Bundle Deployment referencing a remote private container image is created should eventually report a successful state":                       {},
	"plain provisioner bundle when an invalid Bundle Deployment referencing a remote container image is created checks the bundle's phase is stuck in pending":                          {},
	"plain provisioner bundle when a bundle deployment containing no manifests is created reports an unpack error when the manifests directory is missing":                              {},
	"plain provisioner bundle when a bundle containing an empty manifests directory is created reports an unpack error when the manifests directory contains no objects":                {},
	"plain provisioner bundle when Bundles are backed by a git repository when the bundle is backed by a git commit Can create and unpack the bundle successfully":                      {skip: needsPod, replacedBy: "a git commit"},
	"plain provisioner bundle when Bundles are backed by a git repository when the bundle deployment is backed by a git tag Can create and unpack the bundle successfully":              {skip: needsPod, replacedBy: "a git tag"},
	"plain provisioner bundle when Bundles are backed by a git repository when the bundle deployment is backed by a git branch Can create and unpack the bundle successfully":           {skip: needsPod, replacedBy: "a git branch"},
	"plain provisioner bundle when Bundles are backed by a git repository when the bundle deployment has a custom manifests directory Can create and unpack the bundle successfully":    {skip: needsPod, replacedBy: "a custom manifests directory"},
	"plain provisioner bundle when Bundles are backed by a git repository when the bundle deployment is backed by a private repository Can create and unpack the bundle successfully":   {skip: needsPod + " (without PRIVATE_GIT_REPO it skips itself)", replacedBy: "a private repository"},
	"plain provisioner bundle when Bundles are backed by a git repository when the bundle deployment is backed by a local git repository Can create and unpack the bundle successfully": {skip: needsPod, replacedBy: "a local git repository over ssh"},
	"plain provisioner bundle when the bundle deployment is backed by a configmap Can create and unpack the bundle successfully":                                                        {},
	"plain provisioner bundle when the bundle is backed by a non-existent configmap eventually results in a failing bundle state":                                                       {},
	"plain provisioner bundle when the bundle is backed by an invalid configmap checks the bundle's phase gets failing":                                                                 {},
	"plain provisioner bundle when a bundle deployment containing nested directory is created reports an unpack error when the manifests directory contains directories": {
		differs: &difference{why: whySubdirs, in: "It", message: "json: cannot unmarshal string into Go value of type map[string]interface {}\nto contain substring"},
	},
	"plain provisioner bundle when valid  bundle is created when start server for bundle contents reads the pod log": {
		skip:       "runs a Job (curlimages/curl) that downloads status.contentURL and reads the Job Pod's log; no Pod runs on the fake nodes",
		replacedBy: "the content of a valid bundle",
	},
	"plain provisioner bundle plain provisioner bundleDeployment when a BundleDeployment is dependent on another BundleDeployment when the providing BundleDeployment does not exist should eventually project a failed installation for the dependent BundleDeployment": {},
	"plain provisioner bundle plain provisioner bundleDeployment when a BundleDeployment is dependent on another BundleDeployment when the providing BundleDeployment is created should eventually project a successful installation for the dependent BundleDeployment": {},
	"plain provisioner bundle plain provisioner bundleDeployment when a BundleDeployment targets a Bundle that contains CRDs and instances of those CRDs eventually reports a failed installation state due to missing APIs on the cluster": {
		differs: &difference{why: whyCRDsAndCRs, in: "It", message: "<v1.ConditionStatus>: True\nto equal"},
	},
	"plain provisioner bundle plain provisioner garbage collection when a BundleDeployment has been deleted should eventually result in the installed CRDs being deleted": {
		differs: &difference{why: whyDeleteOrder, in: "AfterEach", message: "<bool>: false\nto be true", orPasses: true},
	},

	// registry_provisioner_test.go
	"registry provisioner bundle when a BundleDeployment targets a registry+v1 Bundle should rollout the bundle contents successfully":                                           {},
	"registry provisioner bundle when a BundleDeployment targets an invalid registry+v1 Bundle should eventually write a failed conversion state to the bundledeployment status": {},

	// webhook_test.go
	"bundle deployment api validating webhook when Bundle Deployment is valid should create the bundle resource":                                     {},
	"bundle deployment api validating webhook when the bundle source type is git and git properties are not set should fail the bundle creation":     {},
	"bundle deployment api validating webhook when the bundle source type is image and image properties are not set should fail the bundle creation": {},
}
