package fetch

import (
	"context"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/v1/random"

	"github.com/rukpak-kapp/rukpak-kapp/test/harness"
	"github.com/rukpak-kapp/rukpak-kapp/test/tarball"
)

// testSource names the config in the tests' errors.
const testSource = "the ConfigMap test/kapp-controller-config"

func TestParseNetwork(t *testing.T) {
	t.Parallel()
	ca, err := harness.NewTestCA("network test CA")
	if err != nil {
		t.Fatal(err)
	}
	proxy := "http://proxy.corp:3128"
	tests := []struct {
		name string
		data map[string]string
		// proxied maps a URL to the proxy it goes through ("" for none).
		proxied map[string]string
		skips   map[string]bool
		wantErr []string
		// notInErr must never be in the error: credentials.
		notInErr string
	}{
		{name: "empty: no proxy, nothing skipped", data: map[string]string{},
			proxied: map[string]string{"https://git.corp/r.git": ""}, skips: map[string]bool{"git.corp": false}},
		{name: "proxies with noProxy", data: map[string]string{"httpProxy": proxy, "httpsProxy": proxy, "noProxy": "internal.corp,.svc,10.0.0.0/8"},
			proxied: map[string]string{
				"https://git.corp/r.git":      proxy,
				"http://files.corp/b.tgz":     proxy,
				"https://internal.corp/r.git": "",
				"https://a.ns.svc/x":          "",
				"https://10.1.2.3/x":          "",
			}},
		{name: "an https proxy only for https", data: map[string]string{"httpsProxy": proxy},
			proxied: map[string]string{"https://git.corp/r.git": proxy, "http://files.corp/b.tgz": ""}},
		{name: "a bare host:port proxy is http", data: map[string]string{"httpsProxy": "proxy.corp:3128"},
			proxied: map[string]string{"https://git.corp/r.git": proxy}},
		{name: "the API server's placeholder in noProxy", data: map[string]string{"httpsProxy": proxy, "noProxy": "KAPPCTRL_KUBERNETES_SERVICE_HOST"},
			proxied: map[string]string{"https://10.96.0.1/x": "", "https://git.corp/x": proxy}},
		{name: "hosts not verified: the host or the whole authority", data: map[string]string{"dangerousSkipTLSVerify": "registry.corp, git.corp:8443"},
			skips: map[string]bool{"registry.corp": true, "registry.corp:5000": true, "git.corp:8443": true, "git.corp": false, "git.corp:443": false, "other.corp": false}},
		{name: "caCerts with a certificate", data: map[string]string{"caCerts": string(ca.PEM)}},
		{name: "caCerts without one", data: map[string]string{"caCerts": "not a certificate"},
			wantErr: []string{testSource + ", which the adapter's fetches follow as kapp-controller's do, cannot be used: caCerts holds no PEM certificate"}},
		{name: "every problem, on one line", data: map[string]string{"caCerts": "garbage", "httpProxy": "ftp://proxy.corp", "httpsProxy": "ftp://proxy.corp"},
			wantErr: []string{"cannot be used: caCerts holds no PEM certificate; httpProxy is not a proxy URL: scheme \"ftp\" is not http, https or socks5; httpsProxy is not a proxy URL"}},
		{name: "a proxy that is no URL never repeats its password", data: map[string]string{"httpsProxy": "ftp://user:s3cret@proxy.corp"},
			wantErr: []string{"cannot be used: httpsProxy is not a proxy URL", `scheme "ftp"`}, notInErr: "s3cret"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			n := ParseNetwork(testSource, tt.data, "10.96.0.1")
			err := n.Err()
			if len(tt.wantErr) == 0 && err != nil {
				t.Fatalf("error %v", err)
			}
			for _, w := range tt.wantErr {
				if err == nil || !strings.Contains(err.Error(), w) {
					t.Fatalf("error %v, want %q", err, w)
				}
			}
			if err != nil && strings.Contains(err.Error(), "\n") {
				t.Fatalf("error %q spans lines; a condition message is one", err)
			}
			if tt.notInErr != "" && strings.Contains(err.Error(), tt.notInErr) {
				t.Fatalf("error %q repeats a credential", err)
			}
			for raw, want := range tt.proxied {
				u, _ := url.Parse(raw)
				got, err := n.ProxyFor(u)
				if err != nil {
					t.Fatal(err)
				}
				if (got == nil && want != "") || (got != nil && got.String() != want) {
					t.Errorf("%s through %v, want %q", raw, got, want)
				}
			}
			for authority, want := range tt.skips {
				if got := n.SkipsVerify(authority); got != want {
					t.Errorf("SkipsVerify(%s) = %v, want %v", authority, got, want)
				}
			}
		})
	}
}

