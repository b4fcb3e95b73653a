package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
	"time"
)

// writeJSON prints v as indented JSON.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// writeJSONLine prints v as one line of JSON (a stream of events).
func writeJSONLine(w io.Writer, v any) error {
	return json.NewEncoder(w).Encode(v)
}

// table aligns tab-separated columns; Flush writes them to out, without
// the padding an empty last column leaves at the end of a line.
type table struct {
	*tabwriter.Writer
	buf bytes.Buffer
	out io.Writer
}

// newTable returns a table that writes to w once flushed.
func newTable(w io.Writer) *table {
	t := &table{out: w}
	t.Writer = tabwriter.NewWriter(&t.buf, 0, 0, 2, ' ', 0)
	return t
}

// Flush aligns what was written and writes it out.
func (t *table) Flush() error {
	if err := t.Writer.Flush(); err != nil {
		return err
	}
	lines := strings.SplitAfter(t.buf.String(), "\n")
	t.buf.Reset()
	for _, l := range lines {
		if l == "" {
			continue
		}
		nl := strings.HasSuffix(l, "\n")
		l = strings.TrimRight(l, " \n")
		if nl {
			l += "\n"
		}
		if _, err := io.WriteString(t.out, l); err != nil {
			return err
		}
	}
	return nil
}

// fmtDuration rounds d for people: milliseconds under a second, tenths of a
// second under a minute, seconds above.
func fmtDuration(d time.Duration) string {
	switch {
	case d < time.Second:
		return d.Round(time.Millisecond).String()
	case d < time.Minute:
		return d.Round(100 * time.Millisecond).String()
	default:
		return d.Round(time.Second).String()
	}
}

// fmtMillis formats a duration given in milliseconds.
func fmtMillis(ms int64) string { return fmtDuration(time.Duration(ms) * time.Millisecond) }

// timeLayout is RFC 3339 with milliseconds.
const timeLayout = "2006-01-02T15:04:05.000Z07:00"

// fmtTime formats t in UTC with milliseconds.
func fmtTime(t time.Time) string { return t.UTC().Format(timeLayout) }

// fmtCustom formats a health reply's custom values as sorted key=value
// pairs, the values in JSON.
func fmtCustom(m map[string]any) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		v, err := json.Marshal(m[k])
		if err != nil {
			v = []byte(fmt.Sprint(m[k]))
		}
		parts = append(parts, k+"="+string(v))
	}
	return strings.Join(parts, " ")
}

// orDash returns s, or "-" when it is empty, so that table columns stay aligned.
func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// epochCell formats an epoch, "-" when unknown (0).
func epochCell(e int64) string {
	if e == 0 {
		return "-"
	}
	return fmt.Sprint(e)
}
