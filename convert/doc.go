// Package convert turns an OLM registry+v1 bundle into the plain objects
// that install it. It has no cluster, no clock, and the same input
// always gives the same bytes.
//
// It owns nothing between calls and may import convert/certs only.
package convert
