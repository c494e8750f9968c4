package config

import (
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"sort"
	"strings"

	"github.com/BurntSushi/toml"

	"github.com/autoretry/orchestrator/internal/foundations/statefile"
	"github.com/autoretry/orchestrator/internal/foundations/suggest"
)

// Load reads the config file at path, which must exist (the user named it
// with --config), then applies the environment through getenv; nil getenv
// reads no environment. Every problem found is reported at once in an
// *Error; a file that cannot be read gives a plain error.
func Load(path string, getenv func(string) string) (*Config, error) {
	return load(path, false, getenv)
}

// LoadOptional is Load for the default path, <dir>/config.toml: a missing
// file means the defaults.
func LoadOptional(path string, getenv func(string) string) (*Config, error) {
	return load(path, true, getenv)
}

// Layer is the text of a config file, named as errors name it.
type Layer struct {
	File string
	Data []byte
}

// Parse reads config texts one over the other: the defaults, then each
// layer setting what it names over those before it (a history's setup,
// then a rule set to judge it by; a version of config.toml). No
// environment applies.
func Parse(layers ...Layer) (*Config, error) {
	c := Default()
	for _, l := range layers {
		d := &fileDecoder{c: c, file: l.File}
		if !d.decode(l.Data) {
			return nil, &Error{Problems: d.problems}
		}
		d.checkCommands()
		if problems := d.sorted(); len(problems) > 0 {
			return nil, &Error{Problems: problems}
		}
	}
	return c, nil
}

func load(path string, optional bool, getenv func(string) string) (*Config, error) {
	c := Default()
	var d *fileDecoder
	var fileProblems []Problem
	data, err := statefile.ReadThrough(path) // a FIFO is refused, not waited on
	switch {
	case err == nil:
		d = &fileDecoder{c: c, file: path}
		if !d.decode(data) {
			return nil, &Error{Problems: d.problems}
		}
	case optional && errors.Is(err, fs.ErrNotExist):
	default:
		return nil, fmt.Errorf("reading config: %w", err)
	}
	var envProblems []Problem
	if getenv != nil {
		envProblems = c.applyEnv(getenv)
	}
	if d != nil {
		d.checkCommands()
		fileProblems = d.sorted()
	}
	if problems := append(fileProblems, envProblems...); len(problems) > 0 {
		return nil, &Error{Problems: problems}
	}
	return c, nil
}

// Set sets the dotted key to value, written as in the environment (see the
// package documentation); the command line calls it for each flag, after
// Load, so that flags win. Setting "verify.NAME.command" creates the check
// NAME if it does not exist. On error c is unchanged and the *Error has one
// Problem.
func (c *Config) Set(key, value string) error {
	s, err := c.lookup(key)
	if err != nil {
		return &Error{Problems: []Problem{{Key: key, Msg: err.Error()}}}
	}
	if err := s.fromText(c, value); err != nil {
		return &Error{Problems: []Problem{{Key: key, Msg: key + ": " + err.Error()}}}
	}
	return nil
}

// fileDecoder applies one config file to a Config, collecting problems.
type fileDecoder struct {
	c        *Config
	file     string
	loc      *locator
	problems []Problem
}

// decode applies data to d.c. It reports false for a syntax error, after
// which nothing else is worth checking.
func (d *fileDecoder) decode(data []byte) bool {
	src := strings.TrimPrefix(string(data), "\uFEFF")
	var doc map[string]any
	md, err := toml.Decode(src, &doc)
	if err != nil {
		p := Problem{File: d.file, Msg: "syntax error: " + tidy(err.Error())}
		var pe toml.ParseError
		if errors.As(err, &pe) {
			p.Msg = "syntax error: " + tidy(pe.Message)
			if p.Line, p.Col = lineCol(src, pe.Position.Start); p.Line == 0 {
				p.Line = pe.Position.Line
			}
		}
		d.problems = append(d.problems, p)
		return false
	}
	d.loc = &locator{data: src, keys: md.Keys(), left: maxLocated}
	d.walk(doc)
	return true
}

func (d *fileDecoder) walk(doc map[string]any) {
	for _, sec := range sortedKeys(doc) {
		v := doc[sec]
		if !slices.Contains(sections, sec) {
			d.unknownTopLevel(sec, v)
			continue
		}
		t, ok := v.(map[string]any)
		if !ok {
			d.problem([]string{sec}, sec, fmt.Sprintf("%s: must be a table ([%s]), not %s", sec, sec, tomlType(v)))
			continue
		}
		for _, k := range sortedKeys(t) {
			v, key, path := t[k], sec+"."+k, []string{sec, k}
			s, fixed := fixedByKey[key]
			_, isTable := v.(map[string]any)
			switch {
			case fixed:
				d.set(s, v, path)
			case key == byTypeKey:
				d.byType(v, path)
			case sec == "verify" && isTable && strings.TrimSpace(k) == "":
				d.problem(path, key, "verify: a check name must not be empty")
			case sec == "verify" && isTable:
				d.check(k, v.(map[string]any), path)
			case sec == "verify" && suggest.Nearest(k, sectionKeys(sec)) == "":
				d.problem(path, key, fmt.Sprintf(`%s: a check must be a table ([%s] with command = "..."), not %s`, key, key, tomlType(v)))
			default:
				d.unknown(path, sec, sectionKeys(sec))
			}
		}
	}
}

