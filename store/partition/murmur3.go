package partition

import (
	"encoding/binary"
	"math/bits"
)

// Constants of MurmurHash3 x64_128.
const (
	murmurC1 = 0x87c37b91114253d5
	murmurC2 = 0x4cf5ad432745937f
)

// cassandraMurmur3 returns h1 of MurmurHash3 x64_128 with seed 0 as
// Cassandra's MurmurHash.hash3_x64_128 computes it. It differs from the
// reference algorithm in one place: Cassandra reads the tail bytes (the
// last len(key) mod 16) as Java bytes widened to long, so a tail byte
// >= 0x80 contributes 0xFFFF...FFxx instead of 0xxx.
func cassandraMurmur3(key []byte) uint64 {
	var h1, h2 uint64
	n := len(key)
	blocks := key[:n&^15]
	for len(blocks) >= 16 {
		k1 := binary.LittleEndian.Uint64(blocks)
		k2 := binary.LittleEndian.Uint64(blocks[8:])
		blocks = blocks[16:]

		h1 ^= mixK1(k1)
		h1 = bits.RotateLeft64(h1, 27) + h2
		h1 = h1*5 + 0x52dce729

		h2 ^= mixK2(k2)
		h2 = bits.RotateLeft64(h2, 31) + h1
		h2 = h2*5 + 0x38495ab5
	}

	tail := key[n&^15:]
	var k1, k2 uint64
	switch len(tail) {
	case 15:
		k2 ^= signExtended(tail[14]) << 48
		fallthrough
	case 14:
		k2 ^= signExtended(tail[13]) << 40
		fallthrough
	case 13:
		k2 ^= signExtended(tail[12]) << 32
		fallthrough
	case 12:
		k2 ^= signExtended(tail[11]) << 24
		fallthrough
	case 11:
		k2 ^= signExtended(tail[10]) << 16
		fallthrough
	case 10:
		k2 ^= signExtended(tail[9]) << 8
		fallthrough
	case 9:
		k2 ^= signExtended(tail[8])
		h2 ^= mixK2(k2)
		fallthrough
	case 8:
		k1 ^= signExtended(tail[7]) << 56
		fallthrough
	case 7:
		k1 ^= signExtended(tail[6]) << 48
		fallthrough
	case 6:
		k1 ^= signExtended(tail[5]) << 40
		fallthrough
	case 5:
		k1 ^= signExtended(tail[4]) << 32
		fallthrough
	case 4:
		k1 ^= signExtended(tail[3]) << 24
		fallthrough
	case 3:
		k1 ^= signExtended(tail[2]) << 16
		fallthrough
	case 2:
		k1 ^= signExtended(tail[1]) << 8
		fallthrough
	case 1:
		k1 ^= signExtended(tail[0])
		h1 ^= mixK1(k1)
	}

	h1 ^= uint64(n)
	h2 ^= uint64(n)
	h1 += h2
	h2 += h1
	h1 = fmix64(h1)
	h2 = fmix64(h2)
	return h1 + h2
}

// signExtended widens a byte as Java's (long) cast of a signed byte does.
func signExtended(b byte) uint64 { return uint64(int64(int8(b))) }

func mixK1(k uint64) uint64 {
	k *= murmurC1
	k = bits.RotateLeft64(k, 31)
	return k * murmurC2
}

func mixK2(k uint64) uint64 {
	k *= murmurC2
	k = bits.RotateLeft64(k, 33)
	return k * murmurC1
}

func fmix64(k uint64) uint64 {
	k ^= k >> 33
	k *= 0xff51afd7ed558ccd
	k ^= k >> 33
	k *= 0xc4ceb9fe1a85ec53
	k ^= k >> 33
	return k
}
