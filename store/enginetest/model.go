package enginetest

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"math/rand"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/thriftbridge/thriftbridge/store"
)

// noDeletion is a deletion timestamp that shadows nothing.
const noDeletion = math.MinInt64

// modelRow is a naive reference of one row's semantics: every write is
// kept and reads resolve them from scratch, replaying the writes of a cell
// in order, each reconciled with the winner so far as of its own write
// time (as Cassandra reconciles: two live cells of one timestamp keep the
// greater value even if that one expires later), with none of the engine's
// key encodings or tombstone bookkeeping.
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
	at          int64 // when it was written (Unix seconds)
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
		if best == nil || modelWins(w, best, w.at) {
			best = w
		}
	}
	if best == nil || best.deleted || (best.expiresAt != 0 && now >= best.expiresAt) {
		return modelWrite{}, false
	}
	if best.ts <= m.rowDel {
		return modelWrite{}, false
	}
	if del, ok := m.supers[super]; ok && super != "" && best.ts <= del {
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

// modelWins reports whether write a wins over b, reconciled at now:
// the higher timestamp; at equal timestamps a dead write (a deletion or
// an expired cell); between two live ones the greater value, then the
// later expiry (a cell that never expires last). Which of two dead ones
// wins does not show.
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
	if a.value != b.value {
		return a.value > b.value
	}
	expiry := func(w *modelWrite) int64 {
		if w.expiresAt == 0 {
			return math.MaxInt64
		}
		return w.expiresAt
	}
	return expiry(a) > expiry(b)
}

// testEngineAgainstModel applies random operations to the engine and to
// the model and compares forward, reversed, bounded and counted reads; in
// a Standard family also filtered scans (the column "a" is indexed, so
// stale index entries abound) and conditions. Without a settable clock no
// write expires: the model could not know when the engine reads.
func testEngineAgainstModel(t *testing.T, h *Harness) {
	for _, c := range modelRuns(h.ModelSeeds) {
		super, seed := c.super, c.seed
		t.Run(fmt.Sprintf("super=%v/seed=%d", super, seed), func(t *testing.T) {
			f := newEnv(t, h)
			def := store.TableDef{Name: "cf", Comparator: "UTF8Type"}
			if super {
				def.Super, def.SubComparator = true, "UTF8Type"
			} else {
				kind := int32(0)
				def.Columns = []store.ColumnDef{{Name: []byte("a"), Validator: "BytesType", IndexType: &kind}}
			}
			tb := f.table(def)
			rng := rand.New(rand.NewSource(seed))
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
					w := modelWrite{super: sc, name: string(op.Name), value: string(op.Value), ts: ts, at: f.clock.Now().Unix()}
					if h.Clock && rng.Intn(5) == 0 {
						op.TTL = int32(1 + rng.Intn(3))
						w.expiresAt = f.clock.Now().Unix() + int64(op.TTL)
					}
					m.writes = append(m.writes, w)
				case r < 16:
					op = store.Op{Kind: store.OpDeleteCell, Name: []byte(pick()), Timestamp: ts}
					m.writes = append(m.writes, modelWrite{super: sc, name: string(op.Name), ts: ts, deleted: true, at: f.clock.Now().Unix()})
				case r < 17:
					op = store.Op{Kind: store.OpDeleteRow, Timestamp: ts}
					m.rowDel = max(m.rowDel, ts)
				case r < 18 && super:
					op = store.Op{Kind: store.OpDeleteSuper, Timestamp: ts}
					if del, ok := m.supers[sc]; !ok || ts > del {
						m.supers[sc] = ts
					}
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
				if h.Clock && rng.Intn(50) == 0 {
					f.advance(time.Second)
				}
				if step%20 == 19 {
					for _, key := range sortedKeys(rows) {
						m := rows[key]
						compareWithModel(t, f, tb, key, m, super, names, rng, step)
					}
					if !super {
						for i := 0; i < 8; i++ {
							compareFilterWithModel(t, f, tb, rows, names, rng, step)
							compareConditionWithModel(t, f, tb, rows, names, rng, step)
						}
					}
				}
			}
		})
	}
}

