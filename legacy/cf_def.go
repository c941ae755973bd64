package legacy

import (
	"regexp"
	"strings"

	"github.com/thriftbridge/thriftbridge/store"
	"github.com/thriftbridge/thriftbridge/store/marshal"
	"github.com/thriftbridge/thriftbridge/thrift/gen-go/cassandra"
)

// tableDefFromThrift validates a CfDef as Cassandra does when a family is
// created and returns its definition. Options the client left unset stay
// unset, so describe_keyspace can tell them from explicit values.
func tableDefFromThrift(cf *cassandra.CfDef) (store.TableDef, error) {
	def := store.TableDef{Keyspace: cf.Keyspace, Name: cf.Name}
	switch cf.ColumnType {
	case "Standard", "":
	case "Super":
		def.Super = true
	default:
		return def, iref("Invalid column type %s", cf.ColumnType)
	}
	comparator, err := parseType(orDefault(cf.ComparatorType, "BytesType"))
	if err != nil {
		return def, err
	}
	def.Comparator = comparator.Name()
	// column_metadata names subcolumns in a Super family.
	columnNames := comparator
	if def.Super {
		sub, err := parseType(orDefault(stringOr(cf.SubcomparatorType), "BytesType"))
		if err != nil {
			return def, err
		}
		def.SubComparator = sub.Name()
		columnNames = sub
	}
	key, err := parseType(orDefault(stringOr(cf.KeyValidationClass), "BytesType"))
	if err != nil {
		return def, err
	}
	def.KeyValidator = key.Name()
	validator, err := parseType(orDefault(stringOr(cf.DefaultValidationClass), "BytesType"))
	if err != nil {
		return def, err
	}
	def.DefaultValidator = validator.Name()
	for _, c := range cf.ColumnMetadata {
		if err := columnNames.Validate(c.Name); err != nil {
			return def, iref("Column name %x is not valid for comparator %s", c.Name, columnNames.Name())
		}
		v, err := parseType(c.ValidationClass)
		if err != nil {
			return def, err
		}
		cd := store.ColumnDef{Name: c.Name, Validator: v.Name(), IndexName: c.IndexName, IndexOptions: c.IndexOptions}
		if c.IndexType != nil {
			if err := checkIndexType(def, *c.IndexType); err != nil {
				return def, err
			}
			it := int32(*c.IndexType)
			cd.IndexType = &it
			if cd.IndexName == nil || *cd.IndexName == "" {
				name := defaultIndexName(def.Name, comparator.String(c.Name))
				cd.IndexName = &name
			}
		}
		def.Columns = append(def.Columns, cd)
	}
	copyOptionsFromThrift(&def, cf)

	if !validName.MatchString(def.Keyspace) {
		return def, iref("Keyspace name must not be empty, more than 48 characters long, or contain non-alphanumeric-underscore characters (got \"%s\")", def.Keyspace)
	}
	if !validName.MatchString(def.Name) {
		return def, iref("ColumnFamily name must not be empty, more than 48 characters long, or contain non-alphanumeric-underscore characters (got \"%s\")", def.Name)
	}
	if marshal.IsCounter(comparator) {
		return def, ire("CounterColumnType is not a valid comparator")
	}
	if marshal.IsCounter(key) {
		return def, ire("CounterColumnType is not a valid key validator")
	}
	if err := validateTableOptions(&def); err != nil {
		return def, err
	}
	return def, nil
}

// checkIndexType accepts the index types thriftd maintains: KEYS indexes
// on Standard families.
func checkIndexType(def store.TableDef, it cassandra.IndexType) error {
	switch {
	case it != cassandra.IndexType_KEYS:
		return iref("%s secondary indexes are not supported by thriftd (only KEYS indexes are)", it)
	case def.Super:
		return ire("Secondary indexes are not supported on super column families")
	}
	return nil
}

// defaultIndexName is the name Cassandra gives an index created without
// one: <family>_<column>_idx with non-word characters removed.
func defaultIndexName(cf, column string) string {
	return nonWord.ReplaceAllString(cf+"_"+column+"_idx", "")
}

var nonWord = regexp.MustCompile(`\W`)

// checkIndexNames refuses an index name used by another family of the
// keyspace, or twice in one family.
func checkIndexNames(ks *store.Keyspace, def store.TableDef) error {
	seen := map[string]bool{}
	if ks != nil {
		for name, t := range ks.Tables {
			if name == def.Name {
				continue
			}
			for _, c := range t.Def.Columns {
				if c.IndexName != nil {
					seen[*c.IndexName] = true
				}
			}
		}
	}
	for _, c := range def.Columns {
		if c.IndexName == nil || c.IndexType == nil {
			continue
		}
		if seen[*c.IndexName] {
			return iref("Duplicate index name %s", *c.IndexName)
		}
		seen[*c.IndexName] = true
	}
	return nil
}

