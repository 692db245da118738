package catalog

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	datav1alpha1 "carvel.dev/kapp-controller/pkg/apiserver/apis/datapackaging/v1alpha1"
	"github.com/blang/semver/v4"
	"github.com/operator-framework/operator-registry/alpha/declcfg"
	"github.com/operator-framework/operator-registry/alpha/property"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/packaging"
	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
)

// Options say where a catalog's Packages go.
type Options struct {
	// Domain ends every refName (DefaultDomain when empty).
	Domain string
	// Namespace of the objects: "" for a package repository (kapp-controller
	// places them in the PackageRepository's namespace).
	Namespace string
}

// Published is a catalog as Carvel packages: one PackageMetadata per
// channel and one Package per bundle of a channel, sorted by name, and what
// could not be published, with why.
type Published struct {
	Metadata []*datav1alpha1.PackageMetadata
	Packages []*datav1alpha1.Package
	Refused  []Refusal
	// Images are each Package's images, by its name: the bundle image
	// first, then the images the catalog lists as the bundle's related ones
	// (ImagesOf), for a package repository's images lock.
	Images map[string][]string
}

// Refusal is a package, channel or bundle left out, and why.
type Refusal struct {
	Package, Channel, Bundle string
	Reason                   string
}

func (r Refusal) String() string {
	what := "package " + r.Package
	if r.Channel != "" {
		what += ", channel " + r.Channel
	}
	if r.Bundle != "" {
		what += ", bundle " + r.Bundle
	}
	return what + ": " + r.Reason
}

// Publish makes the Carvel packages of cfg. A package, channel or bundle
// that cannot be published is refused on its own; the rest is published.
func Publish(cfg *declcfg.DeclarativeConfig, opts Options) Published {
	return NewPublisher(opts).Publish(cfg)
}

// Publisher publishes a catalog in parts (a package at a time, as a
// catalog image is read) exactly as Publish would the whole: it remembers
// the refNames taken, which must stay unique across the catalog.
type Publisher struct {
	opts Options
	// refNames: refName → package/channel that took it.
	refNames map[string]string
}

// NewPublisher publishes with opts.
func NewPublisher(opts Options) *Publisher {
	if opts.Domain == "" {
		opts.Domain = DefaultDomain
	}
	return &Publisher{opts: opts, refNames: map[string]string{}}
}

// Publish makes the Carvel packages of cfg, a part of the catalog that
// holds whole packages (their olm.package, channels, bundles and
// deprecations).
func (p *Publisher) Publish(cfg *declcfg.DeclarativeConfig) Published {
	opts := p.opts
	var out Published
	// Each bundle is read once, however many channels hold it: reading
	// its CSV is most of the cost of a publication.
	bundles := map[string]map[string]*bundleFacts{}
	for i := range cfg.Bundles {
		b := &cfg.Bundles[i]
		if bundles[b.Package] == nil {
			bundles[b.Package] = map[string]*bundleFacts{}
		}
		bundles[b.Package][b.Name] = readBundle(b)
	}
	deprecated := deprecations(cfg.Deprecations)
	channels := map[string][]*declcfg.Channel{}
	for i := range cfg.Channels {
		c := &cfg.Channels[i]
		channels[c.Package] = append(channels[c.Package], c)
	}
	for i := range cfg.Packages {
		pkg := &cfg.Packages[i]
		for _, ch := range channels[pkg.Name] {
			ref, err := RefName(pkg.Name, ch.Name, opts.Domain)
			if err == nil {
				if other, taken := p.refNames[ref]; taken {
					err = fmt.Errorf("its refName %s is already the one of %s", ref, other)
				}
			}
			if err != nil {
				out.Refused = append(out.Refused, Refusal{Package: pkg.Name, Channel: ch.Name, Reason: err.Error()})
				continue
			}
			p.refNames[ref] = pkg.Name + "/" + ch.Name
			c := channelOf{pkg: pkg, ch: ch, ref: ref, bundles: bundles[pkg.Name], deprecated: deprecated[pkg.Name], opts: opts}
			meta, pkgs, refused := c.publish()
			out.Refused = append(out.Refused, refused...)
			if len(pkgs) == 0 {
				continue
			}
			if out.Images == nil {
				out.Images = map[string][]string{}
			}
			for _, pkg := range pkgs {
				b := c.bundles[pkg.Annotations[AnnotationBundle]]
				out.Images[pkg.Name] = ImagesOf(b.image, b.related)
			}
			out.Metadata = append(out.Metadata, meta)
			out.Packages = append(out.Packages, pkgs...)
		}
	}
	out.sort()
	return out
}

