package config

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/BurntSushi/toml"
)

// Problem is one thing wrong with the configuration.
type Problem struct {
	File string // the config file; empty when the problem is not in it
	Line int    // 1-based; 0 when unknown
	Col  int    // 1-based byte column; 0 when unknown (given for syntax errors)
	Var  string // the environment variable, for problems that come from one
	Key  string // dotted key, e.g. "auto_retry.global_cap"; empty for syntax errors
	Msg  string // names the key
}

// String formats p as "file:line[:col]: msg", or "VAR: msg" for the
// environment.
func (p Problem) String() string {
	var b strings.Builder
	switch {
	case p.File != "":
		b.WriteString(p.File)
		if p.Line > 0 {
			fmt.Fprintf(&b, ":%d", p.Line)
			if p.Col > 0 {
				fmt.Fprintf(&b, ":%d", p.Col)
			}
		}
		b.WriteString(": ")
	case p.Var != "":
		b.WriteString(p.Var + ": ")
	}
	b.WriteString(p.Msg)
	return b.String()
}

// Error is every problem found in one attempt to load or change a
// configuration: file problems in file order, then environment problems.
type Error struct {
	Problems []Problem
}

// Error returns the problems one per line.
func (e *Error) Error() string {
	lines := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		lines[i] = p.String()
	}
	return strings.Join(lines, "\n")
}

// maxLocated bounds the problems of one file that are given a line: locating
// one re-parses the file, and a file with thousands of bad keys is not worth
// quadratic time.
const maxLocated = 50

// locator finds where keys are in a TOML file that parsed without error.
type locator struct {
	data string
	keys []toml.Key // every key of the file, from MetaData.Keys
	left int        // locate calls that will still search
}

// failer fails to decode whatever it is given, so that the decoder reports
// the position of the key it was decoding.
type failer struct{}

var errFound = errors.New("config: key located")

func (*failer) UnmarshalTOML(any) error { return errFound }

// line returns the 1-based line of key in the file: the line of its table
// header or of its value; 0 if it cannot be found. A key with a part that
// cannot be searched for (empty, or holding a comma) gets the line of its
// deepest ancestor that can.
//
// toml.MetaData keeps key positions but does not export them; the decoder
// puts the current key's position in the ParseError it returns when an
// Unmarshaler fails. So: decode into a struct type built for this key alone,
// with the failing type at its end.
func (l *locator) line(key []string) int {
	if l == nil || l.left <= 0 || len(key) == 0 {
		return 0
	}
	if i := slices.IndexFunc(key, func(k string) bool { return k == "" || strings.Contains(k, ",") }); i >= 0 {
		key = key[:i] // not expressible as a struct tag
	}
	if len(key) == 0 {
		return 0
	}
	l.left--
	t := reflect.TypeOf(failer{})
	for i := len(key) - 1; i >= 0; i-- {
		fields := []reflect.StructField{{Name: "F0", Type: t, Tag: tomlTag(key[i])}}
		// The decoder falls back to a case-insensitive match when no field
		// has a key's exact name; give every sibling that differs only in
		// case its own field, so the search hits the key itself.
		for _, sib := range l.caseSiblings(key[:i], key[i]) {
			fields = append(fields, reflect.StructField{
				Name: "F" + strconv.Itoa(len(fields)), Type: reflect.TypeOf(toml.Primitive{}), Tag: tomlTag(sib)})
		}
		t = reflect.StructOf(fields)
	}
	_, err := toml.Decode(l.data, reflect.New(t).Interface())
	var pe toml.ParseError
	if !errors.As(err, &pe) || pe.Message != errFound.Error() {
		return 0
	}
	line, _ := lineCol(l.data, pe.Position.Start)
	return line
}

// caseSiblings returns the other keys under parent whose last part equals
// name without regard to case.
func (l *locator) caseSiblings(parent []string, name string) []string {
	var sibs []string
	for _, k := range l.keys {
		if len(k) <= len(parent) || !slices.Equal([]string(k[:len(parent)]), parent) {
			continue
		}
		s := k[len(parent)]
		if s != name && strings.EqualFold(s, name) && !strings.Contains(s, ",") && !slices.Contains(sibs, s) {
			sibs = append(sibs, s)
		}
	}
	return sibs
}

func tomlTag(name string) reflect.StructTag {
	return reflect.StructTag("toml:" + strconv.Quote(name))
}

// lineCol converts a byte offset in data to a 1-based line and byte column.
// The parser's own Position.Line and Col are off at line ends and starts.
func lineCol(data string, offset int) (line, col int) {
	if offset < 0 || offset > len(data) {
		return 0, 0
	}
	before := data[:offset]
	return strings.Count(before, "\n") + 1, offset - strings.LastIndexByte(before, '\n')
}
