package migrate

import (
	"bufio"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/thriftbridge/thriftbridge/store/marshal"
	"github.com/thriftbridge/thriftbridge/supercol"
)

// The script reader reads back exactly what FileSink writes: a header
// comment, CREATE statements, and the INSERT and UPDATE statements that
// TableStatements builds with their markers replaced by CQL literals. It
// recognises a data statement by matching it against the statement texts
// of the known tables; it is not a general CQL parser.

// scriptStatement is one statement of a script and where it starts.
type scriptStatement struct {
	Text   string // without the terminating semicolon
	Offset int64
	Line   int
}

// readScript calls visit for each statement of r, in order.
func readScript(r io.Reader, visit func(scriptStatement) error) error {
	br := bufio.NewReaderSize(r, 1<<16)
	var offset int64
	line := 0
	var buf []byte
	for {
		// Skip blanks and comment lines.
		c, err := br.ReadByte()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		offset++
		switch c {
		case '\n':
			line++
			continue
		case ' ', '\t', '\r':
			continue
		case '-':
			if p, _ := br.Peek(1); len(p) == 1 && p[0] == '-' {
				rest, err := br.ReadBytes('\n')
				offset += int64(len(rest))
				if len(rest) > 0 && rest[len(rest)-1] == '\n' {
					line++
				}
				if err == io.EOF {
					return nil
				}
				if err != nil {
					return err
				}
				continue
			}
		}
		start, startLine := offset-1, line+1
		buf = append(buf[:0], c)
		var quote byte
		if c == '\'' || c == '"' {
			quote = c
		}
		for {
			c, err = br.ReadByte()
			if err == io.EOF {
				return fmt.Errorf("line %d: statement without a terminating semicolon", startLine)
			}
			if err != nil {
				return err
			}
			offset++
			if c == '\n' {
				line++
			}
			if quote != 0 {
				if c == quote {
					quote = 0
				}
			} else if c == '\'' || c == '"' {
				quote = c
			} else if c == ';' {
				break
			}
			buf = append(buf, c)
		}
		if err := visit(scriptStatement{Text: string(buf), Offset: start, Line: startLine}); err != nil {
			return err
		}
	}
}

// dataStatement is a parsed INSERT or UPDATE of one cell.
type dataStatement struct {
	Table *supercol.Table
	// Key holds the values of the first len(Key) primary-key columns.
	Key    [][]byte
	Column int
	Value  []byte
	// Writetime and TTL of an INSERT; 0 for counters.
	Writetime int64
	TTL       int32
	Counter   bool
}

// scriptTemplate is one statement text of a table, split at its markers.
type scriptTemplate struct {
	table   *supercol.Table
	keys    int
	column  int
	ttl     bool
	counter bool
	parts   []string // len(markers)+1 fixed texts
}

// scriptGrammar recognises the data statements of a set of tables.
type scriptGrammar struct {
	// byPrefix maps the text before the first marker to its templates.
	byPrefix map[string][]*scriptTemplate
}

func newScriptGrammar(tables []*supercol.Table) *scriptGrammar {
	g := &scriptGrammar{byPrefix: map[string][]*scriptTemplate{}}
	for _, t := range tables {
		ts := NewTableStatements(t)
		pk := t.PrimaryKeyLen()
		for col := range t.Columns {
			for keys := 1; keys <= pk && keys <= col; keys++ {
				if t.Counter {
					g.add(&scriptTemplate{table: t, keys: keys, column: col, counter: true, parts: splitMarkers(ts.counterText(keys, col).cql)})
					continue
				}
				for _, ttl := range []bool{false, true} {
					g.add(&scriptTemplate{table: t, keys: keys, column: col, ttl: ttl, parts: splitMarkers(ts.insertText(keys, col, ttl))})
				}
			}
		}
	}
	return g
}

func (g *scriptGrammar) add(t *scriptTemplate) {
	g.byPrefix[t.parts[0]] = append(g.byPrefix[t.parts[0]], t)
}

// splitMarkers splits a statement text at its ? markers (outside quotes).
func splitMarkers(cql string) []string {
	var parts []string
	eachSegment(cql, func(_ int, text string) { parts = append(parts, text) })
	return parts
}

// errNotData reports a statement that is not a data statement (DDL).
var errNotData = errors.New("not a data statement")

// parse reads one statement; DDL gives errNotData.
func (g *scriptGrammar) parse(text string) (*dataStatement, error) {
	if strings.HasPrefix(text, "CREATE ") || isCatalogInsert(text) {
		return nil, errNotData
	}
	var prefix string
	switch {
	case strings.HasPrefix(text, "INSERT INTO "):
		if i := strings.Index(text, " VALUES ("); i >= 0 {
			prefix = text[:i+len(" VALUES (")]
		}
	case strings.HasPrefix(text, "UPDATE "):
		if i := strings.Index(text, " + "); i >= 0 {
			prefix = text[:i+len(" + ")]
		}
	}
	cands := g.byPrefix[prefix]
	if len(cands) == 0 {
		return nil, fmt.Errorf("not a statement of a converted table: %.100q", text)
	}
	var firstErr error
	for _, t := range cands {
		d, err := t.match(text)
		if err == nil {
			return d, nil
		}
		if firstErr == nil {
			firstErr = err
		}
	}
	return nil, firstErr
}

