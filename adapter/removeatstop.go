package adapter

import (
	"context"
	"errors"
	"os"

	ctrl "sigs.k8s.io/controller-runtime"
)

// removingAtStop is a manager that removes the content directory it made
// once it has stopped: after its servers drained, so no content request
// still being answered loses its file, and on every replica, leader or not.
// Nothing reads the directory afterwards; the next start makes another
// (tests start many managers in one process).
type removingAtStop struct {
	ctrl.Manager
	dir string
}

func (m removingAtStop) Start(ctx context.Context) error {
	return errors.Join(m.Manager.Start(ctx), os.RemoveAll(m.dir))
}
