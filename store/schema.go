package store

import (
	"fmt"

	"github.com/thriftbridge/thriftbridge/store/marshal"
)

// KeyspaceDef describes a keyspace as clients define it.
type KeyspaceDef struct {
	Name            string            `json:"name"`
	StrategyClass   string            `json:"strategy_class"`
	StrategyOptions map[string]string `json:"strategy_options,omitempty"`
	DurableWrites   bool              `json:"durable_writes"`
}

// ColumnDef is one declared column of a family (column_metadata).
type ColumnDef struct {
	Name         []byte            `json:"name"`
	Validator    string            `json:"validation_class"`
	IndexType    *int32            `json:"index_type,omitempty"`
	IndexName    *string           `json:"index_name,omitempty"`
	IndexOptions map[string]string `json:"index_options,omitempty"`
}

// TriggerDef is a trigger declared on a family; it is kept, never run.
type TriggerDef struct {
	Name    string            `json:"name"`
	Options map[string]string `json:"options"`
}

// TableDef describes a column family: its shape, types and every option a
// client may set. Optional settings are pointers: nil means "not set", so a
// definition round-trips exactly as the client sent it.
type TableDef struct {
	Keyspace string `json:"keyspace"`
	Name     string `json:"name"`
	// ID is the family's id as clients see it (CfDef.id); assigned by the
	// engine when the family is created.
	ID    int32 `json:"id"`
	Super bool  `json:"super"`

	Comparator       string `json:"comparator"`
	SubComparator    string `json:"subcomparator,omitempty"`
	DefaultValidator string `json:"default_validator"`
	KeyValidator     string `json:"key_validator"`

	Columns []ColumnDef `json:"columns,omitempty"`

	Comment                    *string           `json:"comment,omitempty"`
	ReadRepairChance           *float64          `json:"read_repair_chance,omitempty"`
	DCLocalReadRepairChance    *float64          `json:"dclocal_read_repair_chance,omitempty"`
	GCGraceSeconds             *int32            `json:"gc_grace_seconds,omitempty"`
	MinCompactionThreshold     *int32            `json:"min_compaction_threshold,omitempty"`
	MaxCompactionThreshold     *int32            `json:"max_compaction_threshold,omitempty"`
	KeyAlias                   []byte            `json:"key_alias,omitempty"`
	ColumnAliases              [][]byte          `json:"column_aliases,omitempty"`
	ValueAlias                 []byte            `json:"value_alias,omitempty"`
	CompactionStrategy         *string           `json:"compaction_strategy,omitempty"`
	CompactionStrategyOptions  map[string]string `json:"compaction_strategy_options,omitempty"`
	CompressionOptions         map[string]string `json:"compression_options,omitempty"`
	BloomFilterFPChance        *float64          `json:"bloom_filter_fp_chance,omitempty"`
	Caching                    *string           `json:"caching,omitempty"`
	CellsPerRowToCache         *string           `json:"cells_per_row_to_cache,omitempty"`
	MemtableFlushPeriodMs      *int32            `json:"memtable_flush_period_in_ms,omitempty"`
	DefaultTimeToLive          *int32            `json:"default_time_to_live,omitempty"`
	SpeculativeRetry           *string           `json:"speculative_retry,omitempty"`
	MinIndexInterval           *int32            `json:"min_index_interval,omitempty"`
	MaxIndexInterval           *int32            `json:"max_index_interval,omitempty"`
	Triggers                   []TriggerDef      `json:"triggers,omitempty"`
	PopulateIOCacheOnFlush     *bool             `json:"populate_io_cache_on_flush,omitempty"`
	ReplicateOnWrite           *bool             `json:"replicate_on_write,omitempty"`
	RowCacheSize               *float64          `json:"row_cache_size,omitempty"`
	KeyCacheSize               *float64          `json:"key_cache_size,omitempty"`
	RowCacheSavePeriodSeconds  *int32            `json:"row_cache_save_period_in_seconds,omitempty"`
	KeyCacheSavePeriodSeconds  *int32            `json:"key_cache_save_period_in_seconds,omitempty"`
	MemtableFlushAfterMins     *int32            `json:"memtable_flush_after_mins,omitempty"`
	MemtableThroughputMB       *int32            `json:"memtable_throughput_in_mb,omitempty"`
	MemtableOperationsMillions *float64          `json:"memtable_operations_in_millions,omitempty"`
	MergeShardsChance          *float64          `json:"merge_shards_chance,omitempty"`
	RowCacheProvider           *string           `json:"row_cache_provider,omitempty"`
	RowCacheKeysToSave         *int32            `json:"row_cache_keys_to_save,omitempty"`
	IndexInterval              *int32            `json:"index_interval,omitempty"`
}

// DefaultGCGraceSeconds is Cassandra's default gc_grace_seconds (10 days).
const DefaultGCGraceSeconds = 864000

