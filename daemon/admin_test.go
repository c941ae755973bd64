package daemon

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/thriftbridge/thriftbridge/store/badgerstore"
)

// lockedBuffer is a log sink read while the server writes to it.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// TestAdminSocketServesItsUserOnly: the admin socket answers a backup to
// thriftd's own user; another user cannot connect to it (mode 0600), and
// is refused by its credentials even when the mode would let it in. The
// socket goes when thriftd stops.
func TestAdminSocketServesItsUserOnly(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("!!! SKIPPED: the admin socket's refusal of another user: needs root to run a client as nobody !!!")
	}
	curl, err := exec.LookPath("curl")
	if err != nil {
		t.Skip("!!! SKIPPED: the admin socket's refusal of another user: no curl to run as nobody !!!")
	}
	root := t.TempDir()
	cfg := DefaultConfig()
	cfg.Listen = "127.0.0.1:0"
	cfg.DataDir = filepath.Join(root, "data")
	logs := &lockedBuffer{}
	d, err := Start(context.Background(), cfg, slog.New(slog.NewTextHandler(logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	stopped := false
	defer func() {
		if !stopped {
			_ = d.Stop(context.Background())
		}
	}()
	socket := AdminSocketPath(cfg.DataDir)
	st, err := os.Stat(socket)
	if err != nil || st.Mode().Perm() != 0o600 || st.Mode()&os.ModeSocket == 0 {
		t.Fatalf("admin socket %s: %v %v; want a socket of mode 0600", socket, st.Mode(), err)
	}

	// thriftd's user gets a backup that verifies.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://thriftd"+AdminBackupPath, nil)
	if err != nil {
		t.Fatal(err)
	}
	client := AdminClient(cfg.DataDir)
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	client.CloseIdleConnections()
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("backup over the admin socket: %s %v", resp.Status, err)
	}
	if _, _, err := badgerstore.VerifyBackup(ctx, bytes.NewReader(body)); err != nil {
		t.Fatalf("the backup served: %v", err)
	}

	// Another user: the directories let it reach the socket, the mode
	// does not let it connect.
	for _, dir := range []string{filepath.Dir(root), root, cfg.DataDir} {
		if err := os.Chmod(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	asNobody := func() (string, error) {
		cmd := exec.CommandContext(ctx, curl, "--silent", "--show-error", "--max-time", "10", "--unix-socket", socket,
			"--output", "/dev/null", "http://thriftd"+AdminBackupPath)
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	if out, err := asNobody(); err == nil || !strings.Contains(out, "onnect") {
		t.Errorf("nobody through the 0600 socket: %v %s; want no connection", err, out)
	}
	if strings.Contains(logs.String(), "another user") {
		t.Fatalf("nobody reached the 0600 socket:\n%s", logs.String())
	}
	// With the mode opened, the peer's credentials still refuse it.
	if err := os.Chmod(socket, 0o666); err != nil {
		t.Fatal(err)
	}
	if out, err := asNobody(); err == nil {
		t.Errorf("nobody got a backup through the admin socket: %s", out)
	}
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(logs.String(), "connection of another user refused") {
		if time.Now().After(deadline) {
			t.Fatalf("the refusal is not logged:\n%s", logs.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	if !strings.Contains(logs.String(), "uid=65534") {
		t.Errorf("the refusal does not name the user:\n%s", logs.String())
	}

	stopped = true
	if err := d.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(socket); !os.IsNotExist(err) {
		t.Errorf("the admin socket outlives thriftd: %v", err)
	}
}
