package health

// Fuzz targets for what the health package decodes from outside: requests
// a Checker receives and replies a Client receives.
//
//	go test -run='^$' -fuzz='^FuzzValidateRequest$' -fuzztime=10s ./health
//	go test -run='^$' -fuzz='^FuzzCheckerRequest$' -fuzztime=10s ./health
//	go test -run='^$' -fuzz='^FuzzDecodeResponse$' -fuzztime=10s ./health

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/ozanturksever/go-cluster/internal/natstest"
)

// requestSeeds are request payloads: accepted ones, and every kind of
// malformed one.
var requestSeeds = []string{
	"", " ", "\n\t ", "{}", " {} ", `{"a":1}`, `{"a":{"b":[1,2,{}]}}`, `{"a":1,"a":2}`,
	"null", "[]", "1", `"x"`, "true", "{", "}", "{}{}", "{} x", `{"a":}`, "{\"a\":\"\xff\"}",
	"\x00", "\xef\xbb\xbf{}", strings.Repeat(" ", MaxRequestSize) + "{}",
	"{" + strings.Repeat(`"k":1,`, 200) + `"k":1}`, strings.Repeat("[", 600),
}

// acceptedRequest is the documented rule, written independently of
// validateRequest: at most MaxRequestSize bytes, and white space only or
// one JSON object (surrounded by white space).
func acceptedRequest(data []byte) bool {
	if len(data) > MaxRequestSize {
		return false
	}
	trimmed := bytes.TrimSpace(data) // Go's (Unicode) white space, as documented by "white space only"
	if len(trimmed) == 0 {
		return true
	}
	if !json.Valid(trimmed) {
		return false
	}
	dec := json.NewDecoder(bytes.NewReader(trimmed))
	tok, err := dec.Token()
	return err == nil && tok == json.Delim('{')
}

// FuzzValidateRequest: validateRequest accepts exactly what the
// documentation says, and its errors say "invalid request".
func FuzzValidateRequest(f *testing.F) {
	for _, s := range requestSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		err := validateRequest(data)
		if want := acceptedRequest(data); (err == nil) != want {
			t.Fatalf("validateRequest(%q) = %v, documented rule says accepted=%v", data, err, want)
		}
		if err != nil && !strings.HasPrefix(err.Error(), "invalid request") {
			t.Fatalf("error %q does not say invalid request", err)
		}
	})
}

// FuzzCheckerRequest sends each payload to a running Checker over a real
// NATS server. Every request gets one reply that decodes as a Response from
// that node; it is an error reply exactly when the request is not accepted.
func FuzzCheckerRequest(f *testing.F) {
	for _, s := range requestSeeds {
		f.Add([]byte(s))
	}
	natstest.CheckLeaks(f)
	srv := runServer(f)
	nc := srv.Connect(f)
	startChecker(f, nc, "fuzz", "n1")
	subject := NodeSubject("fuzz", "n1")
	f.Fuzz(func(t *testing.T, data []byte) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		msg, err := nc.RequestWithContext(ctx, subject, data)
		if err != nil {
			if errors.Is(err, nats.ErrMaxPayload) {
				t.Skip("over the server's max_payload")
			}
			t.Fatalf("request %q: %v", data, err)
		}
		var r Response
		if err := json.Unmarshal(msg.Data, &r); err != nil {
			t.Fatalf("reply %q is not JSON: %v", msg.Data, err)
		}
		if r.NodeID != "n1" || r.Timestamp <= 0 {
			t.Fatalf("reply %+v lacks nodeId or timestamp", r)
		}
		if accepted := acceptedRequest(data); accepted == (r.Error != "") {
			t.Fatalf("request %q (accepted=%v) got reply %s", data, accepted, msg.Data)
		}
		if r.Error != "" && (r.Role != "" || r.Leader != "" || r.UptimeMs != 0 || r.Custom != nil || r.Epoch != 0) {
			t.Fatalf("error reply carries state: %s", msg.Data)
		}
	})
}

// FuzzDecodeResponse feeds arbitrary replies to the Client's decoder (any
// NATS client can answer on a health subject). Properties: no panic; every
// error wraps ErrInvalidResponse or ErrRemote; ErrRemote comes with the
// Response and its Error; a success names a node and re-encodes to a reply
// that decodes to the same Response.
func FuzzDecodeResponse(f *testing.F) {
	for _, s := range []string{
		`{"nodeId":"n1","role":"PRIMARY","leader":"n1","uptimeMs":5231,"timestamp":1767225600000,"custom":{"v":"1.4.2"},"epoch":7}`,
		`{"nodeId":"n1","timestamp":1,"error":"invalid request"}`,
		`{"nodeId":"","error":""}`, `{"error":"x"}`, `{}`, `null`, `[]`, `{"nodeId":5}`, `{"custom":{"a":[1,{"b":null}]},"nodeId":"x"}`,
		`{"nodeId":"n","uptimeMs":1e400}`, `{"nodeId":"0","custom":{}}`, `{"nodeId":"n","epoch":-1}`, "{\"nodeId\":\"\xff\"}", ``,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := decodeResponse(data)
		switch {
		case errors.Is(err, ErrRemote):
			if r.Error == "" {
				t.Fatalf("ErrRemote without the Response's Error: %+v", r)
			}
			return
		case err != nil:
			if !errors.Is(err, ErrInvalidResponse) {
				t.Fatalf("error %v wraps neither ErrInvalidResponse nor ErrRemote", err)
			}
			if !reflect.DeepEqual(r, Response{}) {
				t.Fatalf("invalid reply returned %+v", r)
			}
			return
		}
		if r.NodeID == "" || r.Error != "" {
			t.Fatalf("accepted a reply without nodeId, or with an error: %+v", r)
		}
		enc, err := json.Marshal(r)
		if err != nil {
			t.Fatalf("decoded response %+v does not encode: %v", r, err)
		}
		r2, err := decodeResponse(enc)
		if len(r.Custom) == 0 {
			r.Custom = nil // {} is omitted on the way back
		}
		if err != nil || !reflect.DeepEqual(r, r2) {
			t.Fatalf("round trip changed the response:\n %+v\n %+v (%v)", r, r2, err)
		}
	})
}
