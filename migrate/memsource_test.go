package migrate

import (
	"bytes"
	"context"
	"fmt"

	"github.com/thriftbridge/thriftbridge/supercol"
)

// memRow is one legacy row of a memSource.
type memRow struct {
	Key   []byte
	Cells []Cell
}

// memSource is a Source over rows held in memory, in slice order, cut into
// chunks of at most chunk cells.
type memSource struct {
	ks    supercol.KeyspaceDef
	rows  map[string][]memRow
	chunk int
	// onRow, when set, runs after each row's last chunk was visited.
	onRow func(family string, key []byte)
}

func newMemSource(ks supercol.KeyspaceDef, chunk int) *memSource {
	return &memSource{ks: ks, rows: map[string][]memRow{}, chunk: chunk}
}

func (s *memSource) add(family string, key string, cells ...Cell) {
	s.rows[family] = append(s.rows[family], memRow{Key: []byte(key), Cells: cells})
}

func (s *memSource) Keyspace(ctx context.Context) (supercol.KeyspaceDef, error) { return s.ks, nil }

func (s *memSource) Scan(ctx context.Context, family string, from Position, visit func(RowChunk) error) error {
	rows, ok := s.rows[family]
	if !ok && !hasFamily(s.ks, family) {
		return fmt.Errorf("no family %s", family)
	}
	skipping := from.Started
	for _, r := range rows {
		if skipping {
			if bytes.Equal(r.Key, from.AfterKey) {
				skipping = false
			}
			continue
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		cells := r.Cells
		for {
			n := min(len(cells), s.chunk)
			ch := RowChunk{Key: r.Key, Cells: cells[:n], Last: n == len(cells)}
			if err := visit(ch); err != nil {
				return err
			}
			cells = cells[n:]
			if ch.Last {
				break
			}
		}
		if s.onRow != nil {
			s.onRow(family, r.Key)
		}
	}
	return nil
}

func (s *memSource) Close() error { return nil }
