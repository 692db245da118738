package reconciler_test

import (
	"sync"

	"github.com/go-logr/logr"
)

// reconcileCounter is a logr sink in front of the suite's logger that
// counts controller-runtime's "Reconciling" record, logged at V(5) once
// per reconcile with the controller's and the object's name, so a spec
// counts the reconciles of one BundleDeployment, whatever else the
// adapter does meanwhile. What the suite's logger would print passes on.
type reconcileCounter struct {
	next   logr.LogSink
	values []any
	counts *reconcileCounts
}

type reconcileCounts struct {
	mu sync.Mutex
	n  map[string]int
}

// bdReconciles counts the adapter's reconciles per BundleDeployment.
var bdReconciles = &reconcileCounts{n: map[string]int{}}

// countingReconciles wraps the suite's logger with bdReconciles.
func countingReconciles(l logr.Logger) logr.Logger {
	return logr.New(&reconcileCounter{next: l.GetSink(), counts: bdReconciles})
}

// reconcilesOf is how many reconciles of BundleDeployment name began.
func reconcilesOf(name string) int {
	bdReconciles.mu.Lock()
	defer bdReconciles.mu.Unlock()
	return bdReconciles.n[name]
}

func (r *reconcileCounter) Init(info logr.RuntimeInfo) { r.next.Init(info) }

// Enabled lets every level reach Info, which filters for the next sink.
func (r *reconcileCounter) Enabled(int) bool { return true }

func (r *reconcileCounter) Info(level int, msg string, kv ...any) {
	if msg == "Reconciling" {
		if ctrl, name := r.value("controller"), r.value("name"); ctrl == "bundledeployment" && name != "" {
			r.counts.mu.Lock()
			r.counts.n[name]++
			r.counts.mu.Unlock()
		}
	}
	if r.next.Enabled(level) {
		r.next.Info(level, msg, kv...)
	}
}

func (r *reconcileCounter) Error(err error, msg string, kv ...any) { r.next.Error(err, msg, kv...) }

func (r *reconcileCounter) WithValues(kv ...any) logr.LogSink {
	return &reconcileCounter{next: r.next.WithValues(kv...), values: append(append([]any{}, r.values...), kv...), counts: r.counts}
}

func (r *reconcileCounter) WithName(name string) logr.LogSink {
	return &reconcileCounter{next: r.next.WithName(name), values: r.values, counts: r.counts}
}

// value is the string value of key among the sink's values.
func (r *reconcileCounter) value(key string) string {
	for i := 0; i+1 < len(r.values); i += 2 {
		if k, ok := r.values[i].(string); ok && k == key {
			if s, ok := r.values[i+1].(string); ok {
				return s
			}
		}
	}
	return ""
}