// Add appends part to pub, in name order.
func (pub *Published) Add(part Published) {
	pub.Metadata = append(pub.Metadata, part.Metadata...)
	pub.Packages = append(pub.Packages, part.Packages...)
	pub.Refused = append(pub.Refused, part.Refused...)
	if len(part.Images) > 0 && pub.Images == nil {
		pub.Images = map[string][]string{}
	}
	maps.Copy(pub.Images, part.Images)
	pub.sort()
}

func (pub *Published) sort() {
	slices.SortFunc(pub.Metadata, func(a, b *datav1alpha1.PackageMetadata) int { return strings.Compare(a.Name, b.Name) })
	slices.SortFunc(pub.Packages, func(a, b *datav1alpha1.Package) int { return strings.Compare(a.Name, b.Name) })
}

// deprecation is what olm.deprecations says of one package.
type deprecation struct {
	pkg      string
	channels map[string]string
	bundles  map[string]string
}

func deprecations(ds []declcfg.Deprecation) map[string]*deprecation {
	out := map[string]*deprecation{}
	for _, d := range ds {
		dep := out[d.Package]
		if dep == nil {
			dep = &deprecation{channels: map[string]string{}, bundles: map[string]string{}}
			out[d.Package] = dep
		}
		for _, e := range d.Entries {
			switch e.Reference.Schema {
			case declcfg.SchemaPackage:
				dep.pkg = e.Message
			case declcfg.SchemaChannel:
				dep.channels[e.Reference.Name] = e.Message
			case declcfg.SchemaBundle:
				dep.bundles[e.Reference.Name] = e.Message
			}
		}
	}
	return out
}

type channelOf struct {
	pkg        *declcfg.Package
	ch         *declcfg.Channel
	ref        string
	bundles    map[string]*bundleFacts
	deprecated *deprecation
	opts       Options
}

func (c channelOf) refuse(bundle, reason string) Refusal {
	return Refusal{Package: c.pkg.Name, Channel: c.ch.Name, Bundle: bundle, Reason: reason}
}

func (c channelOf) publish() (*datav1alpha1.PackageMetadata, []*datav1alpha1.Package, []Refusal) {
	var refused []Refusal
	type entry struct {
		Entry
		*bundleFacts
	}
	var entries []entry
	byVersion := map[string][]string{}
	for _, ce := range c.ch.Entries {
		b := c.bundles[ce.Name]
		err := errors.New("the channel names a bundle the catalog does not hold")
		if b != nil {
			err = b.err
		}
		if err == nil {
			err = packaging.CheckPackageName(packaging.PackageName(c.ref, b.version))
		}
		if err != nil {
			refused = append(refused, c.refuse(ce.Name, err.Error()))
			continue
		}
		byVersion[b.version] = append(byVersion[b.version], ce.Name)
		entries = append(entries, entry{
			Entry: Entry{Package: c.pkg.Name, Channel: c.ch.Name, Bundle: ce.Name, Version: b.olmVersion,
				Replaces: ce.Replaces, Skips: ce.Skips, SkipRange: ce.SkipRange, RefName: c.ref},
			bundleFacts: b,
		})
	}
	var pkgs []*datav1alpha1.Package
	var head *entry
	for i := range entries {
		e := &entries[i]
		if same := byVersion[e.version]; len(same) > 1 {
			refused = append(refused, c.refuse(e.Bundle, fmt.Sprintf("bundles %s differ only in build metadata, which makes them the same Package version %s", strings.Join(same, ", "), e.version)))
			continue
		}
		if head == nil || e.semver.GT(head.semver) {
			head = e
		}
		pkgs = append(pkgs, c.packageOf(e.Entry, e.bundleFacts))
	}
	if head == nil {
		return nil, nil, refused
	}
	return c.metadataOf(head.csv), pkgs, refused
}

