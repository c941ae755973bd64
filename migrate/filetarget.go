package migrate

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/thriftbridge/thriftbridge/supercol"
)

// FileTarget reads back a script FileSink wrote, for Verify. Opening it
// indexes where each partition's statements are; a partition is parsed
// when asked for.
type FileTarget struct {
	path   string
	f      *os.File
	asOf   time.Time
	tables []*supercol.Table
	g      *scriptGrammar
	// spans locates each table's partitions: runs of statements.
	// Tables are known by their qualified names.
	spans map[string]map[string][]span
	// order lists each table's partitions in script order.
	order map[string][][][]byte
}

type span struct{ offset, length int64 }

// OpenFileTarget reads the script at path, written for tables.
func OpenFileTarget(path string, tables []*supercol.Table) (*FileTarget, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("open script: %w", err)
	}
	t := &FileTarget{path: path, f: f, tables: tables, g: newScriptGrammar(tables),
		spans: map[string]map[string][]span{}, order: map[string][][][]byte{}}
	if err := t.index(); err != nil {
		f.Close()
		return nil, err
	}
	return t, nil
}

// Close closes the script.
func (t *FileTarget) Close() error { return t.f.Close() }

// AsOf is the moment the script's TTLs were computed for (its header).
func (t *FileTarget) AsOf() time.Time { return t.asOf }

func (t *FileTarget) index() error {
	br := bufio.NewReader(t.f)
	first, err := br.ReadString('\n')
	if err != nil && err != io.EOF {
		return fmt.Errorf("read %s: %w", t.path, err)
	}
	if !strings.HasPrefix(first, FileHeaderPrefix) {
		return fmt.Errorf("%s: not a script written by convert (no %q header)", t.path, strings.TrimSpace(FileHeaderPrefix))
	}
	sec, err := strconv.ParseInt(strings.TrimSpace(first[len(FileHeaderPrefix):]), 10, 64)
	if err != nil {
		return fmt.Errorf("%s: header time: %w", t.path, err)
	}
	t.asOf = time.Unix(sec, 0)
	if _, err := t.f.Seek(0, io.SeekStart); err != nil {
		return fmt.Errorf("read %s: %w", t.path, err)
	}
	var lastTable, lastPK string
	return readScript(t.f, func(st scriptStatement) error {
		d, err := t.g.parse(st.Text)
		if errors.Is(err, errNotData) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%s:%d: %w", t.path, st.Line, err)
		}
		npk := partitionKeyLen(d.Table)
		if len(d.Key) < npk {
			return fmt.Errorf("%s:%d: statement without the whole partition key", t.path, st.Line)
		}
		pk := cellID(d.Key[:npk], -1)
		length := int64(len(st.Text)) + 1
		table := d.Table.QualifiedName()
		parts := t.spans[table]
		if parts == nil {
			parts = map[string][]span{}
			t.spans[table] = parts
		}
		runs, known := parts[pk]
		if !known {
			t.order[table] = append(t.order[table], copyKey(d.Key[:npk]))
		}
		if table == lastTable && pk == lastPK && len(runs) > 0 {
			// Statements of a partition are contiguous, up to blank space.
			last := &runs[len(runs)-1]
			last.length = st.Offset + length - last.offset
		} else {
			runs = append(runs, span{offset: st.Offset, length: length})
		}
		parts[pk] = runs
		lastTable, lastPK = table, pk
		return nil
	})
}

// Partition implements Target.
func (t *FileTarget) Partition(ctx context.Context, table *supercol.Table, key [][]byte) (TargetPartition, error) {
	part := TargetPartition{AsOf: t.asOf}
	runs := t.spans[table.QualifiedName()][cellID(key, -1)]
	cells := map[string]int{}
	for _, r := range runs {
		sr := io.NewSectionReader(t.f, r.offset, r.length)
		err := readScript(sr, func(st scriptStatement) error {
			d, err := t.g.parse(st.Text)
			if err != nil {
				return fmt.Errorf("%s at byte %d: %w", t.path, r.offset+st.Offset, err)
			}
			id := cellID(d.Key, d.Column)
			i, dup := cells[id]
			if !dup {
				i = len(part.Cells)
				cells[id] = i
				part.Cells = append(part.Cells, TargetCell{Key: d.Key, Column: d.Column})
			}
			c := &part.Cells[i]
			if d.Counter {
				// Increments add up.
				c.Value = addCounter(c.Value, d.Value)
				return nil
			}
			// The latest writetime wins, as in Cassandra.
			if !dup || d.Writetime >= c.Writetime {
				c.Value, c.Writetime, c.TTL = d.Value, d.Writetime, d.TTL
			}
			return nil
		})
		if err != nil {
			return part, err
		}
	}
	return part, nil
}

// Partitions implements Target.
func (t *FileTarget) Partitions(ctx context.Context, table *supercol.Table, visit func(key [][]byte) error) error {
	for _, k := range t.order[table.QualifiedName()] {
		if err := visit(k); err != nil {
			return err
		}
	}
	return nil
}

// addCounter adds two 8-byte counter values.
func addCounter(sum, delta []byte) []byte {
	var a, b uint64
	if len(sum) == 8 {
		a = binary.BigEndian.Uint64(sum)
	}
	if len(delta) == 8 {
		b = binary.BigEndian.Uint64(delta)
	}
	return binary.BigEndian.AppendUint64(nil, a+b)
}
