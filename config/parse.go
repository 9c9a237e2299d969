package config

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// MaxConfigBytes bounds a config file. A config is a few kilobytes; a
// 200 MB file given as one took the bridge's RSS to 1.83 GB (issue 33
// item 6).
const MaxConfigBytes = 4 << 20

// Load reads and parses the YAML file at path, expanding ${NAME} from the
// process environment. Problems with the content are a *ValidationError whose
// Source is path. A file that is not a regular file, or larger than
// MaxConfigBytes, is refused unread.
func Load(path string) (*Config, error) {
	data, err := readConfig(path)
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	c, err := Parse(data, os.LookupEnv)
	var ve *ValidationError
	if errors.As(err, &ve) {
		ve.Source = path
	} else if err != nil {
		err = fmt.Errorf("config %s: %w", path, err)
	}
	return c, err
}

func readConfig(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	switch {
	case err != nil:
		return nil, err
	case !fi.Mode().IsRegular():
		return nil, fmt.Errorf("%s is not a regular file", path)
	case fi.Size() > MaxConfigBytes:
		return nil, fmt.Errorf("%s is %d bytes; a config is at most %d", path, fi.Size(), MaxConfigBytes)
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxConfigBytes+1))
	if err == nil && len(data) > MaxConfigBytes {
		err = fmt.Errorf("%s is larger than %d bytes; a config is at most that", path, MaxConfigBytes)
	}
	return data, err
}

// Parse decodes a YAML configuration, applies defaults and validates it.
//
// In every scalar value (and header name), ${NAME} is replaced by the value
// of NAME from lookupEnv (nil means os.LookupEnv) and ${NAME:-default} by
// default when NAME is unset or empty; $$ stands for a literal $, and any
// other $ is kept as is. Expansion happens on parsed values, not on the raw
// text, so that a secret containing YAML syntax (": ", "#", quotes, newlines)
// is taken verbatim and cannot change the document's structure, and so that a
// ${NAME} in a comment is ignored.
//
// Keys that are absent (or null) take their defaults; keys written explicitly
// keep their value, so "timeouts: {run: 0}" is reported, not defaulted.
//
// A YAML syntax error is a *ValidationError naming its line. Everything else — an unset variable,
// an unknown key, a value of the wrong type, a failed validation rule — is
// collected into one *ValidationError naming each offending path and line.
func Parse(data []byte, lookupEnv func(string) (string, bool)) (*Config, error) {
	if lookupEnv == nil {
		lookupEnv = os.LookupEnv
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil && !errors.Is(err, io.EOF) {
		return nil, syntaxError(data, err)
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); err == nil {
		return nil, &ValidationError{Problems: []Problem{{
			Message: "holds more than one YAML document; the bridge reads exactly one", Line: extra.Line,
		}}}
	} else if !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("config: %w", err)
	}

	c := Default()
	root := &doc
	if root.Kind == yaml.DocumentNode && len(root.Content) == 1 {
		root = root.Content[0]
	}
	if root.Kind != 0 && !isNull(root) {
		s := schema{
			lookupEnv: lookupEnv,
			lines:     map[string]int{},
			walked:    map[walkKey]bool{},
			expanded:  map[*yaml.Node]bool{},
			fromEnv:   map[*yaml.Node]bool{},
			bad:       map[*yaml.Node]bool{},
			pruned:    map[*yaml.Node]bool{},
		}
		s.walk(root, reflect.TypeFor[Config](), "")
		if len(s.problems) > 0 && s.bad[root] {
			return nil, &ValidationError{Problems: s.problems}
		}
		// What the walk found is taken out of the tree (a bad value keeps
		// its default) so that the rest is still decoded and validated:
		// a bad duration must not hide an invalid name further down.
		s.prune(&doc)
		// The schema walk above already rejected unknown keys with their
		// paths; KnownFields stays on so that a gap in the walk still fails
		// loudly rather than dropping a key. The expanded tree is re-encoded
		// because only a Decoder, not Node.Decode, has KnownFields.
		text, err := yaml.Marshal(&doc)
		if err != nil {
			return nil, fmt.Errorf("config: %w", err)
		}
		strict := yaml.NewDecoder(bytes.NewReader(text))
		strict.KnownFields(true)
		if err := strict.Decode(c); err != nil {
			if len(s.problems) > 0 {
				return nil, &ValidationError{Problems: s.problems}
			}
			return nil, fmt.Errorf("config: %w", err)
		}
		problems := s.problems
		if err := c.Validate(); err != nil {
			for _, p := range err.(*ValidationError).Problems {
				if s.covered(p.Path) {
					continue // a consequence of a value already reported
				}
				p.Line = s.line(p.Path)
				problems = append(problems, p)
			}
		}
		if len(problems) > 0 {
			// In the order of the file: the schema's and the rules'
			// problems interleave. Lines unknown (0) go last.
			slices.SortStableFunc(problems, func(a, b Problem) int {
				return cmp.Compare(lineOrder(a.Line), lineOrder(b.Line))
			})
			return nil, &ValidationError{Problems: problems}
		}
		return c, nil
	}
	if err := c.Validate(); err != nil {
		return nil, err
	}
	return c, nil
}

