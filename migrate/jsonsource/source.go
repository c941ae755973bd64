package jsonsource

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/thriftbridge/thriftbridge/migrate"
	"github.com/thriftbridge/thriftbridge/supercol"
)

// DefaultChunkSize is the number of cells per chunk.
const DefaultChunkSize = 1000

// Source reads sstable2json dumps: one file per family.
type Source struct {
	schema    supercol.KeyspaceDef
	families  map[string]*supercol.Family
	files     map[string]string
	now       func() time.Time
	chunkSize int
}

var _ migrate.Source = (*Source)(nil)

// Option configures a Source.
type Option func(*Source)

// WithClock sets the clock that decides which expiring cells have expired
// (default time.Now).
func WithClock(now func() time.Time) Option { return func(s *Source) { s.now = now } }

// WithChunkSize sets the number of cells per chunk (default 1000).
func WithChunkSize(n int) Option {
	return func(s *Source) { s.chunkSize = max(n, 1) }
}

// dataFileName matches the name sstable2json output is usually saved
// under: <Keyspace>-<Family>-<version>-<generation>-Data.json.
var dataFileName = regexp.MustCompile(`^([A-Za-z0-9_]+)-([A-Za-z0-9_]+)-([a-z]+)-([0-9]+)-Data\.json$`)

// Open reads the dumps at path described by schema. path is one dump file
// or a directory of them, each named <Family>.json or
// <Keyspace>-<Family>-<ver>-<gen>-Data.json. A family may have one dump
// only: dump a compacted family (one sstable), as rows split over several
// sstables would need merging.
func Open(schema supercol.KeyspaceDef, path string, opts ...Option) (*Source, error) {
	s := &Source{
		schema:    schema,
		families:  make(map[string]*supercol.Family, len(schema.Families)),
		files:     map[string]string{},
		now:       time.Now,
		chunkSize: DefaultChunkSize,
	}
	for _, o := range opts {
		o(s)
	}
	for _, def := range schema.Families {
		f, err := supercol.NewFamily(schema.Name, def)
		if err != nil {
			return nil, fmt.Errorf("json source: %w", err)
		}
		s.families[def.Name] = f
	}
	st, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("json source: %w", err)
	}
	var candidates []string
	if st.IsDir() {
		entries, err := os.ReadDir(path)
		if err != nil {
			return nil, fmt.Errorf("json source: %w", err)
		}
		for _, e := range entries {
			if !e.IsDir() && strings.HasSuffix(e.Name(), ".json") {
				candidates = append(candidates, filepath.Join(path, e.Name()))
			}
		}
		sort.Strings(candidates)
	} else {
		candidates = []string{path}
	}
	for _, file := range candidates {
		family, err := s.familyOf(file)
		if err != nil {
			if !st.IsDir() {
				return nil, err
			}
			continue // other files in the directory
		}
		if prev, dup := s.files[family]; dup {
			return nil, fmt.Errorf("json source: family %s has two dumps, %s and %s: dump it after a major compaction, as one sstable", family, prev, file)
		}
		s.files[family] = file
	}
	if len(s.files) == 0 {
		return nil, fmt.Errorf("json source: no dump of a family of keyspace %s in %s", schema.Name, path)
	}
	return s, nil
}

// familyOf tells which family a dump file holds from its name.
func (s *Source) familyOf(file string) (string, error) {
	base := filepath.Base(file)
	family := strings.TrimSuffix(base, ".json")
	if m := dataFileName.FindStringSubmatch(base); m != nil {
		if m[1] != s.schema.Name {
			return "", fmt.Errorf("json source: %s is a dump of keyspace %s, not %s", file, m[1], s.schema.Name)
		}
		family = m[2]
	}
	if _, ok := s.families[family]; !ok {
		return "", fmt.Errorf("json source: %s: keyspace %s has no family %q in the schema", file, s.schema.Name, family)
	}
	return family, nil
}

// Keyspace returns the schema, limited to the families that have a dump.
func (s *Source) Keyspace(ctx context.Context) (supercol.KeyspaceDef, error) {
	out := supercol.KeyspaceDef{Name: s.schema.Name}
	for _, def := range s.schema.Families {
		if _, ok := s.files[def.Name]; ok {
			out.Families = append(out.Families, def)
		}
	}
	return out, nil
}

// Scan streams the rows of family's dump in file order (the sstable's
// token order) after from.AfterKey.
func (s *Source) Scan(ctx context.Context, family string, from migrate.Position, visit func(migrate.RowChunk) error) error {
	file, ok := s.files[family]
	if !ok {
		return fmt.Errorf("json source: no dump of family %q", family)
	}
	fh, err := os.Open(file)
	if err != nil {
		return fmt.Errorf("json source: %w", err)
	}
	defer fh.Close()
	d := newDecoder(fh, s.families[family], s.now().Unix(), s.chunkSize)
	if err := d.rows(ctx, from.AfterKey, visit); err != nil {
		if ve, ok := err.(visitError); ok {
			return ve.err
		}
		return fmt.Errorf("json source: %s: %w", file, err)
	}
	return nil
}

// Close releases nothing: files are opened per scan.
func (s *Source) Close() error { return nil }
