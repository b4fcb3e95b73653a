package agent

import (
	"bytes"
	"errors"
	"io"
	"os"
	"reflect"
	"regexp"
	"strconv"

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
