package adapter

import (
	"context"
	"errors"
	"os"

	ctrl "sigs.k8s.io/controller-runtime"
)

// removingAtStop is a manager that removes the directories it made (the
// content store's, the catalog spools') once it has stopped: after its
// servers drained, so no content request still being answered loses its
// file, and on every replica, leader or not. Nothing reads them afterwards;
// the next start makes others (tests start many managers in one process).
type removingAtStop struct {
	ctrl.Manager
	dirs []string
}

func (m removingAtStop) Start(ctx context.Context) error {
	errs := []error{m.Manager.Start(ctx)}
	for _, dir := range m.dirs {
		errs = append(errs, os.RemoveAll(dir))
	}
	return errors.Join(errs...)
}
