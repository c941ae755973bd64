package legacy

import (
	"bytes"

	"github.com/thriftbridge/thriftbridge/store"
	"github.com/thriftbridge/thriftbridge/store/partition"
	"github.com/thriftbridge/thriftbridge/thrift/gen-go/cassandra"
)

// rowRange is a validated KeyRange as one or two scans in ring order (a
// wrapping token range is two).
type rowRange struct {
	scans []store.ScanQuery
}

// parseToken parses a token string of the node's partitioner; Cassandra
// dropped the connection on a malformed one, thriftd refuses it.
func parseToken(p partition.Partitioner, s string) (partition.Token, error) {
	t, err := p.ParseToken(s)
	if err != nil {
		return nil, iref("%v", err)
	}
	return t, nil
}

// validateKeyRange checks a KeyRange as Cassandra does (row_filter and
// super column checks are the caller's) and resolves it into scans.
func validateKeyRange(p partition.Partitioner, r *cassandra.KeyRange) (*rowRange, error) {
	if (r.StartKey == nil) == (r.StartToken == nil) || (r.EndKey == nil) == (r.EndToken == nil) {
		return nil, ire("exactly one each of {start key, start token} and {end key, end token} must be specified")
	}
	if r.StartToken != nil && r.EndKey != nil {
		return nil, ire("start token + end key is not a supported key range")
	}
	var startTok, endTok partition.Token
	var err error
	if r.StartToken != nil {
		if startTok, err = parseToken(p, *r.StartToken); err != nil {
			return nil, err
		}
	}
	if r.EndToken != nil {
		if endTok, err = parseToken(p, *r.EndToken); err != nil {
			return nil, err
		}
	}
	switch {
	case r.StartKey != nil && r.EndKey != nil:
		s, e := tokenOf(p, r.StartKey), tokenOf(p, r.EndKey)
		if bytes.Compare(s, e) > 0 && len(e) > 0 {
			if p.Ordered() {
				return nil, ire("start key must sort before (or equal to) finish key in your partitioner!")
			}
			return nil, ire("start key's token sorts after end key's token.  this is not allowed; you probably should not specify end key at all except with an ordered partitioner")
		}
	case r.StartKey != nil:
		if len(r.StartKey) > 0 && len(endTok) > 0 && bytes.Compare(tokenOf(p, r.StartKey), endTok) > 0 {
			return nil, ire("Start key's token sorts after end token")
		}
	}
	if r.Count <= 0 {
		return nil, ire("maxRows must be positive")
	}
	rr := &rowRange{}
	if r.StartKey != nil {
		q := store.ScanQuery{Start: keyBound(r.StartKey)}
		if r.EndKey != nil {
			q.End = keyBound(r.EndKey)
		} else {
			q.End = tokenBound(endTok)
		}
		rr.scans = []store.ScanQuery{q}
		return rr, nil
	}
	// (start, end] of tokens: Y..Y is the whole ring, and a range whose
	// end precedes its start wraps around.
	if len(endTok) == 0 || bytes.Compare(startTok, endTok) < 0 {
		rr.scans = []store.ScanQuery{{Start: tokenBound(startTok), End: tokenBound(endTok)}}
		return rr, nil
	}
	rr.scans = []store.ScanQuery{{Start: tokenBound(startTok)}}
	if len(startTok) > 0 {
		rr.scans = append(rr.scans, store.ScanQuery{End: tokenBound(endTok)})
	}
	return rr, nil
}

// tokenOf is a key's token; the empty key stands for the minimum.
func tokenOf(p partition.Partitioner, key []byte) partition.Token {
	if len(key) == 0 {
		return p.MinToken()
	}
	return p.Token(key)
}

// keyBound is a row bound at a key; the empty key is open.
func keyBound(key []byte) store.RowBound {
	if len(key) == 0 {
		return store.RowBound{Kind: store.BoundOpen}
	}
	return store.RowBound{Kind: store.BoundKey, Key: key}
}

// tokenBound is a row bound at a token; the minimum token is open.
func tokenBound(t partition.Token) store.RowBound {
	if len(t) == 0 {
		return store.RowBound{Kind: store.BoundOpen}
	}
	return store.RowBound{Kind: store.BoundToken, Token: t}
}
