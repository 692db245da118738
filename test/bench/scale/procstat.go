package main

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// clockTicks is USER_HZ, 100 on every Linux this runs on.
const clockTicks = 100

// cpuSeconds is a process's CPU time including the children it has waited
// for: kapp-controller's sidecar runs vendir, ytt and kapp as children.
func cpuSeconds(pid int) (float64, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, fmt.Errorf("read stat of %d: %w", pid, err)
	}
	// The command name may hold spaces; the fields after it do not.
	s := string(data)
	fields := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
	// After the name: state(0) ... utime(11) stime(12) cutime(13) cstime(14).
	var total int64
	for _, i := range []int{11, 12, 13, 14} {
		v, err := strconv.ParseInt(fields[i], 10, 64)
		if err != nil {
			return 0, fmt.Errorf("parse stat of %d: %w", pid, err)
		}
		total += v
	}
	return float64(total) / clockTicks, nil
}

// peakRSSMiB is the process's high-water resident set size.
func peakRSSMiB(pid int) (float64, error) { return statusMiB(pid, "VmHWM:") }

// rssMiB is a process's resident set now.
func rssMiB(pid int) (float64, error) { return statusMiB(pid, "VmRSS:") }

// statusMiB reads one kB field of a process's /proc status, in MiB.
func statusMiB(pid int, field string) (float64, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, fmt.Errorf("read status of %d: %w", pid, err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, field); ok {
			kb, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 64)
			if err != nil {
				return 0, fmt.Errorf("parse %s of %d: %w", field, pid, err)
			}
			return kb / 1024, nil
		}
	}
	return 0, fmt.Errorf("no %s for %d", field, pid)
}

// procSet is the processes one system is made of, by role.
type procSet map[string][]int

func (p procSet) cpu() (map[string]float64, error) { return p.sum(cpuSeconds) }

// rss adds up peaks of processes of the same role (kapp-controller's two),
// an upper bound of their joint peak.
func (p procSet) rss() (map[string]float64, error) { return p.sum(peakRSSMiB) }

func (p procSet) sum(read func(pid int) (float64, error)) (map[string]float64, error) {
	out := map[string]float64{}
	for role, pids := range p {
		for _, pid := range pids {
			v, err := read(pid)
			if err != nil {
				return nil, err
			}
			out[role] += v
		}
	}
	return out, nil
}

func sub(after, before map[string]float64) map[string]float64 {
	out := map[string]float64{}
	for k, v := range after {
		out[k] = v - before[k]
	}
	return out
}
