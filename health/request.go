package health

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// MaxRequestSize is the largest request payload a Checker accepts, in bytes.
// Larger requests get an error reply.
const MaxRequestSize = 1024

// validateRequest checks a request payload. Accepted: an empty payload (what
// `nats req <subject> ""` sends), white space only, or one JSON object such
// as {} of at most MaxRequestSize bytes. Fields of the object are reserved
// for future use and ignored today.
func validateRequest(data []byte) error {
	if len(data) > MaxRequestSize {
		return fmt.Errorf("invalid request: %d bytes, at most %d accepted", len(data), MaxRequestSize)
	}
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) == 0 {
		return nil
	}
	if trimmed[0] != '{' {
		return fmt.Errorf("invalid request: payload must be empty or a JSON object")
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(trimmed, &fields); err != nil {
		return fmt.Errorf("invalid request: %v", err)
	}
	return nil
}
