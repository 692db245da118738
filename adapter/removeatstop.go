package adapter

import (
	"context"
	"os"
)

// removeAtStop removes a directory when the manager stops, leader or not.
type removeAtStop string

func (d removeAtStop) Start(ctx context.Context) error {
	<-ctx.Done()
	return os.RemoveAll(string(d))
}

func (removeAtStop) NeedLeaderElection() bool { return false }
