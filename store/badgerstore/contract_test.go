package badgerstore

import (
	"context"
	"log/slog"
	"sync"
	"testing"

	"github.com/thriftbridge/thriftbridge/store"
	"github.com/thriftbridge/thriftbridge/store/enginetest"
)

// TestEngineContract runs the backend-neutral engine suite against the
// Badger engine, on a fresh directory per test, with its Super families
// packed (pack.go) and, as stores written before packs keep them, not.
func TestEngineContract(t *testing.T) {
	t.Run("packed", func(t *testing.T) { testEngineContract(t, false) })
	t.Run("unpacked", func(t *testing.T) { testEngineContract(t, true) })
}

func testEngineContract(t *testing.T, unpacked bool) {
	type opened struct {
		dir  string
		opts enginetest.Options
		once *sync.Once
	}
	var mu sync.Mutex
	engines := map[store.Engine]opened{}
	openAt := func(t testing.TB, dir string, opts enginetest.Options) store.Engine {
		e, err := Open(context.Background(), Options{
			Dir:         dir,
			Partitioner: opts.Partitioner,
			Logger:      slog.New(slog.DiscardHandler),
			Now:         opts.Now,

			UnpackedSuperColumns: unpacked,
		})
		if err != nil {
			t.Fatal(err)
		}
		once := new(sync.Once)
		mu.Lock()
		engines[e] = opened{dir: dir, opts: opts, once: once}
		mu.Unlock()
		t.Cleanup(func() { once.Do(func() { e.Close() }) })
		return e
	}
	enginetest.Run(t, enginetest.Harness{
		Open: func(t testing.TB, opts enginetest.Options) store.Engine {
			return openAt(t, t.TempDir(), opts)
		},
		Reopen: func(t testing.TB, e store.Engine) store.Engine {
			mu.Lock()
			o, ok := engines[e]
			mu.Unlock()
			if !ok {
				t.Fatal("reopen of an engine the harness did not open")
			}
			var err error
			o.once.Do(func() { err = e.Close() })
			if err != nil {
				t.Fatal(err)
			}
			return openAt(t, o.dir, o.opts)
		},
		Clock:         true,
		LostConflicts: conflictsLost.Load,
	})
}
