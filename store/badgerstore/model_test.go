package badgerstore

import (
	"bytes"
	"fmt"
	"math/rand"
	"sort"
	"testing"
	"time"

	"github.com/thriftbridge/thriftbridge/store"
)

// modelRow is a naive reference of one row's semantics: every write is
// kept and reads resolve them from scratch, with none of the engine's
// in-place reconciliation, key encodings or tombstone bookkeeping.
type modelRow struct {
	writes []modelWrite
	rowDel int64
	supers map[string]int64 // super column deletions
	ranges []modelRange
}

type modelWrite struct {
	super, name string
	value       string
	ts          int64
	deleted     bool
	expiresAt   int64 // 0: never
}

type modelRange struct {
	lo, hi string // inclusive; "" is open
	ts     int64
}

func (m *modelRow) live(super, name string, now int64) (modelWrite, bool) {
	var best *modelWrite
	for i := range m.writes {
		w := &m.writes[i]
		if w.super != super || w.name != name {
			continue
		}
		if best == nil || modelWins(w, best, now) {
			best = w
		}
	}
	if best == nil || best.deleted || (best.expiresAt != 0 && now >= best.expiresAt) {
		return modelWrite{}, false
	}
	if best.ts <= m.rowDel || (super != "" && best.ts <= m.supers[super]) {
		return modelWrite{}, false
	}
	key := name
	if super != "" {
		key = super
	}
	for _, r := range m.ranges {
		if best.ts <= r.ts && (r.lo == "" || key >= r.lo) && (r.hi == "" || key <= r.hi) {
			return modelWrite{}, false
		}
	}
	return *best, true
}

func modelWins(a, b *modelWrite, now int64) bool {
	if a.ts != b.ts {
		return a.ts > b.ts
	}
	aDead := a.deleted || (a.expiresAt != 0 && now >= a.expiresAt)
	bDead := b.deleted || (b.expiresAt != 0 && now >= b.expiresAt)
	if aDead != bDead {
		return aDead
	}
	if aDead {
		return false
	}
	return a.value > b.value
}

// TestEngineAgainstModel applies random operations to the engine and to
// the model and compares forward, reversed, bounded and counted reads.
func TestEngineAgainstModel(t *testing.T) {
	for _, super := range []bool{false, true} {
		t.Run(fmt.Sprintf("super=%v", super), func(t *testing.T) {
			f := newFixture(t)
			def := store.TableDef{Name: "cf", Comparator: "UTF8Type"}
			if super {
				def.Super, def.SubComparator = true, "UTF8Type"
			}
			tb := f.table(def)
			rng := rand.New(rand.NewSource(42))
			rows := map[string]*modelRow{}
			names := []string{"a", "b", "ba", "c", "d", "e", "z"}
			pick := func() string { return names[rng.Intn(len(names))] }
			for step := 0; step < 600; step++ {
				key := fmt.Sprintf("r%d", rng.Intn(4))
				m := rows[key]
				if m == nil {
					m = &modelRow{rowDel: noDeletion, supers: map[string]int64{}}
					rows[key] = m
				}
				ts := int64(rng.Intn(40))
				sc := ""
				if super {
					sc = pick()
				}
				var op store.Op
				switch r := rng.Intn(20); {
				case r < 12:
					op = store.Op{Kind: store.OpPut, Name: []byte(pick()), Value: []byte(fmt.Sprint(rng.Intn(5))), Timestamp: ts}
					w := modelWrite{super: sc, name: string(op.Name), value: string(op.Value), ts: ts}
					if rng.Intn(5) == 0 {
						op.TTL = int32(1 + rng.Intn(3))
						w.expiresAt = f.clock.Now().Unix() + int64(op.TTL)
					}
					m.writes = append(m.writes, w)
				case r < 16:
					op = store.Op{Kind: store.OpDeleteCell, Name: []byte(pick()), Timestamp: ts}
					m.writes = append(m.writes, modelWrite{super: sc, name: string(op.Name), ts: ts, deleted: true})
				case r < 17:
					op = store.Op{Kind: store.OpDeleteRow, Timestamp: ts}
					m.rowDel = max(m.rowDel, ts)
				case r < 18 && super:
					op = store.Op{Kind: store.OpDeleteSuper, Timestamp: ts}
					m.supers[sc] = max(m.supers[sc], ts)
				default:
					lo, hi := pick(), pick()
					if lo > hi {
						lo, hi = hi, lo
					}
					if rng.Intn(4) == 0 {
						lo = ""
					}
					op = store.Op{Kind: store.OpDeleteRange, Start: []byte(lo), Finish: []byte(hi), Timestamp: ts}
					m.ranges = append(m.ranges, modelRange{lo: lo, hi: hi, ts: ts})
				}
				if super && op.Kind != store.OpDeleteRow && op.Kind != store.OpDeleteRange {
					op.Super = []byte(sc)
				}
				f.apply(store.RowMutation{Table: tb, Key: []byte(key), Ops: []store.Op{op}})
				if rng.Intn(50) == 0 {
					f.clock.Advance(time.Second)
				}
				if step%20 == 19 {
					for key, m := range rows {
						compareWithModel(t, f, tb, key, m, super, names, rng, step)
					}
				}
			}
		})
	}
}