func (d *fileDecoder) byType(v any, path []string) {
	t, ok := v.(map[string]any)
	if !ok {
		d.problem(path, byTypeKey, fmt.Sprintf("%s: must be a table ([%s]), not %s", byTypeKey, byTypeKey, tomlType(v)))
		return
	}
	seen := map[string]string{}
	for _, typ := range sortedKeys(t) {
		key, p := byTypeKey+"."+typ, append(slices.Clip(path), typ)
		lower := strings.ToLower(typ)
		if prev, dup := seen[lower]; dup {
			d.problem(p, key, fmt.Sprintf("%s: %q and %q are the same type (types are compared without regard to case)", byTypeKey, prev, typ))
			continue
		}
		seen[lower] = typ
		if strings.TrimSpace(typ) == "" {
			d.problem(p, key, byTypeKey+": a type name must not be empty")
			continue
		}
		d.set(byTypeSetting(key, typ), t[typ], p)
	}
}

func (d *fileDecoder) check(name string, t map[string]any, path []string) {
	for _, k := range sortedKeys(t) {
		p := append(slices.Clip(path), k)
		if !slices.Contains(checkKeys, k) {
			d.unknown(p, "verify."+name, checkKeys)
			continue
		}
		d.set(checkSetting("verify."+name+"."+k, name, k), t[k], p)
	}
	if _, ok := d.c.Verification.Checks[name]; !ok {
		// Kept without a command so that the environment may supply one;
		// checkCommands reports it otherwise.
		d.c.Verification.Checks[name] = Check{Name: name, Timeout: DefaultCheckTimeout}
	}
}

// checkCommands reports the checks left without a command once the
// environment has been applied.
func (d *fileDecoder) checkCommands() {
	for _, name := range sortedKeys(d.c.Verification.Checks) {
		key := "verify." + name + ".command"
		reported := slices.ContainsFunc(d.problems, func(p Problem) bool { return p.Key == key })
		if d.c.Verification.Checks[name].Command == "" && !reported {
			d.problem([]string{"verify", name}, key, fmt.Sprintf(`verify.%s: command is missing; a check needs command = "...", the shell command that verifies an issue's fix`, name))
		}
	}
}

func (d *fileDecoder) set(s setting, v any, path []string) {
	if err := s.fromTOML(d.c, v); err != nil {
		d.problem(path, s.key, s.key+": "+err.Error())
	}
}

func (d *fileDecoder) problem(path []string, key, msg string) {
	d.problems = append(d.problems, Problem{File: d.file, Line: d.loc.line(path), Key: key, Msg: msg})
}

func (d *fileDecoder) unknown(path []string, table string, candidates []string) {
	name := path[len(path)-1]
	msg := fmt.Sprintf("unknown key %q in [%s]", name, table)
	if near := suggest.Nearest(name, candidates); near != "" {
		msg += fmt.Sprintf(" (did you mean %q?)", near)
	}
	d.problem(path, strings.Join(path, "."), msg)
}

func (d *fileDecoder) unknownTopLevel(name string, v any) {
	var msg string
	if _, isTable := v.(map[string]any); isTable {
		msg = fmt.Sprintf("unknown section [%s]", name)
		if near := suggest.Nearest(name, sections); near != "" {
			msg += fmt.Sprintf(" (did you mean [%s]?)", near)
		}
	} else {
		msg = fmt.Sprintf("unknown key %q outside any section", name)
		for _, k := range fixedKeys() {
			if sec, ok := strings.CutSuffix(k, "."+name); ok {
				msg += fmt.Sprintf(" (did you mean to put it under [%s]?)", sec)
				break
			}
		}
	}
	d.problem([]string{name}, name, msg)
}

// sorted returns the problems in file order; those without a line last.
func (d *fileDecoder) sorted() []Problem {
	p := d.problems
	sort.SliceStable(p, func(i, j int) bool {
		li, lj := p[i].Line, p[j].Line
		if (li == 0) != (lj == 0) {
			return lj == 0
		}
		return li < lj
	})
	return p
}

// sectionKeys returns the keys that may appear in [sec].
func sectionKeys(sec string) []string {
	var keys []string
	for _, k := range fixedKeys() {
		if name, ok := strings.CutPrefix(k, sec+"."); ok {
			keys = append(keys, name)
		}
	}
	if sec == "auto_retry" {
		keys = append(keys, byTypeTable)
	}
	return keys
}