// Table is a column family as the engine serves it: its definition with the
// marshal types resolved. A Table is immutable; a schema change publishes a
// new one.
type Table struct {
	Def TableDef

	// Comparator orders column names (super column names in a Super family).
	Comparator marshal.Type
	// SubComparator orders subcolumn names; nil for Standard families.
	SubComparator marshal.Type
	// DefaultValidator validates values of undeclared columns.
	DefaultValidator marshal.Type
	// KeyValidator validates row keys.
	KeyValidator marshal.Type
	// Counter is true for families of counters (CounterColumnType values).
	Counter bool
	// ColumnValidators maps a declared column name to its validator.
	ColumnValidators map[string]marshal.Type
	// indexed holds the comparator keys of the indexed columns.
	indexed map[string]bool

	// Backend is what the engine that publishes the table keeps with it
	// (where its data lives, prepared statements): opaque to everyone
	// else, and nil in a Table built by NewTable.
	Backend any
}

// NewTable resolves the types of a definition.
func NewTable(def TableDef) (*Table, error) {
	t := &Table{Def: def}
	var err error
	if t.Comparator, err = marshal.Parse(def.Comparator); err != nil {
		return nil, fmt.Errorf("table %s.%s comparator: %w", def.Keyspace, def.Name, err)
	}
	if def.Super {
		sub := def.SubComparator
		if sub == "" {
			sub = "BytesType"
		}
		if t.SubComparator, err = marshal.Parse(sub); err != nil {
			return nil, fmt.Errorf("table %s.%s subcomparator: %w", def.Keyspace, def.Name, err)
		}
	}
	if t.DefaultValidator, err = marshal.Parse(orDefault(def.DefaultValidator, "BytesType")); err != nil {
		return nil, fmt.Errorf("table %s.%s default validator: %w", def.Keyspace, def.Name, err)
	}
	if t.KeyValidator, err = marshal.Parse(orDefault(def.KeyValidator, "BytesType")); err != nil {
		return nil, fmt.Errorf("table %s.%s key validator: %w", def.Keyspace, def.Name, err)
	}
	t.Counter = marshal.IsCounter(t.DefaultValidator)
	if len(def.Columns) > 0 {
		t.ColumnValidators = make(map[string]marshal.Type, len(def.Columns))
		for _, c := range def.Columns {
			v, err := marshal.Parse(c.Validator)
			if err != nil {
				return nil, fmt.Errorf("table %s.%s column %x validator: %w", def.Keyspace, def.Name, c.Name, err)
			}
			t.ColumnValidators[string(c.Name)] = v
			if c.IndexType != nil && !def.Super {
				if t.indexed == nil {
					t.indexed = map[string]bool{}
				}
				t.indexed[string(t.Comparator.AppendKey(nil, c.Name))] = true
			}
		}
	}
	return t, nil
}

// HasIndexes reports whether any column of the family is indexed.
func (t *Table) HasIndexes() bool { return len(t.indexed) > 0 }

// NameType returns the type of the names a slice at this level selects:
// the comparator, or the subcomparator inside a super column.
func (t *Table) NameType(insideSuper bool) marshal.Type {
	if insideSuper {
		return t.SubComparator
	}
	return t.Comparator
}

// CellNameType is the type of the names of the cells themselves (the
// subcomparator of a Super family).
func (t *Table) CellNameType() marshal.Type {
	if t.Def.Super {
		return t.SubComparator
	}
	return t.Comparator
}

// ValueValidator returns the validator for the value of the named cell.
// Declared columns are looked up by the cell's own name (the subcolumn name
// in a Super family), as Cassandra does.
func (t *Table) ValueValidator(name []byte) marshal.Type {
	if t.ColumnValidators != nil {
		if v, ok := t.ColumnValidators[string(name)]; ok {
			return v
		}
	}
	return t.DefaultValidator
}

// GCGrace returns gc_grace_seconds.
func (t *Table) GCGrace() int64 {
	if t.Def.GCGraceSeconds != nil {
		return int64(*t.Def.GCGraceSeconds)
	}
	return DefaultGCGraceSeconds
}

// DefaultTTL returns default_time_to_live (0: none).
func (t *Table) DefaultTTL() int32 {
	if t.Def.DefaultTimeToLive != nil {
		return *t.Def.DefaultTimeToLive
	}
	return 0
}

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}

// IndexedColumn reports whether a column has a secondary index (Super
// families have none).
func (t *Table) IndexedColumn(name []byte) bool {
	return t.indexed != nil && t.indexed[string(t.Comparator.AppendKey(nil, name))]
}

// IndexedColumns returns the names of the indexed columns.
func (t *Table) IndexedColumns() [][]byte {
	var out [][]byte
	for _, c := range t.Def.Columns {
		if c.IndexType != nil && !t.Def.Super {
			out = append(out, c.Name)
		}
	}
	return out
}
