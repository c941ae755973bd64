package supercol

import (
	"strings"
	"unicode/utf8"
)

// reservedWords are the CQL keywords that cannot be used as unquoted
// identifiers in Cassandra 3.x, 4.x and 5.x or ScyllaDB, lower-cased.
// Quoting a lower-case word that is not reserved is harmless (it names the
// same identifier), so the list errs on the side of including words.
var reservedWords = map[string]bool{
	"add": true, "allow": true, "alter": true, "and": true, "apply": true,
	"asc": true, "authorize": true, "batch": true, "begin": true, "between": true,
	"by": true, "columnfamily": true, "create": true, "default": true,
	"delete": true, "desc": true, "describe": true, "drop": true,
	"entries": true, "execute": true, "from": true, "full": true,
	"grant": true, "if": true, "in": true, "index": true, "infinity": true,
	"insert": true, "into": true, "is": true, "keyspace": true, "limit": true,
	"materialized": true, "mbean": true, "mbeans": true, "modify": true,
	"nan": true, "norecursive": true, "not": true, "null": true, "of": true,
	"on": true, "or": true, "order": true, "primary": true, "rename": true,
	"replace": true, "revoke": true, "schema": true, "select": true,
	"set": true, "table": true, "to": true, "token": true, "truncate": true,
	"unlogged": true, "unset": true, "update": true, "use": true,
	"using": true, "view": true, "where": true, "with": true,
}

// QuoteIdent renders name as a CQL identifier: unchanged when CQL reads it
// as written (lower-case letters, digits and '_', not starting with a digit,
// not a reserved word), otherwise in double quotes with inner double quotes
// doubled, which keeps its case and characters.
func QuoteIdent(name string) string {
	if isPlainIdent(name) && !reservedWords[name] {
		return name
	}
	return `"` + strings.ReplaceAll(name, `"`, `""`) + `"`
}

// isPlainIdent reports whether name matches [a-z_][a-z0-9_]*.
func isPlainIdent(name string) bool {
	if name == "" {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case c >= 'a' && c <= 'z', c == '_':
		case c >= '0' && c <= '9':
			if i == 0 {
				return false
			}
		default:
			return false
		}
	}
	return true
}

// maxSchemaNameLen is the longest keyspace or table name Cassandra accepts.
const maxSchemaNameLen = 48

// isSchemaName reports whether name can be a Cassandra keyspace or table
// name: 1 to 48 characters among [A-Za-z0-9_].
func isSchemaName(name string) bool {
	if name == "" || len(name) > maxSchemaNameLen {
		return false
	}
	for i := 0; i < len(name); i++ {
		if !isWordByte(name[i]) {
			return false
		}
	}
	return true
}

func isWordByte(c byte) bool {
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_'
}

// maxColumnNameLen bounds the identifiers derived from legacy column names.
const maxColumnNameLen = 128

// columnIdent derives a column identifier from the text form of a legacy
// column name: every byte outside [A-Za-z0-9_] becomes '_' (case is kept;
// QuoteIdent preserves it). It refuses an empty name, text that is not
// UTF-8 and names longer than maxColumnNameLen bytes.
func columnIdent(text string) (string, bool) {
	if text == "" || len(text) > maxColumnNameLen || !utf8.ValidString(text) {
		return "", false
	}
	out := []byte(text)
	for i, c := range out {
		if !isWordByte(c) {
			out[i] = '_'
		}
	}
	return string(out), true
}

// isFieldLike reports whether text already reads as a field name: a letter
// or '_' first, then letters, digits and '_', at most maxSchemaNameLen
// bytes. Only such names let a sample choose the pivot shape on its own.
func isFieldLike(text string) bool {
	if text == "" || len(text) > maxSchemaNameLen {
		return false
	}
	for i := 0; i < len(text); i++ {
		c := text[i]
		if !isWordByte(c) || (i == 0 && c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}
