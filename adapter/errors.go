package adapter

import (
	"errors"
	"fmt"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/bundle"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/content"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/fetch"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/status"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/translate"
)

// step names the part of a reconcile an error came from. The packages
// return their own error types; which condition tells, and whether a retry
// can help, is decided here and nowhere else.
type step int

const (
	// stepSource reads the bundle's source (registry, git, http, the
	// Secrets and ConfigMaps it names).
	stepSource step = iota + 1
	// stepStore writes what the adapter keeps in the cluster (content and
	// certificate Secrets, the App).
	stepStore
)

// stepError tags an error with its step.
type stepError struct {
	step step
	err  error
}

func (e *stepError) Error() string { return e.err.Error() }
func (e *stepError) Unwrap() error { return e.err }

func inStep(s step, format string, args ...any) error {
	return &stepError{step: s, err: fmt.Errorf(format, args...)}
}

// failureOf classifies err for the status.
func failureOf(err error) *status.Failure {
	var (
		unsupported *translate.UnsupportedError
		invalid     *bundle.InvalidError
		tagged      *stepError
	)
	switch {
	case errors.As(err, &unsupported):
		return &status.Failure{Kind: status.SpecUnsupported, Message: err.Error()}
	case errors.As(err, &invalid), errors.Is(err, content.ErrUnstorable):
		return &status.Failure{Kind: status.BundleInvalid, Message: err.Error()}
	case errors.Is(err, fetch.ErrInvalidContent):
		return &status.Failure{Kind: status.SourceFailed, Message: err.Error()}
	case errors.As(err, &tagged) && tagged.step == stepSource:
		return &status.Failure{Kind: status.SourceFailed, Message: err.Error(), Retrying: true}
	default:
		return &status.Failure{Kind: status.ControllerFailed, Message: err.Error(), Retrying: true}
	}
}

// redacted keeps credentials in source URLs out of controller-runtime's
// error log, which prints every error a reconcile returns.
type redacted struct{ err error }

func (e redacted) Error() string { return status.Redact(e.err.Error()) }
func (e redacted) Unwrap() error { return e.err }
