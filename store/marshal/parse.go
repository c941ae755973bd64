package marshal

import (
	"fmt"
	"strings"
)

// Parse parses a type name as Cassandra's TypeParser does: short
// ("LongType") or fully qualified class names, with parameters
// ("CompositeType(UTF8Type,LongType)", "ReversedType(TimeUUIDType)",
// "DynamicCompositeType(s=>UTF8Type,l=>LongType)", "LongType(reversed=true)"),
// blanks between tokens. Like Cassandra it reads an empty or blank string as
// BytesType and ignores what follows a complete type.
//
// Errors are *ParseError values with Cassandra's texts: "Unable to find
// abstract-type class '...'" for an unknown name, and "Invalid definition
// for comparator <class>." for any error inside the parameters of a
// parameterised type (the inner error is wrapped).
//
// "DateType" is read as TimestampType except where Cassandra 3.11 keeps the
// name verbatim (see DateType). The returned type is immutable.
func Parse(name string) (Type, error) {
	t, err := parseTypeString(name, ctxTop)
	if err != nil {
		return nil, err
	}
	return t, nil
}

// parseContext says how Cassandra 3.11 would store the type being parsed,
// which decides what DateType and CompositeType become.
type parseContext int

const (
	// ctxTop: a comparator or validator. A composite is a comparator
	// composite whose components are parsed with ctxNative.
	ctxTop parseContext = iota
	// ctxNative: a type Cassandra maps to its CQL type (a clustering
	// column, the base of a top-level ReversedType): DateType becomes
	// TimestampType; a composite is opaque and its parameters verbatim.
	ctxNative
	// ctxOpaque: inside a type stored verbatim as a custom type: DateType
	// stays DateType and composites are opaque.
	ctxOpaque
)

// childContext is the context of the parameters of a type parsed in ctx.
func childContext(ctx parseContext, className string) parseContext {
	switch {
	case ctx == ctxOpaque:
		return ctxOpaque
	case className == "CompositeType" && ctx == ctxTop:
		return ctxNative
	case className == "ReversedType":
		return ctxNative
	}
	return ctxOpaque
}

// typeParser holds the whole string and the current position, which
// Cassandra's messages quote.
type typeParser struct {
	str string
	idx int
}

// parseTypeString is Cassandra's static TypeParser.parse: a blank string
// or one not starting with a name is BytesType; anything after the type is
// ignored.
func parseTypeString(s string, ctx parseContext) (codec, error) {
	p := &typeParser{str: s}
	p.skipBlank()
	name := p.readIdentifier()
	if name == "" {
		return BytesType{}, nil
	}
	p.skipBlank()
	if !p.eos() && p.str[p.idx] == '(' {
		return p.parameterisedType(name, ctx)
	}
	return plainType(name, ctx)
}

// parse reads one type at the current position (TypeParser.parse()).
func (p *typeParser) parse(ctx parseContext) (codec, error) {
	p.skipBlank()
	name := p.readIdentifier()
	p.skipBlank()
	if !p.eos() && p.str[p.idx] == '(' {
		return p.parameterisedType(name, ctx)
	}
	return plainType(name, ctx)
}

// resolveClass maps a name to the simple class name of a supported type.
func resolveClass(name string) (string, error) {
	fqcn := name
	if !strings.Contains(name, ".") {
		fqcn = marshalPackage + name
	}
	if short, ok := strings.CutPrefix(fqcn, marshalPackage); ok {
		if _, found := simpleType(short); found || isParameterised(short) {
			return short, nil
		}
		for _, u := range unsupportedClassNames {
			if u == short {
				return "", &ParseError{Msg: "Unsupported abstract-type class '" + fqcn + "'"}
			}
		}
	}
	return "", &ParseError{Msg: "Unable to find abstract-type class '" + fqcn + "'"}
}

func isParameterised(className string) bool {
	return className == "CompositeType" || className == "ReversedType" || className == "DynamicCompositeType"
}

// invalidDefinition is how Cassandra reports any error raised while a
// parameterised type reads its parameters.
func invalidDefinition(className string, cause error) error {
	return &ParseError{Msg: "Invalid definition for comparator " + marshalPackage + className + ".", Err: cause}
}

// plainType resolves a name given without parameters.
func plainType(name string, ctx parseContext) (codec, error) {
	class, err := resolveClass(name)
	if err != nil {
		return nil, err
	}
	switch class {
	case "CompositeType", "ReversedType":
		return nil, invalidDefinition(class, fmt.Errorf("%s needs type parameters", class))
	case "DynamicCompositeType":
		return newDynamicComposite(nil, nil), nil
	}
	return nativeType(class, ctx), nil
}

// nativeType returns the simple type of a class in a context.
func nativeType(class string, ctx parseContext) codec {
	if class == "DateType" && ctx != ctxOpaque {
		return TimestampType{}
	}
	t, _ := simpleType(class)
	return t
}