func compareWithModel(t *testing.T, f *env, tb *store.Table, key string, m *modelRow, super bool, names []string, rng *rand.Rand, step int) {
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
			var dbg []string
			for _, w := range m.writes {
				dbg = append(dbg, fmt.Sprintf("%s/%s=%s@%d del=%v exp=%d at=%d", w.super, w.name, w.value, w.ts, w.deleted, w.expiresAt, w.at))
			}
			t.Fatalf("step %d row %s range [%s,%s] count %d reversed %v:\n got  %v\n want %v\nnow %d rowDel %d supers %v ranges %+v\n%s", step, key, lo, hi, count, reversed, got, exp, now, m.rowDel, m.supers, m.ranges, strings.Join(dbg, "\n"))
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

// modelSeeds are the random sequences the model test plays; each run is
// deterministic, so a failing seed reproduces.
var modelSeeds = []int64{42, 1, 2, 3, 4, 5, 6, 7}

type modelRun struct {
	super bool
	seed  int64
}

func modelRuns(n int) []modelRun {
	seeds := modelSeeds
	if n > 0 && n < len(seeds) {
		seeds = seeds[:n]
	}
	var runs []modelRun
	for _, super := range []bool{false, true} {
		for _, seed := range seeds {
			runs = append(runs, modelRun{super, seed})
		}
	}
	return runs
}

func sortedKeys(rows map[string]*modelRow) []string {
	keys := make([]string, 0, len(rows))
	for k := range rows {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// compareFilterWithModel scans every row with a random filter and checks
// the rows visited against the model's.
func compareFilterWithModel(t *testing.T, f *env, tb *store.Table, rows map[string]*modelRow, names []string, rng *rand.Rand, step int) {
	t.Helper()
	now := f.clock.Now().Unix()
	ops := []struct {
		op   store.ExprOp
		text string
		ok   func(c int) bool
	}{
		{store.ExprEQ, "=", func(c int) bool { return c == 0 }},
		{store.ExprGT, ">", func(c int) bool { return c > 0 }},
		{store.ExprGTE, ">=", func(c int) bool { return c >= 0 }},
		{store.ExprLT, "<", func(c int) bool { return c < 0 }},
		{store.ExprLTE, "<=", func(c int) bool { return c <= 0 }},
	}
	var filter []store.Expression
	var text []string
	var checks []func(m *modelRow) bool
	for n := 1 + rng.Intn(2); n > 0; n-- {
		name := names[rng.Intn(len(names))]
		if rng.Intn(2) == 0 {
			name = "a" // the indexed column
		}
		o := ops[rng.Intn(len(ops))]
		if rng.Intn(2) == 0 {
			o = ops[0] // EQ, which the index serves
		}
		value := fmt.Sprint(rng.Intn(5))
		filter = append(filter, store.Expression{Column: []byte(name), Op: o.op, Value: []byte(value)})
		text = append(text, name+o.text+value)
		checks = append(checks, func(m *modelRow) bool {
			w, ok := m.live("", name, now)
			return ok && o.ok(bytes.Compare([]byte(w.value), []byte(value)))
		})
	}
	var want []string
	for _, key := range sortedKeys(rows) {
		m := rows[key]
		match := true
		for _, c := range checks {
			match = match && c(m)
		}
		if match {
			want = append(want, key)
		}
	}
	var got []string
	var res store.SliceResult
	err := f.e.Scan(context.Background(), tb, &store.ScanQuery{Filter: filter}, &res, func(key []byte) (bool, error) {
		got = append(got, string(key))
		return true, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(got)
	sort.Strings(want)
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("step %d filter %v:\n got  %v\n want %v", step, text, got, want)
	}
}

// compareConditionWithModel evaluates a random condition on a random row
// through ApplyIf with no operation, and checks the decision and the
// cells reported against the model's.
func compareConditionWithModel(t *testing.T, f *env, tb *store.Table, rows map[string]*modelRow, names []string, rng *rand.Rand, step int) {
	t.Helper()
	now := f.clock.Now().Unix()
	key := fmt.Sprintf("r%d", rng.Intn(4))
	m := rows[key]
	live := func(name string) (modelWrite, bool) {
		if m == nil {
			return modelWrite{}, false
		}
		return m.live("", name, now)
	}
	var cond store.Condition
	want := true
	var current []string // the cells ApplyIf must report, in order
	if rng.Intn(4) == 0 {
		cond.RowEmpty = true
		for _, n := range names {
			if w, ok := live(n); ok {
				want = false
				current = append(current, fmt.Sprintf("%s=%s@%d", n, w.value, w.ts))
				break
			}
		}
	} else {
		seen := map[string]bool{}
		for n := 1 + rng.Intn(3); n > 0; n-- {
			name := names[rng.Intn(len(names))]
			w, ok := live(name)
			e := store.ExpectedColumn{Name: []byte(name)}
			switch r := rng.Intn(3); {
			case r == 0:
				e.Absent = true
				want = want && !ok
			case r == 1 && ok:
				e.Value = []byte(w.value) // what it holds, most of the time
				if rng.Intn(4) == 0 {
					e.Value = []byte(fmt.Sprint(rng.Intn(5)))
				}
				want = want && ok && w.value == string(e.Value)
			default:
				e.Value = []byte(fmt.Sprint(rng.Intn(5)))
				want = want && ok && w.value == string(e.Value)
			}
			cond.Columns = append(cond.Columns, e)
			seen[name] = true
		}
		for _, n := range names {
			if w, ok := live(n); ok && seen[n] {
				current = append(current, fmt.Sprintf("%s=%s@%d", n, w.value, w.ts))
			}
		}
	}
	var cur store.SliceResult
	applied, err := f.e.ApplyIf(context.Background(), &store.RowMutation{Table: tb, Key: []byte(key)}, &cond, &cur)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range cur.Cells {
		got = append(got, fmt.Sprintf("%s=%s@%d", c.Name, c.Value, c.Timestamp))
	}
	if applied != want || fmt.Sprint(got) != fmt.Sprint(current) {
		t.Fatalf("step %d row %s condition %+v: applied %v current %v, want %v %v", step, key, cond, applied, got, want, current)
	}
}
