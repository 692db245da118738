package scope

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/bundlefiles"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/content"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/fetch"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/status"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/translate"
)

func TestFailureOf(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name     string
		err      error
		kind     status.FailureKind
		retrying bool
	}{
		{"an unsupported spec", fmt.Errorf("translate: %w", &translate.UnsupportedError{Reason: "no"}), status.SpecUnsupported, false},
		{"an invalid bundle", &bundlefiles.InvalidError{}, status.BundleInvalid, false},
		{"content too large to store", fmt.Errorf("pack: %w", content.ErrUnstorable), status.BundleInvalid, false},
		{"content that is no bundle", &StepError{Step: StepSource, Err: fmt.Errorf("x: %w", fetch.ErrInvalidContent)}, status.SourceFailed, false},
		{"a source that failed", InStep(StepSource, "fetch: %w", errors.New("timeout")), status.SourceFailed, true},
		{"the adapter's own write", InStep(StepStore, "apply App: %w", errors.New("conflict")), status.ControllerFailed, true},
		{"anything else", errors.New("boom"), status.ControllerFailed, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := FailureOf(tt.err)
			if f.Kind != tt.kind || f.Retrying != tt.retrying || f.Message != tt.err.Error() {
				t.Errorf("FailureOf = %+v, want kind %v, retrying %v, the error's text", f, tt.kind, tt.retrying)
			}
			if Permanent(tt.err) == tt.retrying {
				t.Errorf("Permanent = %v for retrying %v", Permanent(tt.err), tt.retrying)
			}
		})
	}
}

func TestRedacted(t *testing.T) {
	t.Parallel()
	if Redacted(nil) != nil {
		t.Fatal("Redacted(nil) is not nil")
	}
	inner := errors.New("fetch https://alice:hunter2@example.com/b.tgz failed")
	err := Redacted(inner)
	if strings.Contains(err.Error(), "hunter2") || !errors.Is(err, inner) {
		t.Errorf("Redacted = %q (wraps: %v)", err, errors.Is(err, inner))
	}
}
