package marshal

import (
	"bytes"
	"encoding/hex"
	"net/netip"
	"strconv"
	"strings"
)

// InetAddressType is Cassandra's InetAddressType: a 4-byte IPv4 or 16-byte
// IPv6 address, ordered as raw bytes (so IPv4 and IPv6 interleave).
type InetAddressType struct{}

// The key of an address is keyPresent, its first 4 bytes, then inetEnd
// (IPv4) or inetMore and the remaining 12 bytes (IPv6): raw byte order with
// a 4-byte address before every 16-byte one that starts with it.
const (
	inetEnd  = 0x00
	inetMore = 0x01
)

func (InetAddressType) Name() string      { return marshalPackage + "InetAddressType" }
func (InetAddressType) className() string { return "InetAddressType" }
func (InetAddressType) Validate(b []byte) error {
	if len(b) != 0 && len(b) != 4 && len(b) != 16 {
		return invalid("Expected 4 or 16 byte inetaddress; got " + hex.EncodeToString(b))
	}
	return nil
}
func (InetAddressType) Compare(a, b []byte) int { return bytes.Compare(a, b) }
func (InetAddressType) AppendKey(dst, b []byte) []byte {
	switch {
	case len(b) == 0:
		return append(dst, keyEmpty)
	case len(b) == 4:
		return append(append(append(dst, keyPresent), b...), inetEnd)
	case len(b) == 16:
		dst = append(append(dst, keyPresent), b[:4]...)
		return append(append(dst, inetMore), b[4:]...)
	}
	// Not a valid address: keep the bytes, escaped, after a tag above
	// every valid key so that AppendKey stays total.
	return appendEscaped(append(dst, keyPresent+1), b)
}
func (t InetAddressType) DecodeKey(dst, src []byte) ([]byte, []byte, error) {
	r := keyReader{src: src}
	value, err := t.decodeKey(dst, &r)
	return decoded(value, dst, src, r.src, err)
}
func (t InetAddressType) decodeKey(dst []byte, r *keyReader) ([]byte, error) {
	tag, ok := r.byte()
	switch {
	case !ok:
		return dst, corruptKey(t, "truncated")
	case tag == keyEmpty:
		return dst, nil
	case tag == keyPresent+1:
		return unescapeValue(t, dst, r)
	case tag != keyPresent:
		return dst, corruptKey(t, "bad tag")
	}
	out, ok := r.appendRaw(dst, 4)
	if !ok {
		return dst, corruptKey(t, "truncated")
	}
	more, ok := r.byte()
	if !ok {
		return dst, corruptKey(t, "truncated")
	}
	switch more {
	case inetEnd:
		return out, nil
	case inetMore:
		if out, ok = r.appendRaw(out, 12); ok {
			return out, nil
		}
	}
	return dst, corruptKey(t, "bad address")
}
func (InetAddressType) Lossless() bool            { return true }
func (InetAddressType) Normalize(b []byte) []byte { return b }
func (t InetAddressType) AppendLowerBound(dst, bound []byte) []byte {
	return simpleLowerBound(t, dst, bound)
}
func (t InetAddressType) AppendUpperBound(dst, bound []byte) []byte {
	return simpleUpperBound(t, dst, bound)
}
func (InetAddressType) CQLType() string { return "inet" }

// String renders the address as Java's InetAddress.getHostAddress: dotted
// IPv4, and IPv6 as eight uncompressed lowercase groups
// ("0:0:0:0:0:0:0:1"). An IPv4-mapped IPv6 address, which Java would show
// as plain IPv4 (losing its 16-byte form), renders as "::ffff:a.b.c.d" so
// that FromString gives the same bytes back.
func (InetAddressType) String(b []byte) string {
	switch len(b) {
	case 0:
		return ""
	case 4:
		return netip.AddrFrom4([4]byte(b)).String()
	case 16:
		a := netip.AddrFrom16([16]byte(b))
		if a.Is4In6() {
			return a.String()
		}
		var sb strings.Builder
		for i := 0; i < 16; i += 2 {
			if i > 0 {
				sb.WriteByte(':')
			}
			sb.WriteString(strconv.FormatUint(uint64(b[i])<<8|uint64(b[i+1]), 16))
		}
		return sb.String()
	}
	return hex.EncodeToString(b)
}

// FromString parses a literal IPv4 (4 bytes) or IPv6 (16 bytes) address;
// host names are not resolved.
func (InetAddressType) FromString(s string) ([]byte, error) {
	if s == "" {
		return []byte{}, nil
	}
	a, err := netip.ParseAddr(s)
	if err != nil || a.Zone() != "" {
		return nil, formatErrorf(err, "Unable to make inet address from '%s'", s)
	}
	return a.AsSlice(), nil
}

// CQLLiteral quotes the address; an IPv4-mapped IPv6 address, which CQL
// would read back as IPv4, is written as a converted blob instead.
func (InetAddressType) CQLLiteral(b []byte) string {
	switch len(b) {
	case 4:
		return quoteCQL(netip.AddrFrom4([4]byte(b)).String())
	case 16:
		if a := netip.AddrFrom16([16]byte(b)); !a.Is4In6() {
			return quoteCQL(a.String())
		}
	}
	return castBlobLiteral("blobAsInet", b)
}
