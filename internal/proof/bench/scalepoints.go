package main

import (
	"encoding/json"
	"fmt"
	"os"
)

// scalePoint is one count of figure 5, as -scale-points writes it for
// internal/proof/scaleplot.
type scalePoint struct {
	Clusters     int     `json:"clusters"`
	LedAfterS    float64 `json:"led_after_s"`    // from the first Start until every cluster led
	ServerCPUPct float64 `json:"server_cpu_pct"` // of a core, in the steady window
	ServerRSSMiB int64   `json:"server_rss_mib"` // at the end of the steady window
	Spurious     int64   `json:"spurious"`       // transitions in the steady window
	Leaderless   int     `json:"leaderless"`     // clusters without exactly one leader at its end
}

// writeScalePoint appends p to the -scale-points file, if one was named.
func (bn *bench) writeScalePoint(p scalePoint) error {
	if bn.o.scalePoints == "" {
		return nil
	}
	line, err := json.Marshal(p)
	if err != nil {
		return err
	}
	f, err := os.OpenFile(bn.o.scalePoints, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return fmt.Errorf("-scale-points: %w", err)
	}
	if _, err := f.Write(append(line, '\n')); err != nil {
		f.Close()
		return fmt.Errorf("-scale-points: %w", err)
	}
	return f.Close()
}
