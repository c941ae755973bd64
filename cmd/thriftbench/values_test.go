package main

import (
	"bytes"
	"math/rand/v2"
	"testing"
)

func TestValuesRepeatIsOneValue(t *testing.T) {
	p := newParams(&loadConfig{ValueSize: 64, Values: valuesRepeat, Seed: 1})
	rng := rand.New(rand.NewPCG(1, 2))
	first := p.value(rng)
	if len(first) != 64 || bytes.Equal(first, make([]byte, 64)) {
		t.Fatalf("value %x: want 64 random bytes", first)
	}
	for range 100 {
		if v := p.value(rng); !bytes.Equal(v, first) {
			t.Fatalf("repeat gave %x after %x", v, first)
		}
	}
}

func TestValuesDistinctDiffer(t *testing.T) {
	p := newParams(&loadConfig{ValueSize: 64, Values: valuesDistinct, Seed: 1})
	rng := rand.New(rand.NewPCG(1, 2))
	seen := map[string]bool{}
	for range 1000 {
		v := p.value(rng)
		if len(v) != 64 || cap(v) != 64 {
			t.Fatalf("value of len %d cap %d, want 64 and 64 (an append must not reach the pool)", len(v), cap(v))
		}
		seen[string(v)] = true
	}
	// 1000 offsets drawn from a pool of a mebibyte: a few may repeat.
	if len(seen) < 990 {
		t.Fatalf("%d different values of 1000", len(seen))
	}
	// The same seed draws the same values on every server.
	again := newParams(&loadConfig{ValueSize: 64, Values: valuesDistinct, Seed: 1})
	if !bytes.Equal(p.values, again.values) {
		t.Fatal("the pool differs for one seed")
	}
}

func TestValuesOfSizeZero(t *testing.T) {
	for _, kind := range []string{valuesRepeat, valuesDistinct} {
		p := newParams(&loadConfig{ValueSize: 0, Values: kind, Seed: 1})
		if v := p.value(rand.New(rand.NewPCG(1, 2))); len(v) != 0 {
			t.Fatalf("%s: value of %d bytes, want none", kind, len(v))
		}
	}
}
