// Package fetch fetches bundle content that kapp-controller cannot fetch by
// itself, such as images behind a per-BundleDeployment CA. It knows about
// registries and archives, not about conditions.
//
// It owns the digest cache of images (DigestCache).
//
// May import (this module): adapter/fetch/unpack.
package fetch