// match parses text against the template.
func (t *scriptTemplate) match(text string) (*dataStatement, error) {
	if !strings.HasPrefix(text, t.parts[0]) {
		return nil, fmt.Errorf("statement does not start with %q", t.parts[0])
	}
	rest := text[len(t.parts[0]):]
	lits := make([]string, 0, len(t.parts)-1)
	for i := 1; i < len(t.parts); i++ {
		lit, after, err := scanLiteral(rest)
		if err != nil {
			return nil, err
		}
		if !strings.HasPrefix(after, t.parts[i]) {
			return nil, fmt.Errorf("expected %q after literal %s", t.parts[i], lit)
		}
		lits = append(lits, lit)
		rest = after[len(t.parts[i]):]
	}
	if rest != "" {
		return nil, fmt.Errorf("unexpected text %.40q", rest)
	}
	cols := t.table.Columns
	d := &dataStatement{Table: t.table, Column: t.column, Counter: t.counter}
	keyLits, valueLit := lits[:t.keys], ""
	var err error
	if t.counter {
		valueLit, keyLits = lits[0], lits[1:1+t.keys]
		n, err := strconv.ParseInt(valueLit, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("counter increment %s: %w", valueLit, err)
		}
		d.Value = binary.BigEndian.AppendUint64(nil, uint64(n))
	} else {
		valueLit = lits[t.keys]
		if d.Value, err = parseLiteral(cols[t.column].Type, valueLit); err != nil {
			return nil, fmt.Errorf("column %s: %w", cols[t.column].Name, err)
		}
		i := t.keys + 1
		if t.ttl {
			ttl, err := strconv.ParseInt(lits[i], 10, 32)
			if err != nil {
				return nil, fmt.Errorf("TTL %s: %w", lits[i], err)
			}
			d.TTL = int32(ttl)
			i++
		}
		if d.Writetime, err = strconv.ParseInt(lits[i], 10, 64); err != nil {
			return nil, fmt.Errorf("TIMESTAMP %s: %w", lits[i], err)
		}
	}
	for i, lit := range keyLits {
		b, err := parseLiteral(cols[i].Type, lit)
		if err != nil {
			return nil, fmt.Errorf("column %s: %w", cols[i].Name, err)
		}
		d.Key = append(d.Key, b)
	}
	return d, nil
}

// scanLiteral reads one CQL literal at the start of s: a quoted string, a
// blobAs...(0x...) conversion, or a bare word (number, uuid, blob, boolean).
func scanLiteral(s string) (lit, rest string, err error) {
	if s == "" {
		return "", "", errors.New("missing literal")
	}
	if s[0] == '\'' {
		for i := 1; i < len(s); i++ {
			if s[i] != '\'' {
				continue
			}
			if i+1 < len(s) && s[i+1] == '\'' {
				i++
				continue
			}
			return s[:i+1], s[i+1:], nil
		}
		return "", "", errors.New("unterminated string literal")
	}
	i := 0
	for i < len(s) && !strings.ContainsRune(" ,();'\n\t", rune(s[i])) {
		i++
	}
	if i == 0 {
		return "", "", fmt.Errorf("missing literal at %.20q", s)
	}
	if i < len(s) && s[i] == '(' {
		end := strings.IndexByte(s[i:], ')')
		if end < 0 {
			return "", "", fmt.Errorf("unterminated %s(", s[:i])
		}
		i += end + 1
	}
	return s[:i], s[i:], nil
}

// parseLiteral turns a literal that CQLLiteral rendered for t back into
// bytes of t.
func parseLiteral(t marshal.Type, lit string) ([]byte, error) {
	switch {
	case strings.HasPrefix(lit, "0x"):
		return decodeHex(lit[2:])
	case strings.HasPrefix(lit, "blobAs") && strings.HasSuffix(lit, ")"):
		open := strings.IndexByte(lit, '(')
		inner := lit[open+1 : len(lit)-1]
		if !strings.HasPrefix(inner, "0x") {
			return nil, fmt.Errorf("literal %s: expected a blob inside", lit)
		}
		return decodeHex(inner[2:])
	case strings.HasPrefix(lit, "'"):
		s := strings.ReplaceAll(lit[1:len(lit)-1], "''", "'")
		switch t.CQLType() {
		case "text", "ascii":
			return []byte(s), nil
		}
		b, err := t.FromString(s)
		if err != nil {
			return nil, fmt.Errorf("literal %s: %w", lit, err)
		}
		return b, nil
	}
	b, err := t.FromString(lit)
	if err != nil {
		return nil, fmt.Errorf("literal %s: %w", lit, err)
	}
	return b, nil
}

func decodeHex(s string) ([]byte, error) {
	b := make([]byte, hex.DecodedLen(len(s)))
	if _, err := hex.Decode(b, []byte(s)); err != nil {
		return nil, fmt.Errorf("blob literal 0x%s: %w", s, err)
	}
	return b, nil
}