// bundleFacts is what a Package needs of its bundle, or why it cannot be
// published.
type bundleFacts struct {
	image string
	// related are the catalog's relatedImages of the bundle.
	related []string
	// olmVersion is the bundle's own; version the Package's (PackageVersion).
	olmVersion, version string
	semver              semver.Version
	class               string
	// provides are the APIs the bundle provides (AnnotationProvides).
	provides string
	// requires is what it requires (AnnotationRequires).
	requires string
	csv      csvInfo
	err      error
}

func readBundle(b *declcfg.Bundle) *bundleFacts {
	f := &bundleFacts{image: b.Image}
	for _, r := range b.RelatedImages {
		f.related = append(f.related, r.Image)
	}
	props, err := property.Parse(b.Properties)
	if err != nil {
		f.err = fmt.Errorf("the bundle's properties cannot be read: %w", err)
		return f
	}
	if len(props.Packages) != 1 {
		f.err = fmt.Errorf("the bundle has %d olm.package properties, not one", len(props.Packages))
		return f
	}
	f.olmVersion = props.Packages[0].Version
	gvks := make([]schema.GroupVersionKind, 0, len(props.GVKs))
	for _, g := range props.GVKs {
		gvks = append(gvks, schema.GroupVersionKind{Group: g.Group, Version: g.Version, Kind: g.Kind})
	}
	f.provides = ProvidesValue(gvks)
	f.requires = RequiresValue(props.PackagesRequired, props.GVKsRequired)
	if f.version, f.err = PackageVersion(f.olmVersion); f.err != nil {
		return f
	}
	f.semver = semver.MustParse(f.version)
	if b.Image == "" {
		f.err = errors.New("the bundle names no image")
		return f
	}
	if f.class, f.err = classOf(props.Others); f.err != nil {
		return f
	}
	f.csv, f.err = csvOf(props, b.CsvJSON)
	return f
}

// typeMediaType is the property that names a bundle's format; operator-registry
// declares no constant for it (operator-controller reads it by this name).
const typeMediaType = "olm.bundle.mediatype"

// classOf is the provisioner class that installs the bundle, by its
// olm.bundle.mediatype (registry+v1 when it names none, as OLM reads it).
func classOf(others []property.Property) (string, error) {
	for _, p := range others {
		if p.Type != typeMediaType {
			continue
		}
		var mt string
		if err := json.Unmarshal(p.Value, &mt); err != nil {
			return "", fmt.Errorf("its %s property cannot be read: %w", typeMediaType, err)
		}
		switch mt {
		case "registry+v1":
			return rukpakv1alpha2.ClassRegistry, nil
		case "plain+v0":
			return rukpakv1alpha2.ClassPlain, nil
		default:
			return "", fmt.Errorf("its media type %q is neither registry+v1 nor plain+v0", mt)
		}
	}
	return rukpakv1alpha2.ClassRegistry, nil
}

func (c channelOf) packageOf(e Entry, b *bundleFacts) *datav1alpha1.Package {
	ns := b.csv.suggestedNamespace
	if ns == "" {
		ns = c.pkg.Name
	}
	ann := e.Annotations()
	ann[AnnotationImage] = b.image
	if c.ch.Name == c.pkg.DefaultChannel {
		ann[AnnotationDefaultChannel] = "true"
	}
	if b.provides != "" {
		ann[AnnotationProvides] = b.provides
	}
	if b.requires != "" {
		ann[AnnotationRequires] = b.requires
	}
	notes := ""
	if msg, ok := c.deprecated.bundle(e.Bundle); ok {
		ann[AnnotationDeprecated] = msg
		notes = "Deprecated: " + msg
	}
	p := &datav1alpha1.Package{
		TypeMeta: metav1.TypeMeta{APIVersion: datav1alpha1.SchemeGroupVersion.String(), Kind: "Package"},
		ObjectMeta: metav1.ObjectMeta{
			Name: packaging.PackageName(c.ref, b.version), Namespace: c.opts.Namespace,
			Labels: map[string]string{LabelPackage: c.pkg.Name}, Annotations: ann,
		},
		Spec: datav1alpha1.PackageSpec{
			RefName:      c.ref,
			Version:      b.version,
			ReleaseNotes: notes,
			Template:     datav1alpha1.AppTemplateSpec{Spec: AppTemplate(Install{Entry: e, Image: b.image, InstallNamespace: ns, Class: b.class})},
		},
	}
	if b.csv.createdAt != nil {
		p.Spec.ReleasedAt = *b.csv.createdAt
	}
	schema, _ := json.Marshal(valuesSchema(ns, b.csv.installModes, b.class == rukpakv1alpha2.ClassPlain))
	p.Spec.ValuesSchema.OpenAPIv3 = runtime.RawExtension{Raw: schema}
	return p
}

