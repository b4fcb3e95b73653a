package agent

import (
	"bytes"
	"errors"
	"io"
	"os"
	"reflect"
	"regexp"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Load reads, decodes and validates the configuration file at path. Every
// problem found is in the returned *ConfigError (which wraps
// ErrInvalidConfig), each naming the file, the field's path and its line.
func Load(path string) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, &ConfigError{Problems: []Problem{{File: path, Msg: err.Error()}}}
	}
	return Parse(path, data)
}

// yamlLine finds the line in a YAML syntax error's message.
var yamlLine = regexp.MustCompile(`line (\d+)`)

// Parse decodes and validates data, read from file (named in errors).
func Parse(file string, data []byte) (*Config, error) {
	var root yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&root); err != nil {
		p := Problem{File: file, Msg: err.Error()}
		if errors.Is(err, io.EOF) {
			p.Msg = "the file is empty"
		} else if m := yamlLine.FindStringSubmatch(err.Error()); m != nil {
			p.Line, _ = strconv.Atoi(m[1])
			if strings.Contains(p.Msg, "tab character") {
				p.Line = tabLine(data, p.Line)
				p.Msg = yamlLine.ReplaceAllString(p.Msg, "line "+strconv.Itoa(p.Line))
			}
		}
		return nil, newConfigError([]Problem{p})
	}
	d := &decoder{file: file, lines: map[string]int{}}
	var cfg Config
	d.decode(&root, reflect.ValueOf(&cfg).Elem(), "")
	var extra yaml.Node
	if err := dec.Decode(&extra); err == nil {
		d.fail("", extra.Line, "a second YAML document: the file must hold one")
	}
	v := &validator{decoder: d, decodeProblems: len(d.problems)}
	v.config(&cfg)
	if len(d.problems) > 0 {
		return nil, newConfigError(d.problems)
	}
	cfg.src = source{file: file, lines: d.lines}
	return &cfg, nil
}

// tabLine is the first line, from line from on, with a tab in its
// indentation: where a "tab character that violates indentation" is.
// The YAML library names the line where the enclosing value began, one
// or more lines before the tab (its context mark, not its problem mark,
// which the error does not carry); from if none is found.
func tabLine(data []byte, from int) int {
	for i, line := range strings.Split(string(data), "\n") {
		if i+1 >= from && strings.Contains(line[:len(line)-len(strings.TrimLeft(line, " \t"))], "\t") {
			return i + 1
		}
	}
	return from
}
