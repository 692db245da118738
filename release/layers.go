package main

import (
	"encoding/pem"

	"golang.org/x/crypto/x509roots/fallback/bundle"

	"github.com/rukpak-kapp/rukpak-kapp/ocibundle"
)

// The image's user: numeric, so a kubelet can check runAsNonRoot without
// reading /etc/passwd, and not root.
const (
	imageUID = 65532
	imageGID = 65532
	binPath  = "/usr/local/bin/rukpak-kapp"
)

// baseFiles are what the binary needs alongside itself: the image's user and
// group (for tools that look the user up) and the CA certificates, from the
// Go module pinned in go.mod, not from the machine that builds.
func baseFiles() map[string]ocibundle.File {
	return map[string]ocibundle.File{
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