func lineOrder(l int) int {
	if l == 0 {
		return math.MaxInt
	}
	return l
}

// prune takes the bad nodes out of the tree: a mapping loses the entry,
// a list keeps the place (null) so the paths of the items after it hold.
func (s *schema) prune(n *yaml.Node) {
	if n == nil || s.pruned[n] {
		return
	}
	s.pruned[n] = true
	bad := func(c *yaml.Node) bool {
		return s.bad[c] || c.Kind == yaml.AliasNode && c.Alias != nil && s.bad[c.Alias]
	}
	switch n.Kind {
	case yaml.DocumentNode, yaml.SequenceNode:
		for i, c := range n.Content {
			if bad(c) {
				n.Content[i] = &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!null", Value: "null", Line: c.Line}
				continue
			}
			s.prune(c)
		}
	case yaml.MappingNode:
		kept := make([]*yaml.Node, 0, len(n.Content))
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if bad(k) || bad(v) {
				continue
			}
			s.prune(v)
			kept = append(kept, k, v)
		}
		n.Content = kept
	case yaml.AliasNode:
		s.prune(n.Alias)
	}
}

// covered reports whether a problem at path follows from one the walk
// already reported: at the same path, inside it, or around it (the
// document itself excepted).
func (s *schema) covered(path string) bool {
	within := func(inner, outer string) bool {
		return outer != "" && (inner == outer || strings.HasPrefix(inner, outer+".") || strings.HasPrefix(inner, outer+"["))
	}
	for _, p := range s.problems {
		if within(path, p.Path) || within(p.Path, path) {
			return true
		}
	}
	return false
}

// yamlLineRE matches the position yaml.v3 puts in its syntax errors.
var yamlLineRE = regexp.MustCompile(`^yaml: line (\d+): `)

// syntaxError reports a YAML syntax error at the line it is on. yaml.v3
// names the line where the enclosing block starts (an agent's "- name:"
// line for a key indented one space too far three lines below), so the
// line is found again: the first prefix of the file that fails the same
// way ends on it. Files above 64 KiB keep yaml.v3's line.
func syntaxError(data []byte, err error) error {
	m := yamlLineRE.FindStringSubmatchIndex(err.Error())
	if m == nil {
		return fmt.Errorf("config: %w", err)
	}
	msg := err.Error()[m[1]:]
	line, _ := strconv.Atoi(err.Error()[m[2]:m[3]])
	if len(data) <= 64<<10 {
		lines := bytes.SplitAfter(data, []byte("\n"))
		for k := max(line, 1); k <= len(lines); k++ {
			var n yaml.Node
			perr := yaml.Unmarshal(bytes.Join(lines[:k], nil), &n)
			if perr != nil && strings.HasSuffix(perr.Error(), ": "+msg) {
				line = k
				break
			}
		}
	}
	return &ValidationError{Problems: []Problem{{
		Message: "not valid YAML: " + msg + " (look for a key indented differently from the keys beside it, " +
			"or a value holding \": \" or \" #\" that needs quotes)",
		Line: line,
	}}}
}

