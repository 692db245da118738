package takeover

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"

	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
)

// Helm's storage driver keeps each revision of a release in a Secret of
// this type, named ReleaseSecretPrefix + "<release>.v<revision>", in the
// namespace rukpak calls its system namespace.
const (
	ReleaseSecretType   = "helm.sh/release.v1"
	ReleaseSecretPrefix = "sh.helm.release.v1."
)

// Helm release states that matter here.
const (
	StatusDeployed   = "deployed"
	StatusSuperseded = "superseded"
)

// maxReleaseBytes caps a decompressed release: Helm stores the chart with
// it, and a Secret holds at most 1 MiB compressed.
const maxReleaseBytes = 64 << 20

// Release is one revision of the Helm release rukpak made for a
// BundleDeployment: what it rendered (Manifest) and from what.
type Release struct {
	// Secret is the Secret it was read from.
	Secret    string
	Name      string
	Namespace string
	Version   int
	Status    string
	// Manifest is the rendered objects as rukpak applied them, after its
	// post-renderers (owner labels, owner references).
	Manifest string
	// Hooks are the names of hook objects Helm ran; they are not in Manifest.
	Hooks []string
	// Values are the values the release was installed with.
	Values map[string]any
	Chart  Chart
}

// Chart is the part of the chart a release records that the take-over reads.
type Chart struct {
	Name    string
	Version string
	// Templates and Files map a chart path to its content.
	Templates map[string][]byte
	Files     map[string][]byte
	// Subcharts are the names of dependencies rendered with it.
	Subcharts []string
}

// helmRelease is the subset of Helm's release JSON that is read.
type helmRelease struct {
	Name      string         `json:"name"`
	Namespace string         `json:"namespace"`
	Version   int            `json:"version"`
	Manifest  string         `json:"manifest"`
	Config    map[string]any `json:"config"`
	Info      struct {
		Status string `json:"status"`
	} `json:"info"`
	Hooks []struct {
		Name string `json:"name"`
		Kind string `json:"kind"`
	} `json:"hooks"`
	Chart *helmChart `json:"chart"`
}

type helmChart struct {
	Metadata struct {
		Name    string `json:"name"`
		Version string `json:"version"`
	} `json:"metadata"`
	Templates    []helmFile   `json:"templates"`
	Files        []helmFile   `json:"files"`
	Dependencies []*helmChart `json:"dependencies"`
}

type helmFile struct {
	Name string `json:"name"`
	Data []byte `json:"data"`
}

// DecodeRelease reads a release Secret in Helm's storage format: the
// Secret's "release" key holds base64 of the gzipped release JSON.
func DecodeRelease(secret *corev1.Secret) (*Release, error) {
	raw, ok := secret.Data["release"]
	if !ok {
		return nil, fmt.Errorf("release secret %s has no release key", secret.Name)
	}
	decoded := make([]byte, base64.StdEncoding.DecodedLen(len(raw)))
	n, err := base64.StdEncoding.Decode(decoded, raw)
	if err != nil {
		return nil, fmt.Errorf("release secret %s: decode base64: %w", secret.Name, err)
	}
	data := decoded[:n]
	// Helm writes gzip; older Helm wrote plain JSON, which it still reads.
	if bytes.HasPrefix(data, []byte{0x1f, 0x8b}) {
		zr, err := gzip.NewReader(bytes.NewReader(data))
		if err != nil {
			return nil, fmt.Errorf("release secret %s: %w", secret.Name, err)
		}
		data, err = io.ReadAll(io.LimitReader(zr, maxReleaseBytes+1))
		if err != nil {
			return nil, fmt.Errorf("release secret %s: decompress: %w", secret.Name, err)
		}
		if len(data) > maxReleaseBytes {
			return nil, fmt.Errorf("release secret %s decompresses to more than %d MiB", secret.Name, maxReleaseBytes>>20)
		}
	}
	var hr helmRelease
	if err := json.Unmarshal(data, &hr); err != nil {
		return nil, fmt.Errorf("release secret %s: %w", secret.Name, err)
	}
	rel := &Release{
		Secret: secret.Name, Name: hr.Name, Namespace: hr.Namespace, Version: hr.Version,
		Status: hr.Info.Status, Manifest: hr.Manifest, Values: hr.Config,
	}
	for _, h := range hr.Hooks {
		rel.Hooks = append(rel.Hooks, h.Kind+"/"+h.Name)
	}
	if hr.Chart != nil {
		rel.Chart = chartOf(hr.Chart)
	}
	return rel, nil
}

func chartOf(c *helmChart) Chart {
	out := Chart{Name: c.Metadata.Name, Version: c.Metadata.Version, Templates: map[string][]byte{}, Files: map[string][]byte{}}
	for _, t := range c.Templates {
		out.Templates[t.Name] = t.Data
	}
	for _, f := range c.Files {
		out.Files[f.Name] = f.Data
	}
	for _, d := range c.Dependencies {
		if d != nil {
			out.Subcharts = append(out.Subcharts, d.Metadata.Name)
			// A subchart's templates render with the parent; scan them too.
			for name, data := range chartOf(d).Templates {
				out.Templates["charts/"+d.Metadata.Name+"/"+name] = data
			}
		}
	}
	return out
}

// ReleaseSecrets picks bd's release Secrets out of the system namespace's
// Secrets: Helm's type and name, and owned by this BundleDeployment (a
// Secret left by an earlier BundleDeployment of the same name is not its
// history). They are sorted by revision.
func ReleaseSecrets(bd *rukpakv1alpha2.BundleDeployment, secrets []corev1.Secret) []corev1.Secret {
	prefix := ReleaseSecretPrefix + bd.Name + ".v"
	var out []corev1.Secret
	for _, s := range secrets {
		rev, ok := strings.CutPrefix(s.Name, prefix)
		if !ok || string(s.Type) != ReleaseSecretType {
			continue
		}
		if _, err := strconv.Atoi(rev); err != nil {
			continue
		}
		if !ownedBy(s.OwnerReferences, bd) {
			continue
		}
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return revision(out[i].Name) < revision(out[j].Name) })
	return out
}

func revision(name string) int {
	i := strings.LastIndex(name, ".v")
	n, _ := strconv.Atoi(name[i+2:])
	return n
}

// ErrNoRelease says rukpak never recorded a release for a BundleDeployment.
var ErrNoRelease = errors.New("rukpak has no Helm release for this BundleDeployment")

// CurrentRelease is the newest revision: what rukpak installed last.
func CurrentRelease(secrets []corev1.Secret) (*Release, error) {
	if len(secrets) == 0 {
		return nil, ErrNoRelease
	}
	return DecodeRelease(&secrets[len(secrets)-1])
}
