package migrate

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/thriftbridge/thriftbridge/supercol"
)

// Options configure Convert, WriteSchema and Verify.
type Options struct {
	// TargetKeyspace is the keyspace written; empty: the source's name.
	TargetKeyspace string
	// Replication is the CQL replication map of a created keyspace (see
	// ParseReplication); empty: DefaultReplication.
	Replication string
	// Shapes forces the shape of families, by family name.
	Shapes map[string]supercol.Shape
	// Families limits the run to these families; empty: all of them.
	Families []string
	TTL      TTLPolicy
	// Now is the clock remaining TTLs are computed with; nil: time.Now.
	Now func() time.Time
	// SampleRows and SampleCells bound the rows sampled to choose a
	// family's shape (defaults 100 rows, 10,000 cells).
	SampleRows, SampleCells int
	// CheckpointPath enables checkpoints; a run finding one resumes.
	CheckpointPath string
	// CheckpointRows and CheckpointInterval say how often a checkpoint is
	// written: after that many rows or that much time, whichever comes
	// first (defaults 10,000 rows, 5 s).
	CheckpointRows     int
	CheckpointInterval time.Duration
	// NoMetadata leaves thriftd's catalog alone: by default a sink that
	// records one (MetadataSink) records the converted keyspace in
	// MetaKeyspace (empty: thriftbridge_meta).
	NoMetadata   bool
	MetaKeyspace string
	// Progress follows the copy of each family (convert shows it as
	// progress bars); nil: nothing does.
	Progress Progress
	// Totals are the cell counts per family known from a plan, which
	// Progress is given (for an ETA).
	Totals map[string]int64
	Logger *slog.Logger

	// beforeCheckpoint, when set, runs after the sink flushed and before
	// the checkpoint is saved; an error stops the run there, as a crash
	// between the two would.
	beforeCheckpoint func() error
}

