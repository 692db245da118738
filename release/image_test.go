package main

import (
	"archive/tar"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"io"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/v1/mutate"
)

var testInfo = buildInfo{
	Version:  "1.2.3",
	Revision: "0123456789abcdef0123456789abcdef01234567",
	Created:  time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC),
	Source:   "https://example.com/rukpak-kapp",
}

var testPlatforms = []platform{{"linux", "amd64"}, {"linux", "arm64"}}

func testBinaries() map[platform][]byte {
	return map[platform][]byte{testPlatforms[0]: []byte("amd64 binary"), testPlatforms[1]: []byte("arm64 binary")}
}

// The image is a function of the binaries and the commit only: built twice
// (at different wall-clock times) it has one digest.
func TestImageIndex_Reproducible(t *testing.T) {
	first, err := imageIndex(testPlatforms, testBinaries(), testInfo)
	if err != nil {
		t.Fatal(err)
	}
	d1, err := first.Digest()
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(1100 * time.Millisecond)
	second, err := imageIndex(testPlatforms, testBinaries(), testInfo)
	if err != nil {
		t.Fatal(err)
	}
	d2, _ := second.Digest()
	if d1 != d2 {
		t.Fatalf("two builds of the same inputs: %s and %s", d1, d2)
	}
	other := testInfo
	other.Revision = "fedcba9876543210fedcba9876543210fedcba98"
	third, err := imageIndex(testPlatforms, testBinaries(), other)
	if err != nil {
		t.Fatal(err)
	}
	if d3, _ := third.Digest(); d3 == d1 {
		t.Fatal("a different revision gave the same digest: the annotations are not in the image")
	}
}

func TestImageIndex_ConfigAndFiles(t *testing.T) {
	idx, err := imageIndex(testPlatforms, testBinaries(), testInfo)
	if err != nil {
		t.Fatal(err)
	}
	im, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	if len(im.Manifests) != 2 || im.Manifests[0].Platform.Architecture != "amd64" || im.Manifests[1].Platform.Architecture != "arm64" {
		t.Fatalf("index manifests: %+v", im.Manifests)
	}
	if im.Annotations["org.opencontainers.image.revision"] != testInfo.Revision || im.Annotations["org.opencontainers.image.source"] != testInfo.Source {
		t.Fatalf("index annotations: %v", im.Annotations)
	}
	img, err := idx.Image(im.Manifests[1].Digest)
	if err != nil {
		t.Fatal(err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if cf.Config.User != "65532:65532" || len(cf.Config.Entrypoint) != 1 || cf.Config.Entrypoint[0] != binPath || cf.Architecture != "arm64" {
		t.Fatalf("config: %+v", cf.Config)
	}
	if !cf.Created.Time.Equal(testInfo.Created) {
		t.Fatalf("created %s, want the commit time", cf.Created)
	}
	tr := tar.NewReader(mutate.Extract(img))
	seen := map[string]*tar.Header{}
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		seen[hdr.Name] = hdr
		if !hdr.ModTime.Equal(testInfo.Created) {
			t.Errorf("%s has time %s, want the commit time", hdr.Name, hdr.ModTime)
		}
		if hdr.Name == "usr/local/bin/rukpak-kapp" {
			data, _ := io.ReadAll(tr)
			if string(data) != "arm64 binary" || hdr.Mode != 0o755 {
				t.Errorf("binary: %q mode %o", data, hdr.Mode)
			}
		}
	}
	for _, want := range []string{"usr/local/bin/rukpak-kapp", "etc/passwd", "etc/ssl/certs/ca-certificates.crt", "tmp"} {
		if seen[want] == nil {
			t.Errorf("no %s in the image", want)
		}
	}
	for name := range seen {
		if name == "bin/sh" || name == "bin" {
			t.Errorf("the image has %s: it is meant to have no shell", name)
		}
	}
}

func TestCABundle(t *testing.T) {
	data := caBundle()
	n := 0
	for {
		var block *pem.Block
		block, data = pem.Decode(data)
		if block == nil {
			break
		}
		if _, err := x509.ParseCertificate(block.Bytes); err != nil {
			t.Fatalf("certificate %d: %v", n, err)
		}
		n++
	}
	if n < 100 {
		t.Fatalf("%d CA certificates, want the NSS roots (over 100)", n)
	}
}
