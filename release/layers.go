package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"encoding/pem"
	"io"
	"path"
	"sort"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"golang.org/x/crypto/x509roots/fallback/bundle"
)

// The image's user: numeric, so a kubelet can check runAsNonRoot without
// reading /etc/passwd, and not root.
const (
	imageUID = 65532
	imageGID = 65532
	binPath  = "/usr/local/bin/rukpak-kapp"
)

// file is one entry of a layer: a directory when Data is nil and Dir is set.
type file struct {
	Data []byte
	Mode int64
	Dir  bool
	UID  int
}

// layer tars files (sorted, with their parent directories, owned by root
// unless said otherwise, every time set to mtime) into a gzipped OCI layer:
// the same files always give the same digest.
func layer(files map[string]file, mtime time.Time) (v1.Layer, error) {
	all := map[string]file{}
	for name, f := range files {
		name = strings.Trim(name, "/")
		all[name] = f
		for dir := path.Dir(name); dir != "."; dir = path.Dir(dir) {
			if _, ok := all[dir]; !ok {
				all[dir] = file{Dir: true, Mode: 0o755}
			}
		}
	}
	names := make([]string, 0, len(all))
	for name := range all {
		names = append(names, name)
	}
	sort.Strings(names)
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, name := range names {
		f := all[name]
		hdr := &tar.Header{Name: name, Mode: f.Mode, ModTime: mtime, Uid: f.UID, Gid: f.UID, Format: tar.FormatPAX}
		if f.Dir {
			hdr.Typeflag, hdr.Name = tar.TypeDir, name+"/"
		} else {
			hdr.Typeflag, hdr.Size = tar.TypeReg, int64(len(f.Data))
		}
		if err := tw.WriteHeader(hdr); err != nil {
			return nil, err
		}
		if _, err := tw.Write(f.Data); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	data := buf.Bytes()
	return tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil },
		tarball.WithCompressionLevel(gzip.BestCompression), tarball.WithMediaType(types.OCILayer))
}

// baseFiles are what the binary needs beside itself: the image's user and
// group (for tools that look the user up) and the CA certificates, from the
// Go module pinned in go.mod, not from the machine that builds.
func baseFiles() map[string]file {
	return map[string]file{
		"etc/passwd":                        {Mode: 0o644, Data: []byte("root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n")},
		"etc/group":                         {Mode: 0o644, Data: []byte("root:x:0:\nnonroot:x:65532:\n")},
		"etc/ssl/certs/ca-certificates.crt": {Mode: 0o644, Data: caBundle()},
		"home/nonroot":                      {Dir: true, Mode: 0o700, UID: imageUID},
		"tmp":                               {Dir: true, Mode: 0o1777},
		"root":                              {Dir: true, Mode: 0o700},
	}
}

// caBundle is the NSS roots of golang.org/x/crypto/x509roots/fallback as
// PEM. Roots that carry a constraint (a distrust-after date) are left out:
// a PEM file cannot say it, and trusting them without it would trust more
// than NSS does.
func caBundle() []byte {
	var out []byte
	for root := range bundle.Roots() {
		if root.Constraint != nil {
			continue
		}
		out = append(out, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: root.Certificate})...)
	}
	return out
}
