package main

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/ozanturksever/go-cluster/state"
)

func TestRenderStateEvent(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	put := func(key string, value []byte, rev uint64) stateEntryView {
		return viewEntry(state.Entry{Key: key, Value: value, Revision: rev, Created: at}, stateEventPut)
	}
	for _, tc := range []struct {
		ev   stateEntryView
		want string
	}{
		{put("config.mode", []byte("fast"), 7), "2026-05-01T12:00:00.000Z  put       config.mode = fast  [revision 7]\n"},
		{put("config.mode", []byte(`{"a": 1}`), 8), "2026-05-01T12:00:00.000Z  put       config.mode = {\"a\": 1}  [revision 8]\n"},
		{put("doc", []byte("two\nlines"), 9), "2026-05-01T12:00:00.000Z  put       doc = \"two\\nlines\"  [revision 9]\n"},
		{put("blob", []byte{0xff, 0x00}, 10), "2026-05-01T12:00:00.000Z  put       blob = \"\\xff\\x00\"  [revision 10]\n"},
		{put("empty", nil, 11), "2026-05-01T12:00:00.000Z  put       empty = \"\"  [revision 11]\n"},
		{viewEntry(state.Entry{Key: "config.mode", Revision: 12, Created: at, Deleted: true}, stateEventDeleted),
			"2026-05-01T12:00:00.000Z  deleted   config.mode  [revision 12]\n"},
	} {
		var b strings.Builder
		if err := renderStateEvent(&b, tc.ev); err != nil {
			t.Fatal(err)
		}
		if b.String() != tc.want {
			t.Errorf("got  %q\nwant %q", b.String(), tc.want)
		}
	}
}

// JSON carries a value as text when it is UTF-8, else in base64, and
// leaves both out for a deletion.
func TestStateEntryJSON(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		ent   state.Entry
		event string
		want  string
	}{
		{state.Entry{Key: "k", Value: []byte("v"), Revision: 3, Epoch: 2, Created: at}, "",
			`{"key":"k","value":"v","revision":3,"epoch":2,"created":"2026-05-01T12:00:00Z"}`},
		{state.Entry{Key: "k", Value: []byte{}, Revision: 3, Created: at}, "",
			`{"key":"k","value":"","revision":3,"created":"2026-05-01T12:00:00Z"}`},
		{state.Entry{Key: "k", Value: []byte{0xff}, Revision: 3, Created: at}, stateEventPut,
			`{"event":"put","key":"k","value_base64":"/w==","revision":3,"created":"2026-05-01T12:00:00Z"}`},
		{state.Entry{Key: "k", Revision: 4, Created: at, Deleted: true}, stateEventDeleted,
			`{"event":"deleted","key":"k","revision":4,"created":"2026-05-01T12:00:00Z"}`},
	} {
		b, err := json.Marshal(viewEntry(tc.ent, tc.event))
		if err != nil {
			t.Fatal(err)
		}
		if string(b) != tc.want {
			t.Errorf("got  %s\nwant %s", b, tc.want)
		}
	}
}
