package calibrate

import (
	"bufio"
	"io"
	"strconv"

	"github.com/scalein-planner/scalein/sim"
)

// PassWriter writes the simulated passes of one worker as FPM lines,
// {"received_at_ns": <end of the pass in simulated ns>, "metrics": {"worker_id": "<id>",
// "dp_rank": 0, "wall_time": <seconds>, "scheduled_requests": {…}}}, which Parse reads back.
// num_decode_requests is the model's D (requests that emit a token, prompt completers
// included), so fitting an export gives back the timing it was simulated with; see
// docs/calibration.md for how this differs from a measured FPM.
type PassWriter struct {
	Worker int
	// Max bounds the passes written (0: no bound); Full reports that it was reached.
	Max  int
	N    int
	Full bool

	w   *bufio.Writer
	buf []byte
	err error
}

// NewPassWriter writes worker's passes to w; call Flush at the end.
func NewPassWriter(w io.Writer, worker, max int) *PassWriter {
	return &PassWriter{Worker: worker, Max: max, w: bufio.NewWriterSize(w, 64<<10)}
}

// Record is a sim.RunOptions.Pass function.
func (pw *PassWriter) Record(r sim.PassRecord) {
	if r.Worker != pw.Worker || pw.err != nil {
		return
	}
	if pw.Max > 0 && pw.N >= pw.Max {
		pw.Full = true
		return
	}
	pw.N++
	b := pw.buf[:0]
	b = append(b, `{"received_at_ns":`...)
	b = strconv.AppendInt(b, r.EndNS, 10)
	b = append(b, `,"metrics":{"worker_id":"`...)
	b = strconv.AppendInt(b, int64(r.Worker), 10)
	b = append(b, `","dp_rank":0,"wall_time":`...)
	b = strconv.AppendFloat(b, float64(r.EndNS-r.StartNS)/1e9, 'g', -1, 64)
	b = append(b, `,"scheduled_requests":{"num_prefill_requests":`...)
	b = strconv.AppendInt(b, int64(r.PrefillRequests), 10)
	b = append(b, `,"sum_prefill_tokens":`...)
	b = strconv.AppendInt(b, int64(r.PrefillTokens), 10)
	b = append(b, `,"num_decode_requests":`...)
	b = strconv.AppendInt(b, int64(r.DecodeRequests), 10)
	b = append(b, `,"sum_decode_kv_tokens":`...)
	b = strconv.AppendInt(b, int64(r.DecodeKVTokens), 10)
	b = append(b, "}}}\n"...)
	pw.buf = b
	_, pw.err = pw.w.Write(b)
}

// Flush writes what is buffered and returns the first write error.
func (pw *PassWriter) Flush() error {
	if pw.err != nil {
		return pw.err
	}
	return pw.w.Flush()
}
