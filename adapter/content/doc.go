// Package content packs bundle files into immutable Secrets that an App's
// inline fetch reads. It needs no cluster: the adapter applies what it returns.
//
// It owns nothing between calls.
package content