// schema walks the YAML tree alongside the Go type it will decode into: it
// expands ${NAME} in scalars, rejects unknown keys and values of the wrong
// shape with their paths, and records the line of every path, all before
// yaml.v3 decodes (whose errors name lines but not paths).
type schema struct {
	lookupEnv func(string) (string, bool)
	problems  []Problem
	lines     map[string]int      // path → line of its value
	walked    map[walkKey]bool    // bounds work on alias-heavy documents
	expanded  map[*yaml.Node]bool // an aliased scalar is expanded once
	fromEnv   map[*yaml.Node]bool // changed by expansion: never echoed, it may be a secret
	bad       map[*yaml.Node]bool // nodes with a problem: pruned before decoding
	pruned    map[*yaml.Node]bool // each node once: aliases share nodes
}

type walkKey struct {
	n *yaml.Node
	t reflect.Type
}

var durationType = reflect.TypeFor[Duration]()

// maxProblems bounds the problems one parse reports: a large file that is
// not a config would otherwise be listed back line by line.
const maxProblems = 50

// add reports a problem with node n at path. The node is marked bad: prune
// takes it out before the rest of the document is decoded and validated.
func (s *schema) add(path string, n *yaml.Node, format string, args ...any) {
	s.bad[n] = true
	switch {
	case len(s.problems) > maxProblems:
		return
	case len(s.problems) == maxProblems:
		s.problems = append(s.problems, Problem{Message: fmt.Sprintf("more problems after line %d are not listed", n.Line)})
		return
	}
	s.problems = append(s.problems, Problem{Path: path, Message: fmt.Sprintf(format, args...), Line: n.Line})
}

// notAConfig says whether the top-level mapping n has keys and none of
// them is one of t's: then the file is something else (issue 33 item 6: a
// config swapped for a link to /etc/shadow was logged line by line as
// unknown keys), and is reported without repeating any of its text.
func notAConfig(n *yaml.Node, t reflect.Type) bool {
	if len(n.Content) == 0 {
		return false
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		key := n.Content[i]
		if key.Kind != yaml.ScalarNode || key.ShortTag() == "!!merge" {
			continue
		}
		if _, ok := fieldByKey(t, key.Value); ok {
			return false
		}
	}
	return true
}

// shownKey is an unknown key as a problem's path shows it: short, and
// quoted when it holds anything but plain characters, so that an error
// line cannot carry a long or odd piece of the file.
func shownKey(k string) string {
	const max = 40
	plain := len(k) <= max
	for _, r := range k {
		if r < 0x20 || r == 0x7f || r == ':' || r > 0x7e {
			plain = false
			break
		}
	}
	if plain {
		return k
	}
	if len(k) > max {
		k = strings.ToValidUTF8(k[:max], "") + "…"
	}
	return strconv.Quote(k)
}

// line returns the line of path, or of its nearest ancestor that has one.
func (s *schema) line(path string) int {
	for path != "" {
		if l, ok := s.lines[path]; ok {
			return l
		}
		i := strings.LastIndexAny(path, ".[")
		if i < 0 {
			break
		}
		path = path[:i]
	}
	return 0
}

func isNull(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null"
}

func describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	default:
		return "a scalar"
	}
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func (s *schema) walk(n *yaml.Node, t reflect.Type, path string) {
	if n.Kind == yaml.AliasNode {
		if n.Alias == nil {
			return
		}
		n = n.Alias
	}
	if _, ok := s.lines[path]; !ok {
		s.lines[path] = n.Line
	}
	k := walkKey{n, t}
	if s.walked[k] {
		return
	}
	s.walked[k] = true
	if isNull(n) {
		// Null means "not set": the default stays. A null list item, though,
		// would decode to an agent with no defaults at all.
		if t.Kind() == reflect.Struct && strings.HasSuffix(path, "]") {
			s.add(path, n, "empty entry")
		}
		return
	}

	switch {
	case t == durationType:
		if !s.scalar(n, t, path) {
			return
		}
		if _, err := ParseDuration(n.Value); err != nil {
			if s.fromEnv[n] {
				err = errors.New("invalid duration (from the environment): want a number with a unit, such as 500ms, 30s, 2m or 1h")
			}
			s.add(path, n, "%v", err)
		}
	case t.Kind() == reflect.String:
		s.scalar(n, t, path)
	case t.Kind() == reflect.Bool:
		if !s.scalar(n, t, path) {
			return
		}
		var v bool
		if n.Decode(&v) != nil {
			if s.fromEnv[n] {
				s.add(path, n, "must be true or false (the value from the environment is not)")
			} else {
				s.add(path, n, "must be true or false (got %q)", n.Value)
			}
		}
	case t.Kind() == reflect.Int64:
		if !s.scalar(n, t, path) {
			return
		}
		var v int64
		if n.Decode(&v) != nil {
			if s.fromEnv[n] {
				s.add(path, n, "must be an integer (the value from the environment is not)")
			} else {
				s.add(path, n, "must be an integer (got %q)", n.Value)
			}
		}
	case t.Kind() == reflect.Bool:
		if !s.scalar(n, t, path) {
			return
		}
		var v bool
		if n.Decode(&v) != nil {
			s.add(path, n, "must be true or false (got %q)", n.Value)
		}
	case t.Kind() == reflect.Float64:
		if !s.scalar(n, t, path) {
			return
		}
		var v float64
		if n.Decode(&v) != nil {
			if s.fromEnv[n] {
				s.add(path, n, "must be a number (the value from the environment is not)")
			} else {
				s.add(path, n, "must be a number (got %q)", n.Value)
			}
		}
	case t.Kind() == reflect.Slice:
		if n.Kind != yaml.SequenceNode {
			s.add(path, n, "must be a list, not %s", describe(n))
			return
		}
		for i, e := range n.Content {
			s.walk(e, t.Elem(), path+"["+strconv.Itoa(i)+"]")
		}
	case t.Kind() == reflect.Map:
		if n.Kind != yaml.MappingNode {
			s.add(path, n, "must be a mapping, not %s", describe(n))
			return
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			key := n.Content[i]
			if key.Kind != yaml.ScalarNode {
				s.add(path, key, "keys must be strings")
				continue
			}
			s.expand(key, t.Key(), path)
			s.walk(n.Content[i+1], t.Elem(), join(path, key.Value))
		}
	case t.Kind() == reflect.Struct:
		s.mapping(n, t, path)
	default:
		// Only reachable if a field of a new type is added to Config without
		// teaching the walk about it.
		s.add(path, n, "internal error: no schema for %s", t)
	}
}

// mapping checks a YAML mapping against struct type t.
func (s *schema) mapping(n *yaml.Node, t reflect.Type, path string) {
	if n.Kind != yaml.MappingNode {
		what := "a mapping of keys"
		if path == "" {
			what = "a mapping of top-level keys (listen, store, server, agents, log, tracing)"
		}
		s.add(path, n, "must be %s, not %s", what, describe(n))
		return
	}
	if path == "" && notAConfig(n, t) {
		s.add("", n, "this is not a bridge config: none of its %d top-level keys is one the bridge knows (listen, store, server, agents, teams, auth, limits, log, tracing)", len(n.Content)/2)
		return
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		key, val := n.Content[i], n.Content[i+1]
		if key.Kind == yaml.ScalarNode && key.ShortTag() == "!!merge" {
			// "<<: *base" or "<<: [*a, *b]" merges mappings into this one.
			if val.Kind == yaml.SequenceNode {
				for _, m := range val.Content {
					s.walk(m, t, path)
				}
			} else {
				s.walk(val, t, path)
			}
			continue
		}
		if key.Kind != yaml.ScalarNode {
			s.add(path, key, "keys must be strings")
			continue
		}
		f, ok := fieldByKey(t, key.Value)
		if !ok {
			s.add(join(path, shownKey(key.Value)), key, "unknown key%s", unknownKeyHint(t, key.Value))
			continue
		}
		s.walk(val, f.Type, join(path, key.Value))
	}
}

// unknownKeyHint suggests the key that was probably meant (a typo, a
// missing s, another case), or else lists the keys allowed there.
func unknownKeyHint(t reflect.Type, key string) string {
	var keys []string
	for i := range t.NumField() {
		f := t.Field(i)
		if name, _, _ := strings.Cut(f.Tag.Get("yaml"), ","); name != "" && name != "-" && f.IsExported() {
			keys = append(keys, name)
		}
	}
	if m := closest(key, keys); m != "" {
		return fmt.Sprintf(": did you mean %s?", m)
	}
	return "; known keys: " + strings.Join(keys, ", ")
}

