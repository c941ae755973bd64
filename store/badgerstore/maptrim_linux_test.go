package badgerstore

import (
	"bufio"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/thriftbridge/thriftbridge/store"
	"github.com/thriftbridge/thriftbridge/store/enginetest"
	"github.com/thriftbridge/thriftbridge/store/partition"
)

// TestTrimMappedTables fills a store's tables, reads them all back so that
// their pages are resident, and checks that trimming leaves few of them
// resident, and that the data reads the same afterwards. The engine's own
// periodic check is off: the test binary's file-backed pages alone may
// pass the limit, and a trim between reading and counting would leave
// nothing to count.
func TestTrimMappedTables(t *testing.T) {
	dir := t.TempDir()
	p, err := partition.ByName("Murmur3Partitioner")
	if err != nil {
		t.Fatal(err)
	}
	open := func() *Engine {
		e, err := Open(context.Background(), Options{Dir: dir, Partitioner: p, GCInterval: -1, TrimInterval: -1, MemoryBudget: minMemoryBudget})
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	e := open()
	tb := enginetest.CreateTable(t, e, store.TableDef{Name: "cf", Comparator: "BytesType"})
	rng := rand.New(rand.NewPCG(1, 2))
	const rows, cells = 200, 100 // 20 MB that do not compress: several 8 MiB memtables
	for r := 0; r < rows; r++ {
		ops := make([]store.Op, cells)
		for c := range ops {
			value := make([]byte, 1024)
			for i := range value {
				value[i] = byte(rng.Uint32())
			}
			value[0], value[1] = byte(r), byte(c)
			ops[c] = store.Op{Kind: store.OpPut, Name: fmt.Appendf(nil, "c%03d", c), Value: value, Timestamp: 1}
		}
		enginetest.Apply(t, e, store.RowMutation{Table: tb, Key: fmt.Appendf(nil, "r%03d", r), Ops: ops})
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	e = open()
	defer e.Close()
	tb, ok := e.Catalog().Table(tb.Def.Keyspace, "cf")
	if !ok {
		t.Fatal("the family is gone after reopening")
	}
	readAll := func() {
		t.Helper()
		for r := 0; r < rows; r++ {
			res := enginetest.Slice(t, e, tb, fmt.Sprintf("r%03d", r), store.SliceQuery{Count: cells})
			if len(res.Cells) != cells || res.Cells[7].Value[0] != byte(r) || res.Cells[7].Value[1] != 7 {
				t.Fatalf("row %d: %d cells", r, len(res.Cells))
			}
		}
	}
	readAll()
	before := residentTables(t, e.trimmer.dir)
	if before < 8<<20 {
		t.Fatalf("only %d bytes of tables resident after reading 20 MB: the test reads nothing", before)
	}
	n, err := e.trimmer.trim()
	if err != nil && e.trimmer.off {
		t.Skipf("!!! SKIPPED: %v !!!", err)
	}
	if err != nil || n == 0 {
		t.Fatalf("trim: %d tables, %v", n, err)
	}
	after := residentTables(t, e.trimmer.dir)
	t.Logf("resident table pages: %d KiB before, %d KiB after trimming %d mappings", before>>10, after>>10, n)
	if after > before/4 {
		t.Errorf("%d bytes of tables still resident of %d", after, before)
	}
	readAll()
}

// residentTables sums the resident bytes of the table mappings of dir
// (/proc/self/smaps).
func residentTables(t *testing.T, dir string) int64 {
	t.Helper()
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var total int64
	inTable := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) == 0 {
			continue
		}
		if strings.Contains(fields[0], "-") && !strings.HasSuffix(fields[0], ":") {
			path := fields[len(fields)-1]
			inTable = strings.HasSuffix(path, ".sst") && filepath.Dir(path) == dir
			continue
		}
		if inTable && fields[0] == "Rss:" && len(fields) == 3 {
			kb, err := strconv.ParseInt(fields[1], 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			total += kb << 10
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return total
}