// parameterisedType reads a type whose name is followed by '('.
func (p *typeParser) parameterisedType(name string, ctx parseContext) (codec, error) {
	class, err := resolveClass(name)
	if err != nil {
		return nil, err
	}
	child := childContext(ctx, class)
	switch class {
	case "CompositeType":
		types, err := p.typeParameters(child)
		if err == nil && len(types) == 0 {
			err = fmt.Errorf("CompositeType needs at least one type parameter")
		}
		if err != nil {
			return nil, invalidDefinition(class, err)
		}
		return newComposite(types, ctx != ctxTop), nil
	case "ReversedType":
		types, err := p.typeParameters(child)
		if err == nil && len(types) != 1 {
			err = fmt.Errorf("ReversedType takes exactly one argument, %d given", len(types))
		}
		if err != nil {
			return nil, invalidDefinition(class, err)
		}
		base, _ := asComponent(types[0])
		return newReversed(base), nil
	case "DynamicCompositeType":
		keys, types, err := p.aliasParameters()
		if err != nil {
			return nil, invalidDefinition(class, err)
		}
		return newDynamicComposite(keys, types), nil
	}
	// A simple type takes key=value parameters; "reversed" (or
	// "reversed=true") wraps it in ReversedType.
	params, err := p.keyValueParameters()
	if err != nil {
		return nil, err
	}
	t := nativeType(class, ctx)
	if v, ok := params["reversed"]; ok && (v == "" || v == "true") {
		return newReversed(t), nil
	}
	return t, nil
}

// typeParameters reads "(T1, T2, ...)"; commas are optional separators.
func (p *typeParser) typeParameters(ctx parseContext) ([]codec, error) {
	p.idx++ // '('
	var list []codec
	for p.skipBlankAndComma() {
		if p.str[p.idx] == ')' {
			p.idx++
			return list, nil
		}
		t, err := p.parse(ctx)
		if err != nil {
			return nil, err
		}
		list = append(list, t)
	}
	return nil, p.syntaxError("unexpected end of string")
}

// aliasParameters reads "(a=>T1, b=>T2, ...)"; a repeated alias keeps its
// first position and its last type, as a Java HashMap does.
func (p *typeParser) aliasParameters() ([]byte, []codec, error) {
	p.idx++ // '('
	var keys []byte
	var types []codec
	for p.skipBlankAndComma() {
		if p.str[p.idx] == ')' {
			p.idx++
			return keys, types, nil
		}
		alias := p.readIdentifier()
		if len(alias) != 1 {
			return nil, nil, p.syntaxError("An alias should be a single character")
		}
		p.skipBlank()
		if !strings.HasPrefix(p.str[p.idx:], "=>") {
			return nil, nil, p.syntaxError("expecting '=>' token")
		}
		p.idx += 2
		p.skipBlank()
		t, err := p.parse(ctxOpaque)
		if err != nil {
			return nil, nil, err
		}
		if i := strings.IndexByte(string(keys), alias[0]); i >= 0 {
			types[i] = t
			continue
		}
		keys = append(keys, alias[0])
		types = append(types, t)
	}
	return nil, nil, p.syntaxError("unexpected end of string")
}

// keyValueParameters reads "(k=v, k2, ...)".
func (p *typeParser) keyValueParameters() (map[string]string, error) {
	p.idx++ // '('
	params := map[string]string{}
	for p.skipBlankAndComma() {
		if p.str[p.idx] == ')' {
			p.idx++
			return params, nil
		}
		k := p.readIdentifier()
		v := ""
		p.skipBlank()
		if p.eos() {
			break
		}
		switch c := p.str[p.idx]; c {
		case '=':
			p.idx++
			p.skipBlank()
			v = p.readIdentifier()
		case ',', ')':
		default:
			return nil, p.syntaxError("unexpected character '" + string(c) + "'")
		}
		params[k] = v
	}
	return nil, p.syntaxError("unexpected end of string")
}

func (p *typeParser) syntaxError(msg string) error {
	return &ParseError{Msg: fmt.Sprintf("Syntax error parsing '%s' at char %d: %s", p.str, p.idx, msg)}
}

func (p *typeParser) eos() bool { return p.idx >= len(p.str) }

func isBlank(c byte) bool { return c == ' ' || c == '\t' || c == '\n' }

func (p *typeParser) skipBlank() {
	for !p.eos() && isBlank(p.str[p.idx]) {
		p.idx++
	}
}

// skipBlankAndComma skips blanks and at most one comma and reports whether
// anything is left.
func (p *typeParser) skipBlankAndComma() bool {
	comma := false
	for ; !p.eos(); p.idx++ {
		switch c := p.str[p.idx]; {
		case c == ',':
			if comma {
				return true
			}
			comma = true
		case !isBlank(c):
			return true
		}
	}
	return false
}

// isIdentifierChar matches [0-9a-zA-Z-+._&], the characters of type names.
func isIdentifierChar(c byte) bool {
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		c == '-' || c == '+' || c == '.' || c == '_' || c == '&'
}

func (p *typeParser) readIdentifier() string {
	start := p.idx
	for !p.eos() && isIdentifierChar(p.str[p.idx]) {
		p.idx++
	}
	return p.str[start:p.idx]
}
