package harness

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// process is a child started by the harness, its output kept in a log file
// so a failing test can point at it.
type process struct {
	name    string
	cmd     *exec.Cmd
	logPath string
	done    chan struct{}
	err     error
}

func startProcess(name, dir string, env []string, logDir, bin string, args ...string) (*process, error) {
	return startProcessWith(name, dir, env, logDir, &syscall.SysProcAttr{}, bin, args...)
}

// startProcessWith is startProcess with attributes of its own (namespaces);
// the process group and the parent-death signal are always set.
func startProcessWith(name, dir string, env []string, logDir string, attr *syscall.SysProcAttr, bin string, args ...string) (*process, error) {
	logPath := filepath.Join(logDir, name+".log")
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open log for %s: %w", name, err)
	}
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	cmd.Env = env
	cmd.Stdout = logFile
	cmd.Stderr = logFile
	// A process group lets Stop end the children a tool spawns (git, helm).
	attr.Setpgid, attr.Pdeathsig = true, syscall.SIGKILL
	cmd.SysProcAttr = attr
	if err := cmd.Start(); err != nil {
		logFile.Close()
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	p := &process{name: name, cmd: cmd, logPath: logPath, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		logFile.Close()
		close(p.done)
	}()
	return p, nil
}

// Pid is the process's id, 0 when it never started.
func (p *process) Pid() int {
	if p == nil || p.cmd.Process == nil {
		return 0
	}
	return p.cmd.Process.Pid
}

// Stop ends the process group: SIGTERM, then SIGKILL after the grace period.
func (p *process) Stop(grace time.Duration) {
	if p == nil {
		return
	}
	select {
	case <-p.done:
		return
	default:
	}
	_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(grace):
		_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
		<-p.done
	}
}

// Kill ends the process at once, as a crash would.
func (p *process) Kill() {
	_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
	<-p.done
}

// Exited reports whether the process ended, and how.
func (p *process) Exited() (bool, error) {
	select {
	case <-p.done:
		return true, p.err
	default:
		return false, nil
	}
}

// logTail is the last n lines of the process's log.
func (p *process) logTail(n int) string {
	data, err := os.ReadFile(p.logPath)
	if err != nil {
		return "(unreadable: " + err.Error() + ")"
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	return strings.Join(lines[max(len(lines)-n, 0):], " | ")
}

// boundTaken says the process exited because its port was taken.
func (p *process) boundTaken() bool {
	if p == nil {
		return false
	}
	exited, _ := p.Exited()
	return exited && strings.Contains(p.logTail(20), "address already in use")
}

// waitFor polls check until it succeeds, the process dies or time runs out.
func (p *process) waitFor(ctx context.Context, timeout time.Duration, what string, check func() error) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var last error
	for {
		if last = check(); last == nil {
			return nil
		}
		if exited, err := p.Exited(); exited {
			// The log's end is the cause, and the harness's directory
			// (with the log) is gone when the suite ends.
			return fmt.Errorf("%s exited before %s (%v); its log ends: %s; see %s", p.name, what, err, p.logTail(5), p.logPath)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s: %s not reached within %s: %w; see %s", p.name, what, timeout, last, p.logPath)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// freePort asks the kernel for an unused loopback port.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func freePorts(n int) ([]int, error) {
	var ports []int
	var errs []error
	for range n {
		p, err := freePort()
		errs = append(errs, err)
		ports = append(ports, p)
	}
	return ports, errors.Join(errs...)
}

func itoa(i int) string { return strconv.Itoa(i) }

var errNotYet = errors.New("not yet")
