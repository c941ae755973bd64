package migrate

import (
	"encoding/hex"
	"fmt"
	"strconv"

	"github.com/thriftbridge/thriftbridge/store/marshal"
	"github.com/thriftbridge/thriftbridge/supercol"
)

// formatValue renders b in t's text form, quoted, followed by its hex when
// the text form is not the hex itself; invalid bytes render as hex only.
func formatValue(t marshal.Type, b []byte) string {
	h := "0x" + hex.EncodeToString(b)
	if t == nil || t.Validate(b) != nil {
		return h
	}
	if _, isBytes := t.(marshal.BytesType); isBytes {
		return h
	}
	return strconv.Quote(t.String(b)) + " (" + h + ")"
}

// formatKey renders a row key of family f.
func formatKey(f *supercol.Family, key []byte) string { return formatValue(f.KeyValidator, key) }

// formatColumn renders a cell's super column and column names.
func formatColumn(f *supercol.Family, super, name []byte) string {
	if f.Def.Super {
		return formatValue(f.Comparator, super) + ":" + formatValue(f.SubComparator, name)
	}
	return formatValue(f.Comparator, name)
}

// cellError names the family, row and column of a cell that cannot be
// converted.
func cellError(f *supercol.Family, key []byte, c *Cell, err error) error {
	return fmt.Errorf("family %s.%s, row key %s, column %s: %w", f.Keyspace, f.Def.Name, formatKey(f, key), formatColumn(f, c.Super, c.Name), err)
}