// TestFetchThroughNetwork fetches from a real git server, file server and
// registry that serve TLS from a CA only kapp-controller-config names, and
// through a real proxy to names only it reaches, as each fetcher does it.
func TestFetchThroughNetwork(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ca, err := harness.NewTestCA("company CA")
	if err != nil {
		t.Fatal(err)
	}
	files, err := harness.StartFileServer("", "", ca)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(files.Stop)
	plainFiles, err := harness.StartFileServer("", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(plainFiles.Stop)
	gitServer, err := harness.StartGitServer(t.TempDir(), "", "", ca)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(gitServer.Stop)
	reg, err := harness.StartTLSRegistry()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(reg.Stop)
	proxy, err := harness.StartProxy()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(proxy.Stop)

	archive := tarball.Of(t, map[string]string{"manifests/cm.yaml": "kind: ConfigMap"})
	httpsURL := files.Put("/b.tgz", archive)
	plainFiles.Put("/b.tgz", archive)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "cm.yaml"), []byte("kind: ConfigMap"), 0o644); err != nil {
		t.Fatal(err)
	}
	repo, err := gitServer.NewRepo("bundle", dir, "manifests")
	if err != nil {
		t.Fatal(err)
	}
	img, err := random.Image(64, 1)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := reg.PushImage(img, "network/bundle:v1"); err != nil {
		t.Fatal(err)
	}
	imageRef := reg.Host + "/network/bundle:v1"

	// The same servers under names only the proxy reaches.
	proxiedHTTPS := "https://" + harness.ProxiedHost("files", files.Host) + "/b.tgz"
	proxiedHTTP := "http://" + harness.ProxiedHost("files", plainFiles.Host) + "/b.tgz"
	proxiedGit := strings.Replace(repo.URL, gitServer.Host, harness.ProxiedHost("git", gitServer.Host), 1)
	proxiedImage := harness.ProxiedHost("registry", reg.Host) + "/network/bundle:v1"

	trusting := ParseNetwork(testSource, map[string]string{"caCerts": string(ca.PEM) + "\n" + string(reg.CA.PEM)}, "")
	proxied := ParseNetwork(testSource, map[string]string{"caCerts": string(ca.PEM) + "\n" + string(reg.CA.PEM), "httpProxy": proxy.URL, "httpsProxy": proxy.URL}, "")
	bypassing := ParseNetwork(testSource, map[string]string{"caCerts": string(ca.PEM), "httpsProxy": proxy.URL, "noProxy": "." + harness.ProxiedDomain}, "")
	skipping := ParseNetwork(testSource, map[string]string{"dangerousSkipTLSVerify": strings.Split(reg.Host, ":")[0] + "," + gitServer.Host + "," + files.Host}, "")
	broken := ParseNetwork(testSource, map[string]string{"caCerts": "garbage"}, "")
	companyOnly := ParseNetwork(testSource, map[string]string{"caCerts": string(ca.PEM)}, "")

	fetchHTTP := func(n *Network, u string) error {
		_, err := FetchHTTP(ctx, u, HTTPOptions{Network: n}, DefaultLimits)
		return err
	}
	fetchGit := func(n *Network, u string) error {
		tree, err := FetchGit(ctx, GitOptions{Repository: u, Branch: "main", Directory: "manifests", Network: n}, DefaultLimits)
		if err == nil && tree.Files["cm.yaml"] == nil {
			t.Errorf("git %s: files %v", u, tree.Files)
		}
		if err == nil {
			_, err = RemoteHead(ctx, GitOptions{Repository: u, Branch: "main", Network: n})
		}
		return err
	}
	fetchImage := func(n *Network, ref string) error {
		_, err := FetchImage(ctx, ref, ImageOptions{Network: n}, DefaultLimits, nil)
		if err == nil {
			_, err = ResolveImage(ctx, ref, ImageOptions{Network: n})
		}
		return err
	}
	fetchImageOwnCA := func(n *Network, ref string) error {
		_, err := FetchImage(ctx, ref, ImageOptions{Network: n, CAData: string(reg.CA.PEM)}, DefaultLimits, nil)
		return err
	}
	tests := []struct {
		name    string
		fetch   func(*Network, string) error
		network *Network
		source  string
		wantErr string
		// via is the authority the proxy must have carried; notVia one it
		// must not have.
		via, notVia string
	}{
		{name: "https archive, the CA unknown", fetch: fetchHTTP, source: httpsURL, wantErr: "certificate signed by unknown authority"},
		{name: "https archive, caCerts", fetch: fetchHTTP, network: trusting, source: httpsURL},
		{name: "https archive, not verified: http archives never skip, as kapp-controller's", fetch: fetchHTTP, network: skipping, source: httpsURL, wantErr: "certificate signed by unknown authority"},
		{name: "https archive through the proxy", fetch: fetchHTTP, network: proxied, source: proxiedHTTPS, via: harness.ProxiedHost("files", files.Host)},
		{name: "http archive through the proxy", fetch: fetchHTTP, network: proxied, source: proxiedHTTP, via: harness.ProxiedHost("files", plainFiles.Host)},
		{name: "https archive, noProxy bypasses the proxy", fetch: fetchHTTP, network: bypassing, source: proxiedHTTPS, wantErr: "lookup files." + harness.ProxiedDomain, notVia: harness.ProxiedHost("files", files.Host)},
		{name: "a broken config says what to fix", fetch: fetchHTTP, network: broken, source: httpsURL, wantErr: testSource + ", which the adapter's fetches follow as kapp-controller's do, cannot be used: caCerts holds no PEM certificate"},
		{name: "git over https, the CA unknown", fetch: fetchGit, source: repo.URL, wantErr: "certificate signed by unknown authority"},
		{name: "git over https, caCerts", fetch: fetchGit, network: trusting, source: repo.URL},
		{name: "git over https, not verified", fetch: fetchGit, network: skipping, source: repo.URL},
		{name: "git through the proxy", fetch: fetchGit, network: proxied, source: proxiedGit, via: harness.ProxiedHost("git", gitServer.Host)},
		{name: "git, noProxy bypasses the proxy", fetch: fetchGit, network: bypassing, source: proxiedGit, wantErr: "lookup git." + harness.ProxiedDomain, notVia: harness.ProxiedHost("git", gitServer.Host)},
		{name: "image, the CA unknown", fetch: fetchImage, source: imageRef, wantErr: "certificate signed by unknown authority"},
		{name: "image, caCerts", fetch: fetchImage, network: trusting, source: imageRef},
		{name: "image, its own certificateData alongside the config's CAs", fetch: fetchImageOwnCA, network: companyOnly, source: imageRef},
		{name: "image, the config's CAs alone: certificateData went into a copy", fetch: fetchImage, network: companyOnly, source: imageRef, wantErr: "certificate signed by unknown authority"},
		{name: "image, the registry not verified", fetch: fetchImage, network: skipping, source: imageRef},
		{name: "image through the proxy", fetch: fetchImage, network: proxied, source: proxiedImage, via: harness.ProxiedHost("registry", reg.Host)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before, beforeNot := proxy.Carried(tt.via), proxy.Carried(tt.notVia)
			err := tt.fetch(tt.network, tt.source)
			switch {
			case tt.wantErr == "" && err != nil:
				t.Fatalf("fetch %s: %v", tt.source, err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Fatalf("fetch %s: error %v, want %q", tt.source, err, tt.wantErr)
			}
			if tt.via != "" && proxy.Carried(tt.via) == before {
				t.Errorf("the proxy carried nothing to %s", tt.via)
			}
			if tt.notVia != "" && proxy.Carried(tt.notVia) != beforeNot {
				t.Errorf("the proxy carried a request to %s, which noProxy names", tt.notVia)
			}
		})
	}
}