// runtimeVars are the ORCHESTRATOR_* variables that are not settings: the
// state directory, the workspace root, the fixed clock, and what run gives
// the loop command.
// A loop that calls orchestrator passes them on.
var runtimeVars = []string{"DIR", "ROOT", "NOW", "RUN_ID", "LOOP", "LOOP_KIND", "ISSUES",
	"RETRY_CONTEXT", "RETRY_TIER", "MODEL", "COST_FILE"}

// envName returns the environment variable for a dotted key.
func envName(key string) string {
	b := []byte("ORCHESTRATOR_" + strings.ToUpper(key))
	for i, ch := range b {
		if !('A' <= ch && ch <= 'Z' || '0' <= ch && ch <= '9') {
			b[i] = '_'
		}
	}
	return string(b)
}

// envNames maps each environment variable that names a key of c to its
// keys: more than one when two names differ only in case or punctuation.
func (c *Config) envNames() map[string][]string {
	m := map[string][]string{}
	for _, k := range c.knownKeys() {
		n := envName(k)
		m[n] = append(m[n], k)
	}
	return m
}

func (c *Config) applyEnv(getenv func(string) string) []Problem {
	var problems []Problem
	names := c.envNames()
	for _, name := range sortedKeys(names) {
		v := getenv(name)
		if v == "" {
			continue
		}
		keys := names[name]
		if len(keys) > 1 {
			problems = append(problems, Problem{Var: name, Key: keys[0],
				Msg: fmt.Sprintf("names more than one key (%s); rename one in the config file", strings.Join(keys, ", "))})
			continue
		}
		s, err := c.lookup(keys[0])
		if err == nil {
			err = s.fromText(c, v)
		}
		if err != nil {
			problems = append(problems, Problem{Var: name, Key: keys[0], Msg: keys[0] + ": " + err.Error()})
		}
	}
	return problems
}

// CheckEnviron reports the variables of environ ("NAME=value", as
// os.Environ returns them) that look like settings of c but are not: an
// ORCHESTRATOR_<SECTION>_ prefix of a known section followed by an unknown
// key, or an entry of an open table that c does not define. Other variables
// are ignored.
func (c *Config) CheckEnviron(environ []string) error {
	names := c.envNames()
	var problems []Problem
	seen := map[string]bool{}
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		rest, ok := strings.CutPrefix(name, "ORCHESTRATOR_")
		if !ok || names[name] != nil || slices.Contains(runtimeVars, rest) || seen[name] {
			continue
		}
		seen[name] = true
		sec := ""
		for _, s := range sections {
			if strings.HasPrefix(name, envName(s)+"_") {
				sec = s
			}
		}
		if sec == "" {
			continue
		}
		// A name is prefix + stem + tail; suggestions compare stems only, so
		// that a long common prefix does not make every name look close.
		prefix, tail := envName(sec)+"_", ""
		msg := fmt.Sprintf("not a setting of [%s]", sec)
		checkPrefix, typePrefix := envName("verify")+"_", envName(byTypeKey)+"_"
		switch {
		case strings.HasPrefix(name, typePrefix) && len(name) > len(typePrefix):
			prefix = typePrefix
			msg = fmt.Sprintf("no entry for type %q in [%s]; the environment only overrides entries that the config file or the defaults define",
				strings.ToLower(name[len(prefix):]), byTypeKey)
		case sec == "verify" && len(name) > len(checkPrefix)+len("_COMMAND") &&
			(strings.HasSuffix(name, "_COMMAND") || strings.HasSuffix(name, "_TIMEOUT")):
			prefix, tail = checkPrefix, name[len(name)-len("_COMMAND"):]
			msg = fmt.Sprintf("no check [verify.%s] in the config file; the environment only overrides checks that the file defines",
				strings.ToLower(name[len(prefix):len(name)-len(tail)]))
		}
		var stems []string
		for n := range names {
			if strings.HasPrefix(n, prefix) && strings.HasSuffix(n, tail) && len(n) > len(prefix)+len(tail) {
				stems = append(stems, n[len(prefix):len(n)-len(tail)])
			}
		}
		slices.Sort(stems)
		if near := suggest.Nearest(name[len(prefix):len(name)-len(tail)], stems); near != "" {
			msg += fmt.Sprintf(" (did you mean %s%s%s?)", prefix, near, tail)
		}
		problems = append(problems, Problem{Var: name, Msg: msg})
	}
	if len(problems) == 0 {
		return nil
	}
	sort.SliceStable(problems, func(i, j int) bool { return problems[i].Var < problems[j].Var })
	return &Error{Problems: problems}
}

// tidy turns a parser message into the style of the others: no capital
// first letter (unless an acronym), no final period.
func tidy(msg string) string {
	msg = strings.TrimSuffix(strings.TrimSpace(msg), ".")
	if len(msg) > 1 && 'A' <= msg[0] && msg[0] <= 'Z' && 'a' <= msg[1] && msg[1] <= 'z' {
		msg = string(msg[0]+'a'-'A') + msg[1:]
	}
	return msg
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