func (o *Options) withDefaults() Options {
	c := *o
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.SampleRows <= 0 {
		c.SampleRows = 100
	}
	if c.SampleCells <= 0 {
		c.SampleCells = 10000
	}
	if c.CheckpointRows <= 0 {
		c.CheckpointRows = 10000
	}
	if c.CheckpointInterval <= 0 {
		c.CheckpointInterval = 5 * time.Second
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	return c
}

// FamilyStats count what a family's conversion wrote and dropped.
type FamilyStats struct {
	Rows int64 `json:"rows"`
	// Cells is the number of cells written (counters included).
	Cells int64 `json:"cells_written"`
	// Expired is the number of cells dropped because they had expired.
	Expired int64 `json:"cells_dropped_expired"`
	// TTLCells is the number of cells written with a TTL.
	TTLCells int64 `json:"ttl_cells"`
	// Counters is the number of counter cells written.
	Counters int64 `json:"counters"`
}

// FamilyReport is one family's result.
type FamilyReport struct {
	Family   string         `json:"family"`
	Table    string         `json:"table"`
	Shape    supercol.Shape `json:"shape"`
	Reason   string         `json:"reason,omitempty"`
	Warnings []string       `json:"warnings,omitempty"`
	FamilyStats
	Errors []string `json:"errors,omitempty"`
	// Resumed is set when the family continued from a checkpoint.
	Resumed         bool    `json:"resumed,omitempty"`
	Done            bool    `json:"done"`
	DurationSeconds float64 `json:"duration_seconds"`
	// CellsPerSecond is the rate of this run (cells written and dropped).
	CellsPerSecond float64 `json:"cells_per_second"`
}

// Report is the result of Convert, written as JSON by --report.
type Report struct {
	Keyspace        string          `json:"keyspace"`
	TargetKeyspace  string          `json:"target_keyspace"`
	TTL             string          `json:"ttl"`
	Started         time.Time       `json:"started"`
	DurationSeconds float64         `json:"duration_seconds"`
	Families        []*FamilyReport `json:"families"`
	Cells           int64           `json:"cells_written"`
	CellsPerSecond  float64         `json:"cells_per_second"`
	Errors          []string        `json:"errors,omitempty"`
}

// familyPlan is a family ready to convert: its mapping onto a table.
type familyPlan struct {
	family  *supercol.Family
	mapping *supercol.Mapping
}

// errStopScan ends a scan early without an error.
var errStopScan = errors.New("stop scan")

// planFamilies reads the keyspace and maps each selected family, using
// the shapes of ck (a resumed run), then opts.Shapes, then a sample of
// the family's first rows.
func planFamilies(ctx context.Context, src Source, opts *Options, ck *Checkpoint) (supercol.KeyspaceDef, []familyPlan, error) {
	ks, err := src.Keyspace(ctx)
	if err != nil {
		return ks, nil, fmt.Errorf("read source keyspace: %w", err)
	}
	want := map[string]bool{}
	for _, f := range opts.Families {
		want[f] = true
	}
	for name := range opts.Shapes {
		if !hasFamily(ks, name) {
			return ks, nil, fmt.Errorf("--shape %s: keyspace %s has no family %s", name, ks.Name, name)
		}
	}
	var plans []familyPlan
	seen := map[string]bool{}
	for _, def := range ks.Families {
		if len(want) > 0 && !want[def.Name] {
			continue
		}
		seen[def.Name] = true
		f, err := supercol.NewFamily(ks.Name, def)
		if err != nil {
			return ks, nil, err
		}
		popts := supercol.Options{Shape: opts.Shapes[def.Name]}
		if ck != nil && ck.Families[def.Name] != nil && ck.Families[def.Name].Shape != "" {
			popts.Shape = ck.Families[def.Name].Shape
		}
		// A forced shape needs the sample too: a pivot table's columns are
		// the subcolumn names the sample saw.
		if popts.Sample, err = sampleFamily(ctx, src, f, opts.SampleRows, opts.SampleCells, opts.Now()); err != nil {
			return ks, nil, err
		}
		m, err := supercol.Plan(f, popts)
		if err != nil {
			return ks, nil, fmt.Errorf("map family %s.%s: %w", ks.Name, def.Name, err)
		}
		m.Table.Keyspace = opts.TargetKeyspace
		if m.Table.Keyspace == "" {
			m.Table.Keyspace = ks.Name
		}
		plans = append(plans, familyPlan{family: f, mapping: m})
	}
	for name := range want {
		if !seen[name] {
			return ks, nil, fmt.Errorf("keyspace %s has no family %s", ks.Name, name)
		}
	}
	return ks, plans, nil
}

func hasFamily(ks supercol.KeyspaceDef, name string) bool {
	for _, f := range ks.Families {
		if f.Name == name {
			return true
		}
	}
	return false
}

// sampleFamily feeds the names of the family's first rows to a Sample,
// leaving out the cells already expired at now: the conversion drops
// them, so they must not shape the table.
func sampleFamily(ctx context.Context, src Source, f *supercol.Family, rows, cells int, now time.Time) (*supercol.Sample, error) {
	s := supercol.NewSample(f)
	nrows, ncells := 0, 0
	err := src.Scan(ctx, f.Def.Name, Position{}, func(ch RowChunk) error {
		for i := range ch.Cells {
			if exp := ExpiresAt(&ch.Cells[i]); exp != 0 && exp <= now.Unix() {
				continue
			}
			s.Add(ch.Cells[i].Super, ch.Cells[i].Name)
		}
		ncells += len(ch.Cells)
		if ch.Last {
			nrows++
		}
		if nrows >= rows || ncells >= cells {
			return errStopScan
		}
		return nil
	})
	if err != nil && !errors.Is(err, errStopScan) {
		return nil, fmt.Errorf("sample family %s.%s: %w", f.Keyspace, f.Def.Name, err)
	}
	return s, nil
}

func schemaOf(ks supercol.KeyspaceDef, plans []familyPlan, opts *Options) *Schema {
	s := &Schema{Keyspace: opts.TargetKeyspace, Replication: opts.Replication, SourceKeyspace: ks.Name, MetaKeyspace: opts.MetaKeyspace}
	if s.Keyspace == "" {
		s.Keyspace = ks.Name
	}
	for _, p := range plans {
		s.Tables = append(s.Tables, p.mapping.Table)
		s.Mappings = append(s.Mappings, p.mapping)
	}
	return s
}

// recordMetadata records the schema in thriftd's catalog when the sink
// keeps one and the options do not say otherwise.
func recordMetadata(ctx context.Context, sink Sink, schema *Schema, opts *Options) error {
	ms, ok := sink.(MetadataSink)
	if !ok || opts.NoMetadata {
		return nil
	}
	if err := ms.RecordMetadata(ctx, schema); err != nil {
		return fmt.Errorf("record the keyspace in thriftd's catalog: %w", err)
	}
	return nil
}

// WriteSchema creates the target keyspace and the tables the source's
// families map onto, and returns that schema.
func WriteSchema(ctx context.Context, src Source, sink Sink, opts Options) (*Schema, error) {
	o := opts.withDefaults()
	ks, plans, err := planFamilies(ctx, src, &o, nil)
	if err != nil {
		return nil, err
	}
	schema := schemaOf(ks, plans, &o)
	if err := sink.Prepare(ctx, schema); err != nil {
		return nil, fmt.Errorf("create schema: %w", err)
	}
	if err := recordMetadata(ctx, sink, schema, &o); err != nil {
		return nil, err
	}
	if err := sink.Flush(ctx); err != nil {
		return nil, fmt.Errorf("create schema: %w", err)
	}
	return schema, nil
}

// Convert streams every family of src into sink: it maps each family onto
// a table, creates the schema, then writes every live cell with its
// writetime and its TTL as the policy says, a partition at a time. With a
// checkpoint path it records its progress and resumes from it. The report
// is returned even when the run fails.
func Convert(ctx context.Context, src Source, sink Sink, opts Options) (*Report, error) {
	o := opts.withDefaults()
	started := time.Now()
	rep := &Report{TTL: o.TTL.String(), Started: started.UTC()}
	fail := func(err error) (*Report, error) {
		rep.Errors = append(rep.Errors, err.Error())
		rep.finish(started)
		return rep, err
	}

	var ck *Checkpoint
	resumed := false
	if o.CheckpointPath != "" {
		var err error
		if ck, err = LoadCheckpoint(o.CheckpointPath); err != nil {
			return fail(err)
		}
		resumed = ck != nil
	}
	ks, plans, err := planFamilies(ctx, src, &o, ck)
	if err != nil {
		return fail(err)
	}
	schema := schemaOf(ks, plans, &o)
	rep.Keyspace, rep.TargetKeyspace = ks.Name, schema.Keyspace
	if ck == nil {
		ck = &Checkpoint{Version: checkpointVersion, Keyspace: ks.Name, TargetKeyspace: schema.Keyspace, Families: map[string]*FamilyCheckpoint{}}
	} else if ck.Keyspace != ks.Name || ck.TargetKeyspace != schema.Keyspace {
		return fail(fmt.Errorf("checkpoint %s is for keyspace %s -> %s, not %s -> %s", o.CheckpointPath, ck.Keyspace, ck.TargetKeyspace, ks.Name, schema.Keyspace))
	}
	run := &run{opts: &o, sink: sink, ck: ck}

	if err := run.prepare(ctx, schema, resumed); err != nil {
		return fail(err)
	}
	for _, p := range plans {
		fr, err := run.family(ctx, src, p)
		rep.Families = append(rep.Families, fr)
		if err != nil {
			fr.Errors = append(fr.Errors, err.Error())
			return fail(err)
		}
	}
	if err := recordMetadata(ctx, sink, schema, &o); err != nil {
		return fail(err)
	}
	if err := sink.Flush(ctx); err != nil {
		return fail(fmt.Errorf("flush output: %w", err))
	}
	rep.finish(started)
	return rep, nil
}

func (r *Report) finish(started time.Time) {
	r.DurationSeconds = time.Since(started).Seconds()
	var cells int64
	for _, f := range r.Families {
		r.Cells += f.Cells
		cells += f.Cells
	}
	r.Cells = cells
	if r.DurationSeconds > 0 {
		r.CellsPerSecond = float64(cells) / r.DurationSeconds
	}
}

// run is the state of one Convert call.
type run struct {
	opts *Options
	sink Sink
	ck   *Checkpoint
}

// prepare creates the schema, or on resume puts the sink back where the
// checkpoint left it.
func (r *run) prepare(ctx context.Context, schema *Schema, resumed bool) error {
	rs, resumable := r.sink.(ResumableSink)
	switch {
	case resumed && r.ck.Prepared && resumable:
		if err := rs.Resume(ctx, r.ck.SinkOffset); err != nil {
			return err
		}
	default:
		if err := r.sink.Prepare(ctx, schema); err != nil {
			return fmt.Errorf("create schema: %w", err)
		}
		if err := r.sink.Flush(ctx); err != nil {
			return fmt.Errorf("create schema: %w", err)
		}
	}
	if ra, ok := r.sink.(ResumeAwareSink); ok && resumed {
		if err := ra.Resuming(ctx); err != nil {
			return err
		}
	}
	r.ck.Prepared = true
	return r.save()
}

// save makes the sink's output durable and records the checkpoint.
func (r *run) save() error {
	if r.opts.CheckpointPath == "" {
		return nil
	}
	if rs, ok := r.sink.(ResumableSink); ok {
		r.ck.SinkOffset = rs.Offset()
	}
	if r.opts.beforeCheckpoint != nil {
		if err := r.opts.beforeCheckpoint(); err != nil {
			return err
		}
	}
	return r.ck.Save(r.opts.CheckpointPath)
}

// family converts one family from its checkpointed position.
func (r *run) family(ctx context.Context, src Source, p familyPlan) (*FamilyReport, error) {
	f, m := p.family, p.mapping
	fc := r.ck.Families[f.Def.Name]
	if fc == nil {
		fc = &FamilyCheckpoint{Shape: requestedShape(m)}
		r.ck.Families[f.Def.Name] = fc
	}
	fr := &FamilyReport{
		Family: f.Def.Name, Table: m.Table.QualifiedName(), Shape: m.Table.Shape,
		Reason: m.Table.Reason, Warnings: m.Table.Warnings,
		Resumed: fc.Position.Started || fc.Done, Done: fc.Done, FamilyStats: fc.Stats,
	}
	if fc.Done {
		return fr, nil
	}
	started := time.Now()
	before := fc.Stats
	progress := startProgress(r.opts.Progress, f.Def.Name, r.opts.Totals[f.Def.Name])
	defer progress.Done()
	conv := newConverter(m, r.opts.TTL)
	stats := fc.Stats
	var lastKey []byte
	haveRow := false
	rowsSince := 0
	lastSave := time.Now()

	checkpoint := func() error {
		if err := r.sink.Flush(ctx); err != nil {
			return fmt.Errorf("flush output: %w", err)
		}
		if haveRow {
			fc.Position = Position{AfterKey: append([]byte(nil), lastKey...), Started: true}
		}
		fc.Stats = stats
		rowsSince, lastSave = 0, time.Now()
		return r.save()
	}

	err := src.Scan(ctx, f.Def.Name, fc.Position, func(ch RowChunk) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		stmts, err := conv.chunk(&ch, r.opts.Now(), &stats)
		if err != nil {
			return err
		}
		if len(stmts) > 0 {
			if err := r.sink.Write(ctx, stmts); err != nil {
				return fmt.Errorf("family %s, row %s: write: %w", f.Def.Name, formatKey(f, ch.Key), err)
			}
		}
		progress.Add(len(ch.Cells))
		if !ch.Last {
			return nil
		}
		stats.Rows++
		lastKey = append(lastKey[:0], ch.Key...)
		haveRow = true
		rowsSince++
		if r.opts.CheckpointPath != "" && (rowsSince >= r.opts.CheckpointRows || time.Since(lastSave) >= r.opts.CheckpointInterval) {
			return checkpoint()
		}
		return nil
	})
	fr.FamilyStats = stats
	fr.DurationSeconds = time.Since(started).Seconds()
	if fr.DurationSeconds > 0 {
		fr.CellsPerSecond = float64(stats.Cells+stats.Expired-before.Cells-before.Expired) / fr.DurationSeconds
	}
	if err != nil {
		return fr, fmt.Errorf("convert family %s.%s: %w", f.Keyspace, f.Def.Name, err)
	}
	fc.Done = true
	if err := checkpoint(); err != nil {
		fc.Done = false
		return fr, err
	}
	fr.Done = true
	return fr, nil
}

