package scope

import (
	"errors"
	"fmt"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/bundlefiles"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/content"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/fetch"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/status"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/translate"
)

// Step names the part of a reconcile an error came from. The packages
// return their own error types; which condition tells, and whether a retry
// can help, is decided here and nowhere else.
type Step int

const (
	// StepSource reads the bundle's source (registry, git, http, the
	// Secrets and ConfigMaps it names).
	StepSource Step = iota + 1
	// StepStore writes what the adapter keeps in the cluster (content and
	// certificate Secrets, the App).
	StepStore
)

// StepError tags an error with its step.
type StepError struct {
	Step Step
	Err  error
}

func (e *StepError) Error() string { return e.Err.Error() }
func (e *StepError) Unwrap() error { return e.Err }

// InStep is fmt.Errorf tagged with s.
func InStep(s Step, format string, args ...any) error {
	return &StepError{Step: s, Err: fmt.Errorf(format, args...)}
}

// FailureOf classifies err for the status.
func FailureOf(err error) *status.Failure {
	var (
		unsupported *translate.UnsupportedError
		invalid     *bundlefiles.InvalidError
		tagged      *StepError
	)
	switch {
	case errors.As(err, &unsupported):
		return &status.Failure{Kind: status.SpecUnsupported, Message: err.Error()}
	case errors.As(err, &invalid), errors.Is(err, content.ErrUnstorable):
		return &status.Failure{Kind: status.BundleInvalid, Message: err.Error()}
	case errors.Is(err, fetch.ErrInvalidContent):
		return &status.Failure{Kind: status.SourceFailed, Message: err.Error()}
	case errors.As(err, &tagged) && tagged.Step == StepSource:
		return &status.Failure{Kind: status.SourceFailed, Message: err.Error(), Retrying: true, NextAttempt: fetch.NextAttempt(err)}
	default:
		return &status.Failure{Kind: status.ControllerFailed, Message: err.Error(), Retrying: true, NextAttempt: fetch.NextAttempt(err)}
	}
}

// Permanent says only new content or a new spec ends err.
func Permanent(err error) bool { return !FailureOf(err).Retrying }

// Redacted keeps credentials in source URLs out of controller-runtime's
// error log, which prints every error a reconcile returns; nil stays nil.
func Redacted(err error) error {
	if err == nil {
		return nil
	}
	return redacted{err}
}

type redacted struct{ err error }

func (e redacted) Error() string { return status.Redact(e.err.Error()) }
func (e redacted) Unwrap() error { return e.err }

// UploadRefused refuses rukpak v0.16's upload source, for a Bundle on its
// own, a BundleDeployment's template and the offline render alike: its
// content lived in rukpak's own upload service, which rukpak-kapp does not
// run. then says what to do with the bundle once it is served from
// elsewhere. It is a spec the adapter cannot serve: never retried.
func UploadRefused(then string) error {
	return &translate.UnsupportedError{Reason: `source type "upload" is not served by rukpak-kapp: rukpakctl run uploaded bundles to ` +
		"rukpak v0.16's own upload service, which rukpak-kapp does not run. Serve the bundle from an image, a git repository, " +
		"an http URL or configMaps (kubectl create configmap --from-file in the system namespace) and " + then}
}
