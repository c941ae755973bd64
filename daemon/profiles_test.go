package daemon_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/thriftbridge/thriftbridge/daemon"
	"github.com/thriftbridge/thriftbridge/daemon/daemontest"
)

// getProfile reads path of the daemon's profiles endpoint and wants 200.
func getProfile(t *testing.T, d *daemon.Daemon, path string) []byte {
	t.Helper()
	resp, err := http.Get("http://" + d.ProfilesAddr().String() + daemon.ProfilesPath + path)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s: %s", path, resp.Status, body)
	}
	return body
}

// TestProfilesEndpoint: with pprof_listen set, thriftd serves a CPU
// profile that sampled its Thrift server while clients called it, the
// named profiles, and samples mutex contention; Stop closes the endpoint
// and turns the sampling off again.
func TestProfilesEndpoint(t *testing.T) {
	cfg := daemontest.Config(t)
	cfg.PprofListen = "127.0.0.1:0"
	logger := slog.New(slog.DiscardHandler)
	d, err := daemon.Start(context.Background(), cfg, logger)
	if err != nil {
		t.Fatalf("start thriftd: %v", err)
	}
	stopped := false
	t.Cleanup(func() {
		if !stopped {
			_ = d.Stop(context.Background())
		}
	})
	if d.ProfilesAddr() == nil {
		t.Fatal("no profiles address with pprof_listen set")
	}
	if got := runtime.SetMutexProfileFraction(-1); got == 0 {
		t.Error("mutex contention is not sampled while the endpoint is on")
	}

	// Calls over four connections while a 1 s CPU profile is taken.
	ctx := testContext(t)
	callsDone := make(chan struct{})
	var calls sync.WaitGroup
	for range 4 {
		c := mustDialThrift(t, d.Addr().String(), nil)
		calls.Add(1)
		go func() {
			defer calls.Done()
			for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); {
				select {
				case <-callsDone:
					return
				default:
				}
				if _, err := c.DescribeVersion(ctx); err != nil {
					t.Errorf("describe_version: %v", err)
					return
				}
			}
		}()
	}
	cpu := getProfile(t, d, "profile?seconds=1")
	close(callsDone)
	calls.Wait()
	zr, err := gzip.NewReader(bytes.NewReader(cpu))
	if err != nil {
		t.Fatalf("the CPU profile is not gzipped protobuf: %v", err)
	}
	raw, err := io.ReadAll(zr)
	if err != nil {
		t.Fatalf("read the CPU profile: %v", err)
	}
	// The profile's string table names the functions its samples were in.
	if !bytes.Contains(raw, []byte("thriftbridge/legacy.")) {
		t.Error("the CPU profile has no sample in the Thrift server's code")
	}

	if heap := string(getProfile(t, d, "heap?debug=1")); !strings.Contains(heap, "# runtime.MemStats") {
		t.Errorf("heap profile in text: %.200q", heap)
	}
	if mutex := string(getProfile(t, d, "mutex?debug=1")); !strings.Contains(mutex, "sampling period=") {
		t.Errorf("mutex profile in text: %.200q", mutex)
	}
	index := string(getProfile(t, d, ""))
	for _, name := range []string{"allocs", "block", "goroutine", "mutex"} {
		if !strings.Contains(index, name) {
			t.Errorf("the index does not list the %s profile", name)
		}
	}

	addr := d.ProfilesAddr().String()
	stopped = true
	if err := d.Stop(context.Background()); err != nil {
		t.Fatalf("stop: %v", err)
	}
	if got := runtime.SetMutexProfileFraction(-1); got != 0 {
		t.Errorf("mutex contention still sampled after Stop (fraction %d)", got)
	}
	if conn, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
		conn.Close()
		t.Error("the profiles endpoint still takes connections after Stop")
	}
}

// TestProfilesOffByDefault: without pprof_listen there is no endpoint.
func TestProfilesOffByDefault(t *testing.T) {
	if got := daemon.DefaultConfig().PprofListen; got != "" {
		t.Errorf("profiles on by default: %q", got)
	}
	d, _ := startLogged(t, daemontest.Config(t))
	if addr := d.ProfilesAddr(); addr != nil {
		t.Errorf("a profiles endpoint on %s without pprof_listen", addr)
	}
}

// TestProfilesListenSetting: --pprof-listen sets the endpoint, a
// malformed address is refused, and an address in use fails the start.
func TestProfilesListenSetting(t *testing.T) {
	if got := parseFlags(t, "--pprof-listen", "127.0.0.1:6060").PprofListen; got != "127.0.0.1:6060" {
		t.Errorf("--pprof-listen: %q", got)
	}
	cfg := daemon.DefaultConfig()
	cfg.PprofListen = "6060"
	if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), "pprof_listen") {
		t.Errorf("pprof_listen 6060: %v, want an error naming pprof_listen", err)
	}

	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	cfg = daemontest.Config(t)
	cfg.PprofListen = busy.Addr().String()
	if d, err := daemon.Start(context.Background(), cfg, slog.New(slog.DiscardHandler)); err == nil {
		_ = d.Stop(context.Background())
		t.Fatal("started with its profiles address taken")
	} else if !strings.Contains(err.Error(), "profiles endpoint") {
		t.Errorf("error %q does not name the profiles endpoint", err)
	}
	cfg.PprofListen = "127.0.0.1:0"
	if d, _ := startLogged(t, cfg); d.ProfilesAddr() == nil { // the data directory was released
		t.Fatal("no profiles endpoint")
	}
}
