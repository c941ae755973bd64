package badgerstore

import (
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
)

// Two processes starting on one data directory that a crash left with
// empty logs: only one may set them aside. Two opens of the directory
// within this process take flocks that conflict as two processes' do.
func TestConcurrentChecksSetAsideOnce(t *testing.T) {
	const logs = 300
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	for round := range 20 {
		dir := t.TempDir()
		for i := range logs {
			name := filepath.Join(dir, fmt.Sprintf("%05d.mem", i+1))
			if err := os.WriteFile(name, nil, 0o600); err != nil {
				t.Fatal(err)
			}
		}
		var wg sync.WaitGroup
		start := make(chan struct{})
		errs := make([]error, 2)
		for i := range errs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				errs[i] = checkDataDir(dir, quiet)
			}()
		}
		close(start)
		wg.Wait()
		for i, err := range errs {
			if err != nil {
				t.Fatalf("round %d: check %d: %v", round, i, err)
			}
		}
		left, err := filepath.Glob(filepath.Join(dir, "*.mem"))
		if err != nil {
			t.Fatal(err)
		}
		moved, err := filepath.Glob(filepath.Join(dir, setAsideDir, "*", "*.mem"))
		if err != nil {
			t.Fatal(err)
		}
		// Both checks may run one after the other: the second then
		// finds nothing to move. Either way every log is moved once.
		if len(left) != 0 || len(moved) != logs {
			t.Fatalf("round %d: %d logs left in place, %d set aside; want 0 and %d", round, len(left), len(moved), logs)
		}
	}
}

// A directory whose lock another process holds (Badger, or another
// check) is left to Badger's own refusal: nothing in it is moved.
func TestCheckLeavesALockedDirectory(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "00001.mem")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	d, err := os.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if err := syscall.Flock(int(d.Fd()), syscall.LOCK_SH|syscall.LOCK_NB); err != nil {
		t.Fatal(err)
	}
	if err := checkDataDir(dir, slog.New(slog.NewTextHandler(io.Discard, nil))); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(empty); err != nil {
		t.Fatalf("the empty log of a locked directory was moved: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, setAsideDir)); !os.IsNotExist(err) {
		t.Fatalf("a locked directory got a %s directory (%v)", setAsideDir, err)
	}
}
