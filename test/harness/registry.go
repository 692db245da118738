package harness

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"io/fs"
	"log"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync/atomic"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// Registry is an OCI registry on loopback, optionally behind basic auth.
// Clients speak plain HTTP to it: 127.0.0.1 registries are HTTP by default
// for go-containerregistry, and so for imgpkg inside vendir.
type Registry struct {
	Host     string
	Username string
	Password string
	// CA is set when the registry serves TLS.
	CA     *TestCA
	server *http.Server
	// Traffic is what the registry received.
	Traffic *Traffic
	// addr is where it listens, which Host names unless a host name was
	// given.
	addr string
	// fenced: every request is refused and counted in fencedOff.
	fenced    atomic.Bool
	fencedOff atomic.Int64
	// rate, when set, is how many bytes a second each blob download gets;
	// blobs counts the downloads under way, blobsPeak the most at once.
	rate      atomic.Int64
	blobs     atomic.Int32
	blobsPeak atomic.Int32
}

// Throttle makes each blob download get bytesPerSecond (0: as fast as
// loopback goes), as a registry far away or a slow link does.
func (r *Registry) Throttle(bytesPerSecond int64) { r.rate.Store(bytesPerSecond) }

// BlobsPeak is the most blob downloads that ran at once.
func (r *Registry) BlobsPeak() int { return int(r.blobsPeak.Load()) }

// serveBlob serves a blob download through next, counted, at the
// throttled rate.
func (r *Registry) serveBlob(next http.Handler, w http.ResponseWriter, req *http.Request) {
	now := r.blobs.Add(1)
	defer r.blobs.Add(-1)
	for {
		peak := r.blobsPeak.Load()
		if now <= peak || r.blobsPeak.CompareAndSwap(peak, now) {
			break
		}
	}
	if rate := r.rate.Load(); rate > 0 {
		w = &throttled{ResponseWriter: w, rate: rate}
	}
	next.ServeHTTP(w, req)
}

// throttled writes at most rate bytes a second, in chunks of a tenth of it.
type throttled struct {
	http.ResponseWriter
	rate int64
}

func (t *throttled) Write(p []byte) (int, error) {
	chunk := max(int(t.rate/10), 1)
	n := 0
	for len(p) > 0 {
		part := p[:min(chunk, len(p))]
		m, err := t.ResponseWriter.Write(part)
		n += m
		if err != nil {
			return n, err
		}
		p = p[m:]
		time.Sleep(time.Duration(int64(m) * int64(time.Second) / t.rate))
	}
	return n, nil
}

// Fence makes the registry unreachable as a registry behind an air gap is
// to what runs inside it, and keeps counting what still asks it
// (FencedOff): stopped, it could not show that nothing did.
func (r *Registry) Fence() { r.fenced.Store(true) }

// FencedOff counts the requests refused since Fence.
func (r *Registry) FencedOff() int64 { return r.fencedOff.Load() }

// StartRegistry serves a registry on a free loopback port. With a username
// every request needs basic auth.
func StartRegistry(username, password string) (*Registry, error) {
	return startRegistry(username, password, nil)
}

// StartTLSRegistry serves a registry over TLS with a certificate from a
// fresh test CA, which clients must be told to trust.
func StartTLSRegistry() (*Registry, error) {
	ca, err := NewTestCA("rukpak-kapp test registry CA")
	if err != nil {
		return nil, err
	}
	return startRegistry("", "", ca)
}

func startRegistry(username, password string, ca *TestCA) (*Registry, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("listen for registry: %w", err)
	}
	return serveRegistry(l, "", username, password, ca)
}

// serveRegistry serves a registry on l. A host name (name:port) is what
// references and credentials name instead of l's address, and what its
// certificate is for; the harness itself pushes to l's address.
func serveRegistry(l net.Listener, host, username, password string, ca *TestCA) (*Registry, error) {
	r := &Registry{}
	var h http.Handler = registry.New(registry.Logger(log.New(io.Discard, "", 0)))
	served := h
	h = http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if r.fenced.Load() {
			r.fencedOff.Add(1)
			http.Error(w, `{"errors":[{"code":"UNAVAILABLE","message":"this registry is behind the fence"}]}`, http.StatusServiceUnavailable)
			return
		}
		if req.Method == http.MethodGet && strings.Contains(req.URL.Path, "/blobs/") {
			r.serveBlob(served, w, req)
			return
		}
		served.ServeHTTP(w, req)
	})
	if username != "" {
		inner := h
		h = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if u, p, ok := r.BasicAuth(); !ok || u != username || p != password {
				w.Header().Set("WWW-Authenticate", `Basic realm="rukpak-kapp-test"`)
				http.Error(w, `{"errors":[{"code":"UNAUTHORIZED","message":"authentication required"}]}`, http.StatusUnauthorized)
				return
			}
			inner.ServeHTTP(w, r)
		})
	}
	*r = Registry{Host: l.Addr().String(), Username: username, Password: password, CA: ca, server: &http.Server{Handler: h}, addr: l.Addr().String(), Traffic: newTraffic()}
	r.Traffic.watch(r.server)
	var names []string
	if host != "" {
		// name:port, or a name alone for a TLS registry on 443.
		r.Host = host
		name, _, err := net.SplitHostPort(host)
		if err != nil {
			if ca == nil || strings.Contains(host, ":") {
				return nil, fmt.Errorf("registry host %q: %w", host, err)
			}
			name = host
		}
		names = append(names, name)
	}
	if ca != nil {
		cfg, err := ca.ServerConfigFor(append(names, "localhost", "*."+ProxiedDomain)...)
		if err != nil {
			return nil, err
		}
		r.server.TLSConfig = cfg
		go func() { _ = r.server.ServeTLS(l, "", "") }()
		return r, nil
	}
	go func() { _ = r.server.Serve(l) }()
	return r, nil
}