func (d *deprecation) bundle(name string) (string, bool) {
	if d == nil {
		return "", false
	}
	msg, ok := d.bundles[name]
	return msg, ok
}

func (c channelOf) metadataOf(head csvInfo) *datav1alpha1.PackageMetadata {
	display := head.displayName
	if display == "" {
		display = c.pkg.Name
	}
	display += ", channel " + c.ch.Name
	if c.ch.Name == c.pkg.DefaultChannel {
		display += " (default)"
	}
	short := c.pkg.Description
	if head.description != "" {
		short = head.description
	}
	long := head.longDescription
	if long == "" {
		long = c.pkg.Description
	}
	var notes []string
	if c.deprecated != nil && c.deprecated.pkg != "" {
		notes = append(notes, "Deprecated package: "+c.deprecated.pkg)
	}
	if c.deprecated != nil && c.deprecated.channels[c.ch.Name] != "" {
		notes = append(notes, "Deprecated channel: "+c.deprecated.channels[c.ch.Name])
	}
	ann := map[string]string{AnnotationChannel: c.ch.Name}
	if len(notes) > 0 {
		display += " (deprecated)"
		short = strings.Join(notes, " ") + " " + short
		long = strings.Join(notes, "\n") + "\n\n" + long
		ann[AnnotationDeprecated] = strings.Join(notes, " ")
	}
	m := &datav1alpha1.PackageMetadata{
		TypeMeta: metav1.TypeMeta{APIVersion: datav1alpha1.SchemeGroupVersion.String(), Kind: "PackageMetadata"},
		ObjectMeta: metav1.ObjectMeta{
			Name: c.ref, Namespace: c.opts.Namespace,
			Labels: map[string]string{LabelPackage: c.pkg.Name}, Annotations: ann,
		},
		Spec: datav1alpha1.PackageMetadataSpec{
			DisplayName:      display,
			ShortDescription: strings.TrimSpace(short),
			LongDescription:  strings.TrimSpace(long),
			ProviderName:     head.provider,
			Maintainers:      head.maintainers,
			Categories:       head.categories,
		},
	}
	switch {
	case head.icon != "":
		m.Spec.IconSVGBase64 = head.icon
	case c.pkg.Icon != nil && c.pkg.Icon.MediaType == "image/svg+xml":
		m.Spec.IconSVGBase64 = encodeIcon(c.pkg.Icon.Data)
	}
	return m
}

// value is one value of a catalog Package: its name, its default (a
// string, a bool or a list of strings) and the rest of its OpenAPI schema.
// The one list both schemas are made of: the Package's OpenAPI schema,
// which kctrl shows (valuesSchema), and ytt's, which renders the install
// (valuesSchemaYtt).
type value struct {
	name   string
	def    any
	schema map[string]any
}

