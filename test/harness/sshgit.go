package harness

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/binary"
	"encoding/pem"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"

	"golang.org/x/crypto/ssh"
)

// SSHGitServer serves a GitServer's repositories over ssh on loopback: any
// user name, one client key, and only git-upload-pack (clone and fetch),
// which runs the real git.
type SSHGitServer struct {
	Host string
	// ClientKey is the PEM private key clients authenticate with.
	ClientKey []byte
	// KnownHosts is the known_hosts line for this server's host key.
	KnownHosts []byte
	root       string
	listener   net.Listener
	config     *ssh.ServerConfig
}

// StartSSHGitServer serves the repositories of gs over ssh.
func StartSSHGitServer(gs *GitServer) (*SSHGitServer, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("listen for ssh git server: %w", err)
	}
	s, err := serveSSHGit(l, gs.root, "127.0.0.1")
	if err != nil {
		_ = l.Close()
	}
	return s, err
}

// serveSSHGit serves the repositories under root on l, known to clients
// as host.
func serveSSHGit(l net.Listener, root, host string) (*SSHGitServer, error) {
	_, hostPriv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return nil, err
	}
	hostSigner, err := ssh.NewSignerFromKey(hostPriv)
	if err != nil {
		return nil, err
	}
	clientPub, clientPriv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return nil, err
	}
	authorized, err := ssh.NewPublicKey(clientPub)
	if err != nil {
		return nil, err
	}
	block, err := ssh.MarshalPrivateKey(clientPriv, "")
	if err != nil {
		return nil, err
	}
	port := l.Addr().(*net.TCPAddr).Port
	s := &SSHGitServer{Host: net.JoinHostPort(host, itoa(port)), ClientKey: pem.EncodeToMemory(block), root: root, listener: l}
	s.KnownHosts = []byte(fmt.Sprintf("[%s]:%d %s", host, port, ssh.MarshalAuthorizedKey(hostSigner.PublicKey())))
	s.config = &ssh.ServerConfig{PublicKeyCallback: func(_ ssh.ConnMetadata, key ssh.PublicKey) (*ssh.Permissions, error) {
		if string(key.Marshal()) == string(authorized.Marshal()) {
			return &ssh.Permissions{}, nil
		}
		return nil, errors.New("unknown public key")
	}}
	s.config.AddHostKey(hostSigner)
	go s.serve()
	return s, nil
}

// URL is the ssh address of a repository created with GitServer.NewRepo.
func (s *SSHGitServer) URL(name string) string { return "ssh://git@" + s.Host + "/" + name + ".git" }

// Stop closes the listener; open sessions end with their clients.
func (s *SSHGitServer) Stop() { _ = s.listener.Close() }

func (s *SSHGitServer) serve() {
	for {
		conn, err := s.listener.Accept()
		if err != nil {
			return
		}
		go s.handle(conn)
	}
}

func (s *SSHGitServer) handle(conn net.Conn) {
	sconn, chans, reqs, err := ssh.NewServerConn(conn, s.config)
	if err != nil {
		_ = conn.Close()
		return
	}
	defer sconn.Close()
	go ssh.DiscardRequests(reqs)
	for nc := range chans {
		if nc.ChannelType() != "session" {
			_ = nc.Reject(ssh.UnknownChannelType, "only sessions")
			continue
		}
		ch, requests, err := nc.Accept()
		if err != nil {
			continue
		}
		go s.session(ch, requests)
	}
}

// session runs one exec request. Environment requests (GIT_PROTOCOL for
// protocol v2) are passed on to git.
func (s *SSHGitServer) session(ch ssh.Channel, requests <-chan *ssh.Request) {
	defer ch.Close()
	var env []string
	for req := range requests {
		switch req.Type {
		case "env":
			var kv struct{ Name, Value string }
			if ssh.Unmarshal(req.Payload, &kv) == nil && kv.Name == "GIT_PROTOCOL" {
				env = append(env, kv.Name+"="+kv.Value)
			}
			_ = req.Reply(true, nil)
		case "exec":
			var cmd struct{ Command string }
			if err := ssh.Unmarshal(req.Payload, &cmd); err != nil {
				_ = req.Reply(false, nil)
				return
			}
			repo, err := s.repoFor(cmd.Command)
			if err != nil {
				_ = req.Reply(true, nil)
				fmt.Fprintln(ch.Stderr(), err)
				exitStatus(ch, 128)
				return
			}
			_ = req.Reply(true, nil)
			run := exec.Command("git", "upload-pack", repo)
			run.Env = append(os.Environ(), env...)
			run.Stdin, run.Stdout, run.Stderr = ch, ch, ch.Stderr()
			code := 0
			if err := run.Run(); err != nil {
				code = 1
				var exit *exec.ExitError
				if errors.As(err, &exit) {
					code = exit.ExitCode()
				}
			}
			exitStatus(ch, code)
			return
		default:
			_ = req.Reply(false, nil)
		}
	}
}

// repoFor accepts only "git-upload-pack '<path>'" for a repository under
// the server root.
func (s *SSHGitServer) repoFor(command string) (string, error) {
	verb, arg, ok := strings.Cut(command, " ")
	if !ok || verb != "git-upload-pack" {
		return "", fmt.Errorf("only git-upload-pack is served, not %q", command)
	}
	p := path.Clean("/" + strings.Trim(arg, `'"`))
	return filepath.Join(s.root, filepath.FromSlash(p)), nil
}

func exitStatus(ch ssh.Channel, code int) {
	payload := make([]byte, 4)
	binary.BigEndian.PutUint32(payload, uint32(code))
	_, _ = ch.SendRequest("exit-status", false, payload)
}
