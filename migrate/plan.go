package migrate

import (
	"context"
	"fmt"

	"github.com/thriftbridge/thriftbridge/supercol"
)

// Partitions above either limit are flagged by Plan.
const (
	LargePartitionBytes = 100 << 20
	LargePartitionCells = 100_000
	// maxLargeListed bounds the large partitions a plan lists per family.
	maxLargeListed = 20
)

// RowSize is the size of one legacy row (one CQL partition).
type RowSize struct {
	Key   string `json:"key"`
	Cells int64  `json:"cells"`
	Bytes int64  `json:"bytes"`
}

// FamilyPlan is what converting one family involves.
type FamilyPlan struct {
	Family   string         `json:"family"`
	Table    string         `json:"table"`
	Shape    supercol.Shape `json:"shape"`
	Reason   string         `json:"reason"`
	Warnings []string       `json:"warnings,omitempty"`
	// CreateTable is the table's DDL.
	CreateTable string   `json:"create_table"`
	Indexes     []string `json:"create_indexes,omitempty"`
	Rows        int64    `json:"rows"`
	// Cells counts live cells; TTLCells those that expire, Counters the
	// counter cells and Expired those already expired (not converted).
	Cells    int64   `json:"cells"`
	TTLCells int64   `json:"ttl_cells"`
	Counters int64   `json:"counters"`
	Expired  int64   `json:"expired_cells"`
	Widest   RowSize `json:"widest_row"`
	// Large lists (up to 20 of) the partitions over 100 MB or 100k cells;
	// LargeCount counts them all.
	Large      []RowSize `json:"large_partitions,omitempty"`
	LargeCount int64     `json:"large_partition_count,omitempty"`
	Suggestion string    `json:"suggestion,omitempty"`
}

// PlanReport is the plan of a keyspace.
type PlanReport struct {
	Keyspace string        `json:"keyspace"`
	Families []*FamilyPlan `json:"families"`
}

// Totals returns the live cells per family (for progress bars).
func (p *PlanReport) Totals() map[string]int64 {
	t := map[string]int64{}
	for _, f := range p.Families {
		t[f.Family] = f.Cells
	}
	return t
}

// Plan scans src and describes each family's conversion: its shape and
// why, its size, its widest row and the partitions too large for CQL.
func Plan(ctx context.Context, src Source, opts Options) (*PlanReport, error) {
	o := opts.withDefaults()
	ks, plans, err := planFamilies(ctx, src, &o, nil)
	if err != nil {
		return nil, err
	}
	rep := &PlanReport{Keyspace: ks.Name}
	for _, p := range plans {
		t := p.mapping.Table
		fp := &FamilyPlan{Family: p.family.Def.Name, Table: t.QualifiedName(), Shape: t.Shape, Reason: t.Reason,
			Warnings: t.Warnings, CreateTable: t.CreateTableCQL(), Indexes: t.CreateIndexCQL()}
		rep.Families = append(rep.Families, fp)
		var row RowSize
		err := src.Scan(ctx, p.family.Def.Name, Position{}, func(ch RowChunk) error {
			now := o.Now().Unix()
			for i := range ch.Cells {
				c := &ch.Cells[i]
				if exp := ExpiresAt(c); exp != 0 && exp <= now && !c.Counter {
					fp.Expired++
					continue
				}
				row.Cells++
				row.Bytes += int64(len(c.Super) + len(c.Name) + len(c.Value))
				if c.Counter {
					fp.Counters++
				} else if ExpiresAt(c) != 0 {
					fp.TTLCells++
				}
			}
			if !ch.Last {
				return nil
			}
			fp.Rows++
			fp.Cells += row.Cells
			row.Bytes += int64(len(ch.Key))
			if row.Cells > fp.Widest.Cells {
				fp.Widest = RowSize{Key: formatKey(p.family, ch.Key), Cells: row.Cells, Bytes: row.Bytes}
			}
			if row.Cells > LargePartitionCells || row.Bytes > LargePartitionBytes {
				fp.LargeCount++
				if len(fp.Large) < maxLargeListed {
					fp.Large = append(fp.Large, RowSize{Key: formatKey(p.family, ch.Key), Cells: row.Cells, Bytes: row.Bytes})
				}
			}
			row = RowSize{}
			return nil
		})
		if err != nil {
			return rep, fmt.Errorf("plan family %s.%s: %w", ks.Name, p.family.Def.Name, err)
		}
		if fp.LargeCount > 0 {
			fp.Suggestion = bucketSuggestion(t, fp)
		}
	}
	return rep, nil
}

// bucketSuggestion proposes splitting large partitions with a bucket
// column in the partition key.
func bucketSuggestion(t *supercol.Table, fp *FamilyPlan) string {
	first := ""
	for _, c := range t.Columns {
		if c.Kind == supercol.Clustering {
			first = c.Name
			break
		}
	}
	buckets := fp.Widest.Cells/(LargePartitionCells/2) + 1
	if b := fp.Widest.Bytes/(LargePartitionBytes/2) + 1; b > buckets {
		buckets = b
	}
	if first == "" {
		return fmt.Sprintf("%d partitions exceed 100 MB or 100k cells; split them into about %d buckets with a bucket column in the partition key, PRIMARY KEY ((key, bucket), ...)", fp.LargeCount, buckets)
	}
	return fmt.Sprintf("%d partitions exceed 100 MB or 100k cells (widest: %d cells, %d bytes); add a bucket column to the partition key, PRIMARY KEY ((key, bucket), %s, ...), with bucket derived from %s (a time window, or a hash modulo about %d), so that no bucket exceeds 50k cells or 50 MB",
		fp.LargeCount, fp.Widest.Cells, fp.Widest.Bytes, supercol.QuoteIdent(first), supercol.QuoteIdent(first), buckets)
}
