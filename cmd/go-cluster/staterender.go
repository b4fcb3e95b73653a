package main

import (
	"fmt"
	"io"
	"strconv"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/ozanturksever/go-cluster/state"
)

// Events of state watch.
const (
	stateEventPut     = "put"     // a value was written
	stateEventDeleted = "deleted" // the key was deleted
)

// stateEntryView is a state entry as state get --json prints it, and as
// state watch --json prints each event.
type stateEntryView struct {
	// Event is "put" or "deleted"; state watch only.
	Event string `json:"event,omitempty"`
	Key   string `json:"key"`
	// Value is the value when it is UTF-8 text; ValueBase64 the value
	// otherwise (JSON strings cannot carry arbitrary bytes). Neither is
	// set for a deletion.
	Value       *string `json:"value,omitempty"`
	ValueBase64 []byte  `json:"value_base64,omitempty"`
	// Revision is the bucket's revision of this write.
	Revision uint64 `json:"revision"`
	// Epoch is the epoch of the tenure that wrote the value; absent when
	// unknown (written by something else than the library, and always in
	// state watch, whose entries carry no epoch).
	Epoch int64 `json:"epoch,omitempty"`
	// Created is when the server stored the write.
	Created time.Time `json:"created"`
}

// viewEntry turns a library entry into what the CLI prints.
func viewEntry(ent state.Entry, event string) stateEntryView {
	v := stateEntryView{Event: event, Key: ent.Key, Revision: ent.Revision, Epoch: ent.Epoch, Created: ent.Created}
	switch {
	case ent.Deleted:
	case utf8.Valid(ent.Value):
		s := string(ent.Value)
		v.Value = &s
	default:
		v.ValueBase64 = ent.Value
	}
	return v
}

// renderStateEvent prints one state watch event as a line of text.
func renderStateEvent(w io.Writer, ev stateEntryView) error {
	what := ev.Key
	if ev.Event == stateEventPut {
		what += " = " + fmtValue(ev)
	}
	_, err := fmt.Fprintf(w, "%s  %-8s  %s  [revision %d]\n", fmtTime(ev.Created), ev.Event, what, ev.Revision)
	return err
}

// fmtValue shows a value on one line: as it is when it is printable
// text, else quoted with Go escapes (and "" when empty).
func fmtValue(ev stateEntryView) string {
	if ev.Value == nil {
		return strconv.Quote(string(ev.ValueBase64)) // not UTF-8: \x escapes
	}
	s := *ev.Value
	printable := s != ""
	for _, r := range s {
		printable = printable && unicode.IsPrint(r)
	}
	if printable {
		return s
	}
	return strconv.Quote(s)
}
