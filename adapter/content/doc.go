// Package content packs bundle files into immutable Secrets that an App's
// inline fetch reads. It is pure: the adapter applies what it returns.
//
// It owns nothing between calls.
//
// May import (this module): nothing.
package content
