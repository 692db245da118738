package kube

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"

	"sigs.k8s.io/controller-runtime/pkg/client"
)

// ErrNotServed is a read through a LateReader before what it reads is
// served.
var ErrNotServed = errors.New("not served yet")

// LateReader reads through a reader made once its API is served (a cache
// of an aggregated API, which must be served when it is made); until then
// every read fails with ErrNotServed, naming the API.
type LateReader struct {
	name string
	r    atomic.Pointer[client.Reader]
}

// NewLateReader is a LateReader of the API name (for messages).
func NewLateReader(name string) *LateReader { return &LateReader{name: name} }

// Set makes every later read go through r.
func (l *LateReader) Set(r client.Reader) { l.r.Store(&r) }

func (l *LateReader) reader() (client.Reader, error) {
	if r := l.r.Load(); r != nil {
		return *r, nil
	}
	return nil, fmt.Errorf("%s: %w", l.name, ErrNotServed)
}

// Get reads key into obj once the API is served.
func (l *LateReader) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	r, err := l.reader()
	if err != nil {
		return err
	}
	return r.Get(ctx, key, obj, opts...)
}

// List lists into list once the API is served.
func (l *LateReader) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	r, err := l.reader()
	if err != nil {
		return err
	}
	return r.List(ctx, list, opts...)
}
