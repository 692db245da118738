package fetch

import (
	"context"
	"runtime"
	"runtime/metrics"
	"sync"
	"testing"
	"time"
)

// BenchmarkFetchGitCommit fetches one commit of a repository whose history
// is 64 commits of 1 MiB of incompressible data each, from the harness's git
// http-backend: from the repository as git serves it by default (a commit
// cannot be asked for by id), then from a copy that allows it. It reports
// the bytes allocated per fetch and how far the heap grew during one fetch
// (docs/benchmarks.md has the numbers).
func BenchmarkFetchGitCommit(b *testing.B) {
	hs := startHistoryServer(b, 64, 1<<20)
	last := len(hs.commits) - 1
	allowing := hs.allowingCopy(b)
	run := func(name string, opts GitOptions) {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			var peak uint64
			for b.Loop() {
				b.StopTimer()
				runtime.GC()
				stop := sampleHeap()
				b.StartTimer()
				tree, err := FetchGit(context.Background(), opts, DefaultLimits)
				b.StopTimer()
				peak = max(peak, stop())
				if err != nil {
					b.Fatal(err)
				}
				if len(tree.Files) == 0 {
					b.Fatal("no files")
				}
				b.StartTimer()
			}
			b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MiB")
		})
	}
	run("default server/first commit", hs.pin("history", hs.bundle))
	run("default server/third from head", hs.pin("history", hs.commits[last-2]))
	run("allowing server/first commit", hs.pin(allowing, hs.bundle))
}

// sampleHeap watches the heap's object bytes every millisecond until the
// returned function is called, which returns how far the heap grew above
// where it started. Sampling can miss a short peak, so this is a floor.
func sampleHeap() func() uint64 {
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	read := func() uint64 {
		metrics.Read(sample)
		return sample[0].Value.Uint64()
	}
	base := read()
	var peak uint64
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for {
			peak = max(peak, read())
			select {
			case <-done:
				return
			case <-tick.C:
			}
		}
	}()
	return func() uint64 {
		close(done)
		wg.Wait()
		peak = max(peak, read())
		if peak < base {
			return 0
		}
		return peak - base
	}
}
