package fetch

import (
	"errors"
	"fmt"
	"sync"
)

// SpoolBudget bounds the bytes the catalog spools of one process hold on
// disk together (the adapter's spool volume is one emptyDir for every
// OperatorCatalog): a spool takes what it writes and gives it back when it
// is closed.
type SpoolBudget struct {
	mu        sync.Mutex
	max, used int64
}

// NewSpoolBudget is a budget of max bytes.
func NewSpoolBudget(max int64) *SpoolBudget { return &SpoolBudget{max: max} }

// spoolFull is a spool the budget refused more bytes: alone, it would be
// over the whole budget (that catalog never fits), or it does not fit
// alongside the other spools (a failure to retry: they may be closed).
type spoolFull struct {
	alone       bool
	others, max int64
}

func (e *spoolFull) Error() string {
	if e.alone {
		return fmt.Sprintf("its catalog files are over the %d bytes that catalog spools may hold on the adapter's disk together (--catalog-spool-max-bytes)", e.max)
	}
	return fmt.Sprintf("its catalog files do not fit alongside the other catalogs' on the adapter's disk: their spools hold %d of the %d bytes catalog spools may hold together (--catalog-spool-max-bytes)", e.others, e.max)
}

// ErrSpoolFull is a catalog that does not fit alongside the other spools,
// and may once they are closed.
var ErrSpoolFull = errors.New("the catalog spools are full")

// Unwrap makes a catalog that never fits invalid content, one that does
// not fit now ErrSpoolFull.
func (e *spoolFull) Unwrap() error {
	if e.alone {
		return ErrInvalidContent
	}
	return ErrSpoolFull
}

// take reserves n bytes more for a spool that holds held already.
func (b *SpoolBudget) take(n, held int64) error {
	if b == nil {
		return nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if held+n > b.max || b.used+n > b.max {
		return &spoolFull{alone: held+n > b.max, others: b.used - held, max: b.max}
	}
	b.used += n
	return nil
}

// give returns n bytes.
func (b *SpoolBudget) give(n int64) {
	if b == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.used -= n
}

// Used is what the spools hold now.
func (b *SpoolBudget) Used() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.used
}