func parseType(name string) (marshal.Type, error) {
	t, err := marshal.Parse(name)
	if err != nil {
		return nil, ire(err.Error())
	}
	return t, nil
}

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}

func stringOr(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// copyOptionsFromThrift keeps every option the client set.
func copyOptionsFromThrift(def *store.TableDef, cf *cassandra.CfDef) {
	def.Comment = cf.Comment
	def.ReadRepairChance = cf.ReadRepairChance
	def.DCLocalReadRepairChance = setFloat(cf.IsSetDclocalReadRepairChance(), cf.DclocalReadRepairChance)
	def.GCGraceSeconds = cf.GcGraceSeconds
	def.MinCompactionThreshold = cf.MinCompactionThreshold
	def.MaxCompactionThreshold = cf.MaxCompactionThreshold
	def.KeyAlias = cf.KeyAlias
	def.ColumnAliases = cf.ColumnAliases
	def.ValueAlias = cf.ValueAlias
	def.CompactionStrategy = cf.CompactionStrategy
	def.CompactionStrategyOptions = cf.CompactionStrategyOptions
	def.CompressionOptions = cf.CompressionOptions
	def.BloomFilterFPChance = cf.BloomFilterFpChance
	// Cassandra 3.11 takes the 2.0 keywords in any case and reports them
	// upper-cased.
	def.Caching = setString(cf.IsSetCaching(), strings.ToUpper(cf.Caching))
	def.CellsPerRowToCache = setString(cf.IsSetCellsPerRowToCache(), cf.CellsPerRowToCache)
	def.MemtableFlushPeriodMs = cf.MemtableFlushPeriodInMs
	def.DefaultTimeToLive = cf.DefaultTimeToLive
	def.SpeculativeRetry = setString(cf.IsSetSpeculativeRetry(), cf.SpeculativeRetry)
	def.MinIndexInterval = cf.MinIndexInterval
	def.MaxIndexInterval = cf.MaxIndexInterval
	for _, tr := range cf.Triggers {
		def.Triggers = append(def.Triggers, store.TriggerDef{Name: tr.Name, Options: tr.Options})
	}
	def.PopulateIOCacheOnFlush = cf.PopulateIoCacheOnFlush
	def.ReplicateOnWrite = cf.ReplicateOnWrite
	def.RowCacheSize = cf.RowCacheSize
	def.KeyCacheSize = cf.KeyCacheSize
	def.RowCacheSavePeriodSeconds = cf.RowCacheSavePeriodInSeconds
	def.KeyCacheSavePeriodSeconds = cf.KeyCacheSavePeriodInSeconds
	def.MemtableFlushAfterMins = cf.MemtableFlushAfterMins
	def.MemtableThroughputMB = cf.MemtableThroughputInMb
	def.MemtableOperationsMillions = cf.MemtableOperationsInMillions
	def.MergeShardsChance = cf.MergeShardsChance
	def.RowCacheProvider = cf.RowCacheProvider
	def.RowCacheKeysToSave = cf.RowCacheKeysToSave
	def.IndexInterval = cf.IndexInterval
}

// Fields with IDL defaults are plain values in the generated code; these
// keep them only when the client set them.
func setString(isSet bool, v string) *string {
	if !isSet {
		return nil
	}
	return &v
}

func setFloat(isSet bool, v float64) *float64 {
	if !isSet {
		return nil
	}
	return &v
}

// validateTableOptions applies Cassandra's range checks to the options.
func validateTableOptions(def *store.TableDef) error {
	if p := def.BloomFilterFPChance; p != nil && (*p <= 0 || *p > 1) {
		return iref("bloom_filter_fp_chance must be larger than 0.0 and less than or equal to 1.0 (got %s)", marshal.FormatJavaDouble(*p))
	}
	if p := def.DCLocalReadRepairChance; p != nil && (*p < 0 || *p > 1) {
		return iref("dclocal_read_repair_chance must be larger than or equal to 0 and smaller than or equal to 1.0 (got %s)", marshal.FormatJavaDouble(*p))
	}
	if p := def.ReadRepairChance; p != nil && (*p < 0 || *p > 1) {
		return iref("read_repair_chance must be larger than or equal to 0 and smaller than or equal to 1.0 (got %s)", marshal.FormatJavaDouble(*p))
	}
	if p := def.DefaultTimeToLive; p != nil {
		if *p < 0 {
			return iref("default_time_to_live must be greater than or equal to 0 (got %d)", *p)
		}
		if *p > maxTTL {
			return iref("default_time_to_live must be less than or equal to %d (got %d)", maxTTL, *p)
		}
	}
	if p := def.GCGraceSeconds; p != nil && *p < 0 {
		return iref("gc_grace_seconds must be greater than or equal to 0 (got %d)", *p)
	}
	if p := def.MinIndexInterval; p != nil && *p < 1 {
		return iref("min_index_interval must be greater than or equal to 1 (got %d)", *p)
	}
	if p := def.MemtableFlushPeriodMs; p != nil && *p < 0 {
		return iref("memtable_flush_period_in_ms must be greater than or equal to 0 (got %d)", *p)
	}
	if p := def.MinCompactionThreshold; p != nil && *p < 2 && *p != 0 {
		return iref("min_compaction_threshold cannot be less than 2 (got %d)", *p)
	}
	if lo, hi := def.MinCompactionThreshold, def.MaxCompactionThreshold; lo != nil && hi != nil && *hi != 0 && *lo > *hi {
		return iref("min_compaction_threshold cannot be greater than max_compaction_threshold (%d > %d)", *lo, *hi)
	}
	if p := def.CompactionStrategy; p != nil {
		if _, ok := knownCompactionStrategies[qualify(*p, compactionPackage)]; !ok {
			return iref("Unable to find compaction strategy class '%s'", qualify(*p, compactionPackage))
		}
	}
	if opts := def.CompressionOptions; opts != nil {
		class := opts["class"]
		if class == "" {
			class = opts["sstable_compression"]
		}
		if class != "" {
			if _, ok := knownCompressors[qualify(class, compressionPackage)]; !ok {
				return iref("Could not create Compression for type %s", qualify(class, compressionPackage))
			}
		}
	}
	if p := def.Caching; p != nil && !validCaching(*p) {
		return iref("Invalid value %s for caching parameter", *p)
	}
	if p := def.SpeculativeRetry; p != nil && !validSpeculativeRetry.MatchString(*p) {
		return iref("Invalid value %s for option 'speculative_retry'", *p)
	}
	return nil
}

const (
	compactionPackage  = "org.apache.cassandra.db.compaction."
	compressionPackage = "org.apache.cassandra.io.compress."
)

var knownCompactionStrategies = map[string]struct{}{
	compactionPackage + "SizeTieredCompactionStrategy": {},
	compactionPackage + "LeveledCompactionStrategy":    {},
	compactionPackage + "DateTieredCompactionStrategy": {},
	compactionPackage + "TimeWindowCompactionStrategy": {},
}

var knownCompressors = map[string]struct{}{
	compressionPackage + "LZ4Compressor":     {},
	compressionPackage + "SnappyCompressor":  {},
	compressionPackage + "DeflateCompressor": {},
}

// qualify prefixes a short class name with its package.
func qualify(class, pkg string) string {
	if strings.Contains(class, ".") {
		return class
	}
	return pkg + class
}

var validSpeculativeRetry = regexp.MustCompile(`(?i)^(NONE|ALWAYS|\d+(\.\d+)?PERCENTILE|\d+(\.\d+)?MS)$`)

// validCaching accepts the caching keywords Cassandra 3.11 takes over
// Thrift (those of 2.0, in any case); 3.11 refuses 2.1's JSON maps there.
func validCaching(s string) bool {
	switch strings.ToUpper(s) {
	case "ALL", "KEYS_ONLY", "ROWS_ONLY", "NONE":
		return true
	}
	return false
}

// cellsPerRowToCache is what 3.11 reports for a caching keyword: rows are
// cached 100 cells deep when rows are cached at all.
func cellsPerRowToCache(caching string) string {
	switch caching {
	case "ALL", "ROWS_ONLY":
		return "100"
	}
	return "0"
}

// Defaults describe_keyspace reports for options a client did not set
// (Cassandra 3.x's).
const (
	defaultCompaction  = "org.apache.cassandra.db.compaction.SizeTieredCompactionStrategy"
	defaultCaching     = "KEYS_ONLY"
	defaultSpecRetry   = "99PERCENTILE"
	defaultBloomFilter = 0.01
)

// cfDefToThrift describes a family as describe_keyspace shows it.
func cfDefToThrift(t *store.Table) *cassandra.CfDef {
	d := &t.Def
	cf := cassandra.NewCfDef()
	cf.Keyspace = d.Keyspace
	cf.Name = d.Name
	cf.ID = ptr(d.ID)
	cf.ColumnType = "Standard"
	if d.Super {
		cf.ColumnType = "Super"
		cf.SubcomparatorType = ptr(t.SubComparator.Name())
	}
	cf.ComparatorType = t.Comparator.Name()
	cf.DefaultValidationClass = ptr(t.DefaultValidator.Name())
	cf.KeyValidationClass = ptr(t.KeyValidator.Name())
	cf.ColumnMetadata = []*cassandra.ColumnDef{}
	for _, c := range d.Columns {
		cd := &cassandra.ColumnDef{Name: c.Name, ValidationClass: c.Validator, IndexName: c.IndexName, IndexOptions: c.IndexOptions}
		if c.IndexType != nil {
			it := cassandra.IndexType(*c.IndexType)
			cd.IndexType = &it
		}
		cf.ColumnMetadata = append(cf.ColumnMetadata, cd)
	}
	cf.Comment = ptr(deref(d.Comment, ""))
	cf.ReadRepairChance = ptr(deref(d.ReadRepairChance, 0.0))
	cf.DclocalReadRepairChance = deref(d.DCLocalReadRepairChance, 0.1)
	cf.GcGraceSeconds = ptr(int32(t.GCGrace()))
	cf.MinCompactionThreshold = ptr(deref(d.MinCompactionThreshold, 4))
	cf.MaxCompactionThreshold = ptr(deref(d.MaxCompactionThreshold, 32))
	cf.KeyAlias = d.KeyAlias
	cf.ColumnAliases = d.ColumnAliases
	cf.ValueAlias = d.ValueAlias
	// Cassandra reports the class fully qualified, however it was given.
	cf.CompactionStrategy = ptr(qualify(deref(d.CompactionStrategy, defaultCompaction), compactionPackage))
	cf.CompactionStrategyOptions = orEmpty(d.CompactionStrategyOptions)
	cf.CompressionOptions = d.CompressionOptions
	if cf.CompressionOptions == nil {
		cf.CompressionOptions = map[string]string{"chunk_length_in_kb": "64", "class": "org.apache.cassandra.io.compress.LZ4Compressor"}
	}
	cf.BloomFilterFpChance = ptr(deref(d.BloomFilterFPChance, defaultBloomFilter))
	cf.Caching = deref(d.Caching, defaultCaching)
	cf.CellsPerRowToCache = deref(d.CellsPerRowToCache, cellsPerRowToCache(cf.Caching))
	cf.MemtableFlushPeriodInMs = ptr(deref(d.MemtableFlushPeriodMs, 0))
	cf.DefaultTimeToLive = ptr(t.DefaultTTL())
	cf.SpeculativeRetry = deref(d.SpeculativeRetry, defaultSpecRetry)
	cf.MinIndexInterval = ptr(deref(d.MinIndexInterval, 128))
	cf.MaxIndexInterval = ptr(deref(d.MaxIndexInterval, 2048))
	cf.Triggers = []*cassandra.TriggerDef{}
	for _, tr := range d.Triggers {
		cf.Triggers = append(cf.Triggers, &cassandra.TriggerDef{Name: tr.Name, Options: tr.Options})
	}
	cf.PopulateIoCacheOnFlush = d.PopulateIOCacheOnFlush
	cf.ReplicateOnWrite = d.ReplicateOnWrite
	cf.RowCacheSize = d.RowCacheSize
	cf.KeyCacheSize = d.KeyCacheSize
	cf.RowCacheSavePeriodInSeconds = d.RowCacheSavePeriodSeconds
	cf.KeyCacheSavePeriodInSeconds = d.KeyCacheSavePeriodSeconds
	cf.MemtableFlushAfterMins = d.MemtableFlushAfterMins
	cf.MemtableThroughputInMb = d.MemtableThroughputMB
	cf.MemtableOperationsInMillions = d.MemtableOperationsMillions
	cf.MergeShardsChance = d.MergeShardsChance
	cf.RowCacheProvider = d.RowCacheProvider
	cf.RowCacheKeysToSave = d.RowCacheKeysToSave
	cf.IndexInterval = d.IndexInterval
	return cf
}

func ptr[T any](v T) *T { return &v }

func deref[T any](p *T, d T) T {
	if p == nil {
		return d
	}
	return *p
}

func orEmpty(m map[string]string) map[string]string {
	if m == nil {
		return map[string]string{}
	}
	return m
}
