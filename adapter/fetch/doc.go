// Package fetch fetches bundle content that kapp-controller cannot fetch by
// itself, such as images behind a per-BundleDeployment CA. It knows about
// registries and archives, not about conditions.
//
// It owns the digest cache of images (DigestCache), and how servers are
// reached beyond what a source says (Network: kapp-controller-config's CAs,
// proxies and hosts not verified, parsed as kapp-controller parses them).
//
// May import (this module): adapter/fetch/unpack.
package fetch