// requestedShape is the shape to ask Plan for to get m again.
func requestedShape(m *supercol.Mapping) supercol.Shape {
	if m.Mixed() {
		return supercol.ShapeMixed
	}
	return m.Table.Shape
}

// converter turns chunks of one family into statements.
type converter struct {
	m      *supercol.Mapping
	ts     *TableStatements
	policy TTLPolicy
	arena  Arena
	stmts  []Statement
	place  supercol.Placement
}

func newConverter(m *supercol.Mapping, policy TTLPolicy) *converter {
	return &converter{m: m, ts: NewTableStatements(m.Table), policy: policy}
}

// chunk builds the statements of ch's live cells, valid until the next
// call, counting into stats.
func (c *converter) chunk(ch *RowChunk, now time.Time, stats *FamilyStats) ([]Statement, error) {
	c.arena.Reset()
	c.stmts = c.stmts[:0]
	cols := c.m.Table.Columns
	for i := range ch.Cells {
		cell := &ch.Cells[i]
		ttl, keep := c.policy.Apply(cell, now)
		if !keep {
			stats.Expired++
			continue
		}
		if err := c.m.Map(ch.Key, cell.Super, cell.Name, &c.place); err != nil {
			return nil, err // names the family, row and column
		}
		if c.place.Column < 0 || c.place.Column >= len(cols) || len(c.place.Key) > len(cols) {
			return nil, cellError(c.m.Family, ch.Key, cell, fmt.Errorf("mapped to column %d of a %d-column table", c.place.Column, len(cols)))
		}
		col := cols[c.place.Column]
		if cell.Counter != c.m.Table.Counter {
			return nil, cellError(c.m.Family, ch.Key, cell, fmt.Errorf("counter cell %v in a table with counter=%v", cell.Counter, c.m.Table.Counter))
		}
		if cell.Counter {
			c.stmts = append(c.stmts, c.ts.Increment(&c.arena, &c.place, cell.CounterValue))
			stats.Counters++
		} else {
			if err := col.Type.Validate(cell.Value); err != nil {
				return nil, cellError(c.m.Family, ch.Key, cell, fmt.Errorf("value is not a valid %s for column %s: %w", col.Type.CQLType(), col.Name, err))
			}
			c.stmts = append(c.stmts, c.ts.Insert(&c.arena, &c.place, cell.Value, cell.Timestamp, ttl))
			if ttl > 0 {
				stats.TTLCells++
			}
		}
		stats.Cells++
	}
	return c.stmts, nil
}

// Tables returns the tables the source's families map onto, as Convert
// would plan them with opts (for reading a target back).
func Tables(ctx context.Context, src Source, opts Options) ([]*supercol.Table, error) {
	o := opts.withDefaults()
	_, plans, err := planFamilies(ctx, src, &o, nil)
	if err != nil {
		return nil, err
	}
	tables := make([]*supercol.Table, len(plans))
	for i, p := range plans {
		tables[i] = p.mapping.Table
	}
	return tables, nil
}