// Stop closes the registry.
func (r *Registry) Stop() { _ = r.server.Close() }

// PushDir pushes dir as a one-layer image to repo:tag on this registry and
// returns the reference by tag and the digest.
func (r *Registry) PushDir(dir, repoTag string) (string, v1.Hash, error) {
	layer, err := layerFromDir(dir)
	if err != nil {
		return "", v1.Hash{}, err
	}
	img, err := mutate.AppendLayers(empty.Image, layer)
	if err != nil {
		return "", v1.Hash{}, fmt.Errorf("build image: %w", err)
	}
	return r.PushImage(img, repoTag)
}

// PushLayers pushes an image of one layer per directory (the first at the
// bottom), with labels in its configuration, as a Dockerfile of one ADD a
// directory builds it on a base image: a catalog image on opm's base layer.
func (r *Registry) PushLayers(repoTag string, labels map[string]string, dirs ...string) (string, v1.Hash, error) {
	var layers []v1.Layer
	for _, dir := range dirs {
		layer, err := layerFromDir(dir)
		if err != nil {
			return "", v1.Hash{}, err
		}
		layers = append(layers, layer)
	}
	img, err := mutate.AppendLayers(empty.Image, layers...)
	if err != nil {
		return "", v1.Hash{}, fmt.Errorf("build image: %w", err)
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		return "", v1.Hash{}, err
	}
	cfg = cfg.DeepCopy()
	cfg.Config.Labels = labels
	if img, err = mutate.ConfigFile(img, cfg); err != nil {
		return "", v1.Hash{}, fmt.Errorf("build image: %w", err)
	}
	return r.PushImage(img, repoTag)
}

// PushImage pushes img to repo:tag on this registry.
func (r *Registry) PushImage(img v1.Image, repoTag string) (string, v1.Hash, error) {
	ref := r.Host + "/" + repoTag
	var opts []name.Option
	if r.CA == nil {
		opts = append(opts, name.Insecure)
	}
	tag, err := name.NewTag(ref, opts...)
	if err != nil {
		return "", v1.Hash{}, fmt.Errorf("parse %s: %w", ref, err)
	}
	auth := authn.Anonymous
	if r.Username != "" {
		auth = &authn.Basic{Username: r.Username, Password: r.Password}
	}
	transport := remote.DefaultTransport.(*http.Transport).Clone()
	if r.addr != r.Host {
		// Host's name resolves only in the adapter's and kapp-controller's
		// view of the network.
		dialer := &net.Dialer{}
		hostPort := r.Host
		if !strings.Contains(hostPort, ":") {
			hostPort += ":443"
		}
		transport.DialContext = func(ctx context.Context, network, address string) (net.Conn, error) {
			if address == hostPort {
				address = r.addr
			}
			return dialer.DialContext(ctx, network, address)
		}
	}
	if r.CA != nil {
		transport.TLSClientConfig = &tls.Config{MinVersion: tls.VersionTLS12, RootCAs: r.CA.Pool()}
	}
	if err := remote.Write(tag, img, remote.WithAuth(auth), remote.WithTransport(transport)); err != nil {
		return "", v1.Hash{}, fmt.Errorf("push %s: %w", ref, err)
	}
	digest, err := img.Digest()
	return ref, digest, err
}

// DockerConfigJSON is a .dockerconfigjson for this registry's credentials.
func (r *Registry) DockerConfigJSON() []byte {
	return fmt.Appendf(nil, `{"auths":{%q:{"username":%q,"password":%q}}}`, r.Host, r.Username, r.Password)
}

// layerFromDir tars dir into a gzipped layer, so the same directory always
// gives the same digest.
func layerFromDir(dir string) (v1.Layer, error) {
	data, err := TarGz(dir)
	if err != nil {
		return nil, err
	}
	return tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil })
}

// TarGz is dir as a gzipped tarball (sorted entries, no times), the layout
// rukpak's http source takes and the single layer of a bundle image.
func TarGz(dir string) ([]byte, error) {
	var paths []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		// rukpak built its test images with a .dockerignore that left
		// .gitignore placeholders out; do the same.
		if p != dir && d.Name() != ".gitignore" {
			paths = append(paths, p)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("walk %s: %w", dir, err)
	}
	sort.Strings(paths)
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	for _, p := range paths {
		rel, _ := filepath.Rel(dir, p)
		info, err := os.Stat(p)
		if err != nil {
			return nil, err
		}
		hdr := &tar.Header{Name: filepath.ToSlash(rel), Mode: 0o644, Typeflag: tar.TypeReg, Size: info.Size()}
		if info.IsDir() {
			hdr = &tar.Header{Name: filepath.ToSlash(rel) + "/", Mode: 0o755, Typeflag: tar.TypeDir}
		}
		if err := tw.WriteHeader(hdr); err != nil {
			return nil, err
		}
		if !info.IsDir() {
			data, err := os.ReadFile(p)
			if err != nil {
				return nil, err
			}
			if _, err := tw.Write(data); err != nil {
				return nil, err
			}
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	if err := gz.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