// closest is the candidate a mistyped word most likely meant: the same but
// for case, one a prefix of the other, or within a small edit distance
// (adjacent letters swapped count as one edit); "" when none is close.
func closest(word string, candidates []string) string {
	best, bestD := "", math.MaxInt
	for _, c := range candidates {
		d := editDistance(strings.ToLower(word), strings.ToLower(c))
		if lw, lc := strings.ToLower(word), strings.ToLower(c); len(word) >= 4 && len(c) >= 4 &&
			(strings.HasPrefix(lc, lw) || strings.HasPrefix(lw, lc)) {
			d = min(d, 1)
		}
		if limit := max(1, min(len(word), len(c))/4); d <= limit && d < bestD {
			best, bestD = c, d
		}
	}
	return best
}

// editDistance is the optimal string alignment distance between a and b:
// insertions, deletions, substitutions and swaps of adjacent bytes.
func editDistance(a, b string) int {
	prev2 := make([]int, len(b)+1)
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(b)]
}

func fieldByKey(t reflect.Type, key string) (reflect.StructField, bool) {
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if name == key && f.IsExported() {
			return f, true
		}
	}
	return reflect.StructField{}, false
}

// scalar checks that n is a scalar and expands ${NAME} in it.
func (s *schema) scalar(n *yaml.Node, t reflect.Type, path string) bool {
	if n.Kind != yaml.ScalarNode {
		want := "a string"
		switch {
		case t == durationType:
			want = "a duration such as 30s"
		case t.Kind() == reflect.Int64:
			want = "an integer"
		case t.Kind() == reflect.Float64:
			want = "a number"
		case t.Kind() == reflect.Bool:
			want = "true or false"
		}
		s.add(path, n, "must be %s, not %s", want, describe(n))
		return false
	}
	s.expand(n, t, path)
	return true
}

// expand replaces ${NAME} references in scalar n, once.
func (s *schema) expand(n *yaml.Node, t reflect.Type, path string) {
	if s.expanded[n] {
		return
	}
	s.expanded[n] = true
	if !strings.Contains(n.Value, "$") {
		return
	}
	v, errs := expand(n.Value, s.lookupEnv)
	for _, e := range errs {
		s.add(path, n, "%s", e)
	}
	if v == n.Value {
		return
	}
	n.Value = v
	s.fromEnv[n] = true
	if t.Kind() != reflect.String && n.Style == 0 {
		// A plain "${MAX}" was resolved as a string when parsed; let the
		// expanded value resolve afresh so that 2048 decodes as an integer.
		n.Tag = ""
	}
}

// expand performs ${NAME}, ${NAME:-default} and $$ substitution on s. It
// reports every malformed or unset reference; the result is then partial.
func expand(s string, lookupEnv func(string) (string, bool)) (string, []string) {
	var b strings.Builder
	var errs []string
	for {
		i := strings.IndexByte(s, '$')
		if i < 0 || i == len(s)-1 {
			b.WriteString(s)
			return b.String(), errs
		}
		b.WriteString(s[:i])
		switch s[i+1] {
		case '$':
			b.WriteByte('$')
			s = s[i+2:]
			continue
		case '{':
		default:
			b.WriteByte('$')
			s = s[i+1:]
			continue
		}
		end := strings.IndexByte(s[i:], '}')
		if end < 0 {
			errs = append(errs, "unterminated ${ (write $$ for a literal $)")
			return b.String(), errs
		}
		ref := s[i+2 : i+end]
		s = s[i+end+1:]
		name, def, hasDef := strings.Cut(ref, ":-")
		switch {
		case !validEnvName(name):
			errs = append(errs, fmt.Sprintf("invalid variable reference ${%q}: want ${NAME} or ${NAME:-default}, NAME being letters, digits and _", truncate(ref)))
		case hasDef && strings.Contains(def, "${"):
			errs = append(errs, fmt.Sprintf("nested reference in the default of ${%s} is not supported", name))
		default:
			v, ok := lookupEnv(name)
			switch {
			case ok && (v != "" || !hasDef):
				b.WriteString(v)
			case hasDef:
				b.WriteString(def)
			default:
				errs = append(errs, fmt.Sprintf("environment variable %s is not set (write ${%s:-default} to make it optional)", name, name))
			}
		}
	}
}

func validEnvName(s string) bool {
	if s == "" || ('0' <= s[0] && s[0] <= '9') {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c == '_' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9') {
			return false
		}
	}
	return true
}

func truncate(s string) string {
	if r := []rune(s); len(r) > 40 {
		return string(r[:40]) + "…"
	}
	return s
}