// values are a catalog Package's values, in the order ytt's schema lists
// them; a plain bundle has no namespaces to watch.
func values(installNamespace string, modes map[string]bool, plain bool) []value {
	vs := []value{
		{"installNamespace", installNamespace, map[string]any{"type": "string",
			"description": "The namespace the bundle is installed into (spec.installNamespace)."}},
	}
	if !plain {
		vs = append(vs, value{"watchNamespaces", []string{}, watchSchema(modes)})
	}
	return append(vs,
		value{"createNamespace", true, map[string]any{"type": "boolean",
			"description": "Create the install namespace when it does not exist. Uninstalling never deletes it."}},
		value{"upgradeConstraintPolicy", PolicyCatalogProvided, map[string]any{"type": "string", "enum": []string{PolicyCatalogProvided, PolicySelfCertified},
			"description": "CatalogProvided: a new version is installed only when the channel reaches it from the installed one along its edges (replaces, skips, skipRange), one edge at a time. SelfCertified: any version, at once."}},
		value{"bundleDeploymentName", "", map[string]any{"type": "string",
			"description": "The name of the BundleDeployment the OperatorInstall writes. Empty: <PackageInstall name>.<PackageInstall namespace>."}},
		value{"installDependencies", true, map[string]any{"type": "boolean",
			"description": "Install what the bundle requires (olm.package.required, olm.gvk.required) from this catalog as PackageInstalls of their own. false: only wait until the cluster meets them."}},
		value{"upgradeApproval", ApprovalAutomatic, map[string]any{"type": "string", "enum": []string{ApprovalAutomatic, ApprovalManual},
			"description": "Automatic: a new version the PackageInstall asks for is installed. Manual: it is held (the OperatorInstall's Held and UpgradeAvailable conditions name it) until approvedVersion names it; the version installed keeps running, and a first install installs nothing before."}},
		value{"approvedVersion", "", map[string]any{"type": "string",
			"description": "With upgradeApproval: Manual, the one version an upgrade may move to; a later version waits again."}},
		value{"healthExpressions", "", map[string]any{"type": "string",
			"description": "CEL expressions that judge the health of installed objects of kinds that follow no convention: a YAML list of {apiVersion, kind, inProgress, failed, current}, set as the BundleDeployment's core.rukpak.io/health-expressions annotation. Empty: the adapter's own."}},
		value{"serviceAccountName", "", map[string]any{"type": "string",
			"description": "A ServiceAccount of rukpak-kapp's system namespace that kapp installs the bundle with (the BundleDeployment's core.rukpak.io/install-service-account). Empty: rukpak-kapp's installer account."}},
		value{"stepHealthTimeout", "", map[string]any{"type": "string",
			"description": "How long a deployed step of a walk along the channel may stay not healthy before the walk stops there (a Go duration such as 10m). Empty: the adapter's --upgrade-step-health-timeout."}},
	)
}

// ValueNames are the names of the values a catalog Package of a
// registry+v1 bundle accepts (a plain bundle's lack watchNamespaces): the
// list docs/catalogs.md's Values table keeps.
func ValueNames() []string {
	var out []string
	for _, v := range values("", nil, false) {
		out = append(out, v.name)
	}
	return out
}

// valuesSchema is the Package's OpenAPI schema of its values.
func valuesSchema(installNamespace string, modes map[string]bool, plain bool) map[string]any {
	props := map[string]any{}
	for _, v := range values(installNamespace, modes, plain) {
		prop := maps.Clone(v.schema)
		prop["default"] = v.def
		props[v.name] = prop
	}
	return map[string]any{"type": "object", "additionalProperties": false, "properties": props}
}

// watchSchema describes watchNamespaces as the bundle's install modes allow
// (modes nil: the catalog does not say, the conversion checks).
func watchSchema(modes map[string]bool) map[string]any {
	desc := "The namespaces the operator watches (spec.config.watchNamespaces of the BundleDeployment). Empty: all namespaces when the bundle supports that, else its own namespace; [\"\"] alone: all namespaces."
	watch := map[string]any{"type": "array", "items": map[string]any{"type": "string"}}
	if modes != nil {
		var supported []string
		for _, m := range []string{"AllNamespaces", "MultiNamespace", "SingleNamespace", "OwnNamespace"} {
			if modes[m] {
				supported = append(supported, m)
			}
		}
		desc += " The bundle supports: " + strings.Join(supported, ", ") + "."
		if !modes["MultiNamespace"] {
			watch["maxItems"] = 1
		}
	}
	watch["description"] = desc
	return watch
}
