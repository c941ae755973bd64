package conformance

import "testing"

// ttlSlack is how many seconds below the TTL written a backend that
// reports the TTL left (backend divergence remaining-ttl) may read it
// back: the seconds between a write and its read in one test.
const ttlSlack = 10

// TTLIs reports whether a column's ttl reads back as want: exactly, or
// on a backend that reports the TTL left, want or at most ttlSlack
// seconds less.
func (e *Env) TTLIs(got *int32, want int32) bool {
	e.T.Helper()
	return ttlMatches(e.T, e.Target, got, want)
}

func ttlMatches(t testing.TB, target Target, got *int32, want int32) bool {
	t.Helper()
	switch {
	case got == nil:
		return false
	case *got == want:
		return true
	}
	return onBackend(t, target, "remaining-ttl") && *got < want && *got >= want-ttlSlack && *got > 0
}

// alignTTLs sets each "ttl" of got (a result in the vectors' JSON shape)
// that matches want's on a backend that reports the TTL left to want's
// value, so that the trees compare equal but for real differences.
func alignTTLs(t testing.TB, target Target, got, want any) {
	switch g := got.(type) {
	case map[string]any:
		w, ok := want.(map[string]any)
		if !ok {
			return
		}
		for k, gv := range g {
			wv := w[k]
			if k == "ttl" {
				gn, gok := gv.(float64)
				wn, wok := wv.(float64)
				if gok && wok && gn != wn {
					n := int32(gn)
					if ttlMatches(t, target, &n, int32(wn)) {
						g[k] = wv
					}
				}
				continue
			}
			alignTTLs(t, target, gv, wv)
		}
	case []any:
		w, ok := want.([]any)
		if !ok {
			return
		}
		for i := range min(len(g), len(w)) {
			alignTTLs(t, target, g[i], w[i])
		}
	}
}
