package main

import (
	"fmt"
	"github.com/ozanturksever/go-cluster/internal/wire"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"

	cluster "github.com/ozanturksever/go-cluster"
	"github.com/ozanturksever/go-cluster/health"
)

// renderStatus prints a status report as text.
func renderStatus(w io.Writer, r statusReport) error {
	t := newTable(w)
	fmt.Fprintf(t, "cluster\t%s (bucket %s)\n", r.Cluster, r.Bucket)
	switch r.Lease {
	case stateHeld:
		fmt.Fprintf(t, "leader\t%s\n", r.Leader)
		fmt.Fprintf(t, "epoch\t%d\n", r.Epoch)
		if r.LeadingForMs != nil {
			since := fmt.Sprintf("~%s, since %s", fmtMillis(*r.LeadingForMs), fmtTime(*r.AcquiredAt))
			if r.ClockSkew {
				since = "unknown: acquired_at " + fmtTime(*r.AcquiredAt) + " is ahead of this machine's clock"
			}
			fmt.Fprintf(t, "leading\t%s (wall-clock estimate from acquired_at)\n", since)
		}
		if len(r.Metadata) > 0 {
			fmt.Fprintf(t, "metadata\t%s\n", fmtMetadata(r.Metadata))
		}
	case stateReleased:
		fmt.Fprintf(t, "leader\tnone: released at epoch %d%s\n", r.Epoch, nextNote(r.Next))
		fmt.Fprintf(t, "epoch\t%d\n", r.Epoch)
	case stateAbsent:
		fmt.Fprintf(t, "leader\tnone: no node has won the lease yet\n")
	case stateDeleted:
		fmt.Fprintf(t, "leader\tunknown: the lease key was deleted\n")
	case stateInvalid:
		fmt.Fprintf(t, "leader\tunknown: the lease is not a valid record (%s)\n", r.Problem)
	}
	if line := protocolLine(r); line != "" {
		fmt.Fprintf(t, "protocol\t%s\n", line)
	}
	if r.Revision != 0 {
		lease := fmt.Sprintf("revision %d", r.Revision)
		if r.WrittenAt != nil {
			lease += ", last written " + fmtTime(*r.WrittenAt)
		}
		if r.TTLMs != 0 {
			lease += ", ttl " + fmtMillis(r.TTLMs)
		}
		if r.Priority != 0 {
			lease += fmt.Sprintf(", leader's priority %d", r.Priority)
		}
		fmt.Fprintf(t, "lease\t%s\n", lease)
	}
	if err := t.Flush(); err != nil {
		return err
	}
	if len(r.Members) == 0 {
		_, err := fmt.Fprintln(w, "\nno member is announced or answers status requests")
		return err
	}
	fmt.Fprintln(w)
	return renderMembers(w, r.Members)
}

// renderMembers prints status's table of members.
func renderMembers(w io.Writer, members []memberReport) error {
	notes := make([]string, len(members))
	anyNotes := false
	for i, m := range members {
		notes[i] = memberNotes(m)
		anyNotes = anyNotes || notes[i] != ""
	}
	agents := false // a member run by go-cluster agent: VIPS and FAILING CHECKS columns
	for _, m := range members {
		agents = agents || m.VIPs != nil || m.FailingChecks != nil
	}
	t := newTable(w)
	header := "NODE\tROLE\tHEALTH\tLEADER\tEPOCH\tUPTIME"
	if agents {
		header += "\tVIPS\tFAILING CHECKS"
	}
	if anyNotes {
		header += "\tNOTES"
	}
	fmt.Fprintln(t, header)
	for i, m := range members {
		uptime := "-"
		if m.Health == healthOK || m.Health == healthNotReady {
			uptime = fmtMillis(m.UptimeMs)
		}
		row := fmt.Sprintf("%s\t%s\t%s\t%s\t%s\t%s", m.Node, roleCell(m), orDash(m.Health),
			orDash(m.Leader), epochCell(m.Epoch), uptime)
		if agents {
			row += "\t" + listCell(m.VIPs) + "\t" + listCell(m.FailingChecks)
		}
		if anyNotes {
			row += "\t" + notes[i]
		}
		fmt.Fprintln(t, row)
	}
	return t.Flush()
}

// memberNotes is a member's NOTES cell.
func memberNotes(m memberReport) string {
	var parts []string
	switch {
	case m.Error != "":
		parts = []string{m.Error}
		if m.NotReady != "" {
			parts = append(parts, "not ready: "+readinessReason(m.NotReady))
		}
	case m.NotReady != "": // the HEALTH column says "not ready"; this says why
		parts = append([]string{readinessReason(m.NotReady)}, m.Notes...)
	default:
		parts = m.Notes
	}
	return strings.Join(parts, "; ")
}

// listCell is an agent's list in a column: comma-separated, "-" when
// empty, blank for a member that is not an agent (nil).
func listCell(list []string) string {
	if list == nil {
		return ""
	}
	return orDash(strings.Join(list, ","))
}

// fmtMetadata shows the leader's metadata on one line, sorted by key:
// key=value, the value quoted unless it is plain (printable, without
// spaces, commas, quotes or '=').
func fmtMetadata(md map[string]string) string {
	parts := make([]string, 0, len(md))
	for _, k := range slices.Sorted(maps.Keys(md)) {
		v := md[k]
		plain := v != "" && !strings.ContainsAny(v, " ,=\"'")
		for _, r := range v {
			plain = plain && unicode.IsPrint(r)
		}
		if !plain {
			v = strconv.Quote(v)
		}
		parts = append(parts, k+"="+v)
	}
	return strings.Join(parts, ", ")
}