func compareWithModel(t *testing.T, f *fixture, tb *store.Table, key string, m *modelRow, super bool, names []string, rng *rand.Rand, step int) {
	t.Helper()
	now := f.clock.Now().Unix()
	// The model's view: "super/name=value@ts" for live cells in order.
	type cell struct{ super, name, s string }
	var want []cell
	supers := []string{""}
	if super {
		supers = names
	}
	for _, sc := range supers {
		for _, n := range names {
			if w, ok := m.live(sc, n, now); ok {
				want = append(want, cell{sc, n, fmt.Sprintf("%s/%s=%s@%d", sc, n, w.value, w.ts)})
			}
		}
	}
	sort.Slice(want, func(i, j int) bool {
		if want[i].super != want[j].super {
			return want[i].super < want[j].super
		}
		return want[i].name < want[j].name
	})
	lo, hi := names[rng.Intn(len(names))], names[rng.Intn(len(names))]
	if lo > hi {
		lo, hi = hi, lo
	}
	count := 1 + rng.Intn(6)
	for _, reversed := range []bool{false, true} {
		q := store.SliceQuery{Start: []byte(lo), Finish: []byte(hi), Count: count, Reversed: reversed}
		if reversed {
			q.Start, q.Finish = q.Finish, q.Start
		}
		res := f.slice(tb, key, q)
		var got []string
		for _, s := range res.Supers {
			for _, c := range s.Cells {
				got = append(got, fmt.Sprintf("%s/%s=%s@%d", s.Name, c.Name, c.Value, c.Timestamp))
			}
		}
		for _, c := range res.Cells {
			got = append(got, fmt.Sprintf("/%s=%s@%d", c.Name, c.Value, c.Timestamp))
		}
		// Expected: the model's cells in [lo, hi] at the level the query
		// selects, in traversal order, count of them (whole super columns).
		var exp []string
		var groups []string
		for _, c := range want {
			k := c.name
			if super {
				k = c.super
			}
			if k < lo || k > hi {
				continue
			}
			if super && (len(groups) == 0 || groups[len(groups)-1] != c.super) {
				groups = append(groups, c.super)
			}
			exp = append(exp, c.s)
		}
		if reversed {
			for i, j := 0, len(exp)-1; i < j; i, j = i+1, j-1 {
				exp[i], exp[j] = exp[j], exp[i]
			}
			for i, j := 0, len(groups)-1; i < j; i, j = i+1, j-1 {
				groups[i], groups[j] = groups[j], groups[i]
			}
		}
		if super {
			keep := map[string]bool{}
			for i, g := range groups {
				if i < count {
					keep[g] = true
				}
			}
			var capped []string
			for _, e := range exp {
				if keep[e[:bytes.IndexByte([]byte(e), '/')]] {
					capped = append(capped, e)
				}
			}
			exp = capped
		} else if len(exp) > count {
			exp = exp[:count]
		}
		if fmt.Sprint(got) != fmt.Sprint(exp) {
			t.Fatalf("step %d row %s range [%s,%s] count %d reversed %v:\n got  %v\n want %v", step, key, lo, hi, count, reversed, got, exp)
		}
		n := f.count(tb, key, q)
		wantN := len(exp)
		if super {
			wantN = min(len(groups), count)
		}
		if n != wantN {
			t.Fatalf("step %d row %s: count %d, want %d", step, key, n, wantN)
		}
	}
}
