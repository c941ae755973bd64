package badgerstore

import (
	"bytes"
	"testing"
)

// FuzzDecodeRecord: decoding never panics, and what decodes re-encodes to
// the same bytes.
func FuzzDecodeRecord(f *testing.F) {
	for _, r := range []record{
		{timestamp: 5, value: []byte("v")},
		{flags: flagTombstone, timestamp: -1, deletedAt: 99},
		{flags: flagExpiring | flagRawName | flagRawSuper, timestamp: 1, ttl: 60, expiresAt: 1234, rawName: []byte("n"), rawSuper: []byte("s"), value: []byte{}},
		{flags: flagCounter, timestamp: 7, value: []byte{0, 0, 0, 0, 0, 0, 0, 3}},
		{flags: flagRawKey | flagHasRanges, rawName: bytes.Repeat([]byte{0xff}, 300)},
	} {
		f.Add(appendRecord(nil, &r))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var r record
		if err := decodeRecord(b, &r); err != nil {
			return
		}
		again := appendRecord(nil, &r)
		var r2 record
		if err := decodeRecord(again, &r2); err != nil {
			t.Fatalf("re-encoded record does not decode: %v", err)
		}
		if !bytes.Equal(appendRecord(nil, &r2), again) {
			t.Fatalf("record encoding is not stable: %x", b)
		}
		_ = r.counterValue()
		_ = localDeletionTime(&r)
	})
}

// FuzzDecodeRangeTombstone: decoding never panics; decoded bounds survive
// an encode/decode round trip.
func FuzzDecodeRangeTombstone(f *testing.F) {
	for _, rt := range []rangeTombstone{
		{lower: []byte("a"), upper: []byte("b"), ts: 3, deletedAt: 4},
		{upper: []byte{0xff}, ts: -9},
		{},
	} {
		rec := record{flags: flagTombstone, timestamp: rt.ts, deletedAt: rt.deletedAt, value: rangeTombstonePayload(nil, &rt)}
		f.Add(appendRecord(nil, &rec))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		rt, err := decodeRangeTombstone(b)
		if err != nil {
			return
		}
		rec := record{flags: flagTombstone, timestamp: rt.ts, deletedAt: rt.deletedAt, value: rangeTombstonePayload(nil, &rt)}
		back, err := decodeRangeTombstone(appendRecord(nil, &rec))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(back.lower, rt.lower) || !bytes.Equal(back.upper, rt.upper) || (back.lower == nil) != (rt.lower == nil) || (back.upper == nil) != (rt.upper == nil) || back.ts != rt.ts {
			t.Fatalf("range tombstone round trip: %+v -> %+v", rt, back)
		}
		_ = rt.covers([]byte("m"), 0)
	})
}
