package daemon_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
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

// gunzip decompresses a profile in Go's format (gzipped protobuf).
func gunzip(t *testing.T, what string, b []byte) []byte {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("the %s profile is not gzipped protobuf: %v", what, err)
	}
	raw, err := io.ReadAll(zr)
	if err != nil {
		t.Fatalf("read the %s profile: %v", what, err)
	}
	return raw
}

// contendForProfile makes goroutines wait for one mutex until stop is
// closed (bounded by 10 s).
func contendForProfile(stop <-chan struct{}) {
	var mu sync.Mutex
	runFor(stop, func(int) {
		mu.Lock()
		time.Sleep(50 * time.Microsecond)
		mu.Unlock()
	})
}

// blockForProfile makes goroutines wait on a channel until stop is
// closed (bounded by 10 s).
func blockForProfile(stop <-chan struct{}) {
	ticks := make(chan struct{})
	runFor(stop, func(int) {
		select {
		case ticks <- struct{}{}:
		case <-ticks:
		case <-time.After(time.Millisecond):
		}
	})
}

// runFor runs step in a loop in four goroutines, numbered 0 to 3, until
// stop is closed, for 10 s at most.
func runFor(stop <-chan struct{}, step func(goroutine int)) {
	var wg sync.WaitGroup
	for i := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); {
				select {
				case <-stop:
					return
				default:
				}
				step(i)
			}
		}()
	}
	wg.Wait()
}

// profileWhile takes the profile at path while work runs.
func profileWhile(t *testing.T, d *daemon.Daemon, path string, work func(stop <-chan struct{})) []byte {
	t.Helper()
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		work(stop)
	}()
	defer func() {
		close(stop)
		<-done
	}()
	return getProfile(t, d, path)
}

// TestProfilesEndpoint: with pprof_listen set, thriftd serves a CPU
// profile that sampled its Thrift server while clients called it, a
// mutex profile, a block profile of the seconds asked for, sampled
// during those seconds only, and the other named profiles; Stop closes
// the endpoint and stops sampling mutex contention.
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
	// Calls over four connections while a 1 s CPU profile is taken.
	ctx := testContext(t)
	var clients [4]*thriftClient
	for i := range clients {
		clients[i] = mustDialThrift(t, d.Addr().String(), nil)
	}
	var failed atomic.Int64
	cpu := gunzip(t, "CPU", profileWhile(t, d, "profile?seconds=1", func(stop <-chan struct{}) {
		runFor(stop, func(i int) {
			if _, err := clients[i].DescribeVersion(ctx); err != nil {
				failed.Add(1)
			}
		})
	}))
	if n := failed.Load(); n > 0 {
		t.Errorf("%d calls of describe_version failed", n)
	}
	// A profile's string table names the functions its samples were in.
	if !bytes.Contains(cpu, []byte("thriftbridge/legacy.")) {
		t.Error("the CPU profile has no sample in the Thrift server's code")
	}

	// A mutex profile of 1 s while goroutines contend, sampled since the
	// endpoint started.
	if got := runtime.SetMutexProfileFraction(-1); got == 0 {
		t.Error("mutex contention is not sampled while the endpoint is on")
	}
	mutex := gunzip(t, "mutex", profileWhile(t, d, "mutex?seconds=1", contendForProfile))
	if !bytes.Contains(mutex, []byte("contendForProfile")) {
		t.Error("the mutex profile of 1 s has no sample of the contention made during it")
	}

	// A block profile of 1 s while goroutines wait: sampled then, and
	// not after.
	block := gunzip(t, "block", profileWhile(t, d, "block?seconds=1", blockForProfile))
	if !bytes.Contains(block, []byte("blockForProfile")) {
		t.Error("the block profile of 1 s has no sample of the waits made during it")
	}
	before := getProfile(t, d, "block?debug=1")
	stop := make(chan struct{})
	time.AfterFunc(200*time.Millisecond, func() { close(stop) })
	blockForProfile(stop)
	if after := getProfile(t, d, "block?debug=1"); !bytes.Equal(before, after) {
		t.Errorf("blocking sampled after the block profile ended:\nbefore %.300q\nafter %.300q", before, after)
	}

	if heap := string(getProfile(t, d, "heap?debug=1")); !strings.Contains(heap, "# runtime.MemStats") {
		t.Errorf("heap profile in text: %.200q", heap)
	}
	// The command line may hold a password (--cql-password): not served.
	resp, err := http.Get("http://" + d.ProfilesAddr().String() + daemon.ProfilesPath + "cmdline")
	if err != nil {
		t.Fatal(err)
	}
	cmdline, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode == http.StatusOK || bytes.Contains(cmdline, []byte(os.Args[0])) {
		t.Errorf("the command line is served: %s: %q", resp.Status, cmdline)
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