func nextNote(next string) string {
	if next == "" {
		return ""
	}
	return ", handed over to " + next
}

// renderWatchEvent prints one watch event as a line of text.
func renderWatchEvent(w io.Writer, ev watchEvent) error {
	var what string
	switch ev.Event {
	case eventLeader:
		what = fmt.Sprintf("%s leads, epoch %d", ev.Leader, ev.Epoch)
		if ev.Previous != "" {
			what += " (was " + ev.Previous + ")"
		}
	case eventRenewed:
		what = fmt.Sprintf("%s renewed, epoch %d", ev.Leader, ev.Epoch)
	case stateReleased:
		what = fmt.Sprintf("no leader: released at epoch %d", ev.Epoch)
		if ev.Previous != "" {
			what += " by " + ev.Previous
		}
		what += nextNote(ev.Next)
	case stateAbsent:
		what = "no leader: no node has won the lease yet"
	case stateDeleted:
		what = "the lease key was deleted"
	case stateInvalid:
		what = "the lease is not a valid record: " + ev.Problem
	}
	rev := ""
	if ev.Revision != 0 {
		rev = fmt.Sprintf("  [revision %d]", ev.Revision)
	}
	_, err := fmt.Fprintf(w, "%s  %-8s  %s%s\n", fmtTime(ev.Time), ev.Event, what, rev)
	return err
}

// renderStepdown prints the outcome of stepdown as text.
func renderStepdown(w io.Writer, r stepdownReport) error {
	if r.AlreadyLeader {
		_, err := fmt.Fprintf(w, "%s already leads (epoch %d): nothing to do\n", r.NewLeader, r.NewEpoch)
		return err
	}
	rep := r.Reply
	if !rep.OK {
		known := ""
		if rep.Leader != "" {
			known = " (it knows " + rep.Leader + " as the leader)"
		}
		_, err := fmt.Fprintf(w, "%s refused: %s%s\n", orDash(rep.Node), rep.Error, known)
		return err
	}
	line := fmt.Sprintf("%s stepped down from epoch %d", rep.Node, rep.Epoch)
	if rep.To != "" {
		line += ", handing over to " + rep.To
	}
	if _, err := fmt.Fprintln(w, line); err != nil {
		return err
	}
	if r.NewLeader != "" {
		_, err := fmt.Fprintf(w, "%s leads now, epoch %d\n", r.NewLeader, r.NewEpoch)
		return err
	}
	return nil
}

// renderHealth prints health replies as a table. ROLE is leader or
// follower for the replies' PRIMARY and PASSIVE (--json keeps those).
// READY is "no" for a node whose ReadinessCheck has not passed or failed
// too often; a NOTES column then says why.
func renderHealth(w io.Writer, rs []health.Response) error {
	anyNotReady := false
	for _, r := range rs {
		anyNotReady = anyNotReady || !r.IsReady()
	}
	t := newTable(w)
	header := "NODE\tROLE\tREADY\tLEADER\tEPOCH\tUPTIME\tCUSTOM"
	if anyNotReady {
		header += "\tNOTES"
	}
	fmt.Fprintln(t, header)
	for _, r := range rs {
		ready, notes := "yes", ""
		if !r.IsReady() {
			ready, notes = "no", "not ready: "+readinessReason(r.NotReady)
		}
		var row string
		if r.Error != "" {
			row = fmt.Sprintf("%s\t-\t%s\t-\t-\t-\terror: %s", r.NodeID, ready, r.Error)
		} else {
			row = fmt.Sprintf("%s\t%s\t%s\t%s\t%s\t%s\t%s", r.NodeID, orDash(roleWord(r.Role)), ready, orDash(r.Leader),
				epochCell(r.Epoch), fmtDuration(time.Duration(r.UptimeMs)*time.Millisecond), fmtCustom(r.Custom))
		}
		if anyNotReady {
			row += "\t" + notes
		}
		fmt.Fprintln(t, row)
	}
	return t.Flush()
}

// readinessReason is a health reply's notReady without the
// "cluster: not ready: " its text starts with, for a column or message
// that already says "not ready".
func readinessReason(notReady string) string {
	return strings.TrimPrefix(notReady, cluster.ErrNotReady.Error()+": ")
}

// protocolLine is the election protocol the cluster runs, and, when its
// members all speak a later one, that it moves there by itself; empty in
// the common case, a cluster at this build's protocol with nowhere to
// move (the JSON has it always).
func protocolLine(r statusReport) string {
	if r.Protocol == 0 {
		return ""
	}
	speak := 0
	for _, m := range r.Members {
		if len(m.Protocols) == 2 && (speak == 0 || m.Protocols[1] < speak) {
			speak = m.Protocols[1]
		}
	}
	switch {
	case speak > r.Protocol:
		return fmt.Sprintf("%d (every member speaks %d: the leader moves the cluster to it within a LeaseTTL)", r.Protocol, speak)
	case r.Protocol != wire.Protocol:
		return strconv.Itoa(r.Protocol)
	}
	return ""
}
