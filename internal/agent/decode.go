package agent

import (
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// decoder fills a value from a YAML node tree strictly: unknown and
// repeated keys, and values of the wrong kind, are problems naming the
// field's path and line. It goes on after a problem, to report them all.
type decoder struct {
	file     string
	problems []Problem
	lines    map[string]int // the line of each field path seen
}

var durationType = reflect.TypeFor[Duration]()

func (d *decoder) fail(path string, line int, format string, args ...any) {
	d.problems = append(d.problems, Problem{File: d.file, Path: path, Line: line, Msg: fmt.Sprintf(format, args...)})
}

// decode fills v (settable) from n.
func (d *decoder) decode(n *yaml.Node, v reflect.Value, path string) {
	for n.Kind == yaml.DocumentNode || n.Kind == yaml.AliasNode {
		if n.Kind == yaml.AliasNode {
			n = n.Alias
		} else if len(n.Content) == 0 {
			return
		} else {
			n = n.Content[0]
		}
	}
	if path != "" {
		if _, seen := d.lines[path]; !seen {
			d.lines[path] = n.Line
		}
	}
	if n.Kind == yaml.ScalarNode && n.Tag == "!!null" {
		return // "key:" with no value: not set
	}
	switch {
	case v.Type() == durationType:
		d.duration(n, v, path)
	case v.Kind() == reflect.Pointer:
		p := reflect.New(v.Type().Elem())
		d.decode(n, p.Elem(), path)
		v.Set(p)
	case v.Kind() == reflect.Struct:
		d.structure(n, v, path)
	case v.Kind() == reflect.Slice:
		d.sequence(n, v, path)
	case v.Kind() == reflect.Map:
		d.mapping(n, v, path)
	default:
		d.scalar(n, v, path)
	}
}

// kindName names a node's kind for messages.
func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	default:
		return fmt.Sprintf("%q", n.Value)
	}
}

func (d *decoder) structure(n *yaml.Node, v reflect.Value, path string) {
	if n.Kind != yaml.MappingNode {
		d.fail(path, n.Line, "want a mapping of keys, not %s", kindName(n))
		return
	}
	fields := map[string]int{}
	var names []string
	for i := range v.NumField() {
		name, _, _ := strings.Cut(v.Type().Field(i).Tag.Get("yaml"), ",")
		if name != "" && name != "-" {
			fields[name] = i
			names = append(names, name)
		}
	}
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, val := n.Content[i], n.Content[i+1]
		key := join(path, k.Value)
		idx, ok := fields[k.Value]
		switch {
		case k.Kind != yaml.ScalarNode:
			d.fail(path, k.Line, "a key must be a plain name")
		case !ok:
			d.fail(key, k.Line, "unknown key %q (known here: %s)", k.Value, strings.Join(names, ", "))
		case seen[k.Value]:
			d.fail(key, k.Line, "repeated key (first on line %d)", d.lines[key])
		default:
			seen[k.Value] = true
			d.lines[key] = k.Line
			d.decode(val, v.Field(idx), key)
		}
	}
}

func (d *decoder) sequence(n *yaml.Node, v reflect.Value, path string) {
	if n.Kind != yaml.SequenceNode {
		d.fail(path, n.Line, "want a list, not %s", kindName(n))
		return
	}
	s := reflect.MakeSlice(v.Type(), len(n.Content), len(n.Content))
	for i, e := range n.Content {
		d.decode(e, s.Index(i), fmt.Sprintf("%s[%d]", path, i))
	}
	v.Set(s)
}

// mapping fills a map of string keys (metadata).
func (d *decoder) mapping(n *yaml.Node, v reflect.Value, path string) {
	if n.Kind != yaml.MappingNode {
		d.fail(path, n.Line, "want a mapping, not %s", kindName(n))
		return
	}
	m := reflect.MakeMap(v.Type())
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, val := n.Content[i], n.Content[i+1]
		key := join(path, k.Value)
		if k.Kind != yaml.ScalarNode {
			d.fail(path, k.Line, "a key must be a plain name")
			continue
		}
		if m.MapIndex(reflect.ValueOf(k.Value)).IsValid() {
			d.fail(key, k.Line, "repeated key")
			continue
		}
		e := reflect.New(v.Type().Elem()).Elem()
		d.decode(val, e, key)
		m.SetMapIndex(reflect.ValueOf(k.Value), e)
	}
	v.Set(m)
}

func (d *decoder) scalar(n *yaml.Node, v reflect.Value, path string) {
	if n.Kind != yaml.ScalarNode {
		d.fail(path, n.Line, "want a single value, not %s", kindName(n))
		return
	}
	switch v.Kind() {
	case reflect.String:
		v.SetString(n.Value) // a number or true is a string here too, as written
	case reflect.Int:
		i, err := strconv.Atoi(n.Value)
		if err != nil || n.Tag != "!!int" {
			d.fail(path, n.Line, "want a whole number, not %q", n.Value)
			return
		}
		v.SetInt(int64(i))
	case reflect.Bool:
		if n.Tag != "!!bool" {
			d.fail(path, n.Line, "want true or false, not %q", n.Value)
			return
		}
		v.SetBool(slices.Contains([]string{"true", "True", "TRUE"}, n.Value))
	default:
		panic("agent: no decoder for " + v.Type().String()) // a field of a type this file does not handle
	}
}

func (d *decoder) duration(n *yaml.Node, v reflect.Value, path string) {
	if n.Kind != yaml.ScalarNode {
		d.fail(path, n.Line, "want a duration such as 10s, not %s", kindName(n))
		return
	}
	if n.Value == "0" {
		v.SetInt(0)
		return
	}
	t, err := time.ParseDuration(n.Value)
	if err != nil {
		if _, nerr := strconv.ParseFloat(n.Value, 64); nerr == nil {
			d.fail(path, n.Line, "%s has no unit: write it as %ss, %sms or %sm", n.Value, n.Value, n.Value, n.Value)
		} else {
			d.fail(path, n.Line, "want a duration such as 10s, 500ms or 1m30s, not %q", n.Value)
		}
		return
	}
	v.SetInt(int64(t))
}

// join appends key to a field path.
func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}
