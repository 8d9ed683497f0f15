package runs

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"

	"github.com/scalein-planner/scalein/sim"
	"github.com/scalein-planner/scalein/store"
)

// StoredSummary is what a done run stores as its summary (store.Run.SummaryJSON): the report
// without its per-request rows, plus the one per-request figure a page draws, the histogram of
// the requests' TTFTs (at most 101 counts, however many requests). Pages, compare, workers.csv
// and charts read only this; the rows stay in the stored report, which report.json, the API's
// run document and trace.json read.
type StoredSummary struct {
	sim.Report
	// TTFTHistogram counts first_token_ms − arrival_ms of the per-request rows with a first
	// token; absent when the report has no such row.
	TTFTHistogram *TTFTCounts `json:"ttft_histogram,omitempty"`
	// LegacyTTFTsMS is what summaries stored before the histogram held instead: one TTFT per
	// request. LoadSummary turns it into TTFTHistogram; it is never written.
	LegacyTTFTsMS []float64 `json:"request_ttfts_ms,omitempty"`
}

// Summarize builds the summary of a report.
func Summarize(rep *sim.Report) *StoredSummary {
	sum := &StoredSummary{Report: *rep, TTFTHistogram: requestTTFTCounts(rep)}
	sum.Requests = nil
	return sum
}

// EncodeSummary encodes the stored summary of a report, as FinishClaimed and SetSummary store it.
func EncodeSummary(rep *sim.Report) ([]byte, error) {
	return json.Marshal(Summarize(rep))
}

// Reader reads the stored summaries and reports of done runs. The service reads through one;
// so can a fake of the service in another package's tests (web's), which then reads what the
// service reads, legacy summaries and backfills included.
type Reader struct {
	store *store.Store
	log   *slog.Logger
}

// NewReader is a reader of the runs in st; log says when a summary could not be stored back.
func NewReader(st *store.Store, log *slog.Logger) *Reader {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Reader{store: st, log: log}
}

// LoadSummary decodes a done run's stored summary (Reader.LoadSummary).
func (s *Service) LoadSummary(ctx context.Context, run store.Run) (*StoredSummary, error) {
	return s.reader.LoadSummary(ctx, run)
}

// LoadReport decodes a done run's full report (Reader.LoadReport).
func (s *Service) LoadReport(ctx context.Context, id string) (*sim.Report, error) {
	return s.reader.LoadReport(ctx, id)
}

// LoadSummary decodes a done run's stored summary. A run finished before summaries were stored
// has none: it is computed from the report once (the only page view that reads the report) and
// stored, so later views read the summary.
func (s *Reader) LoadSummary(ctx context.Context, run store.Run) (*StoredSummary, error) {
	if len(run.SummaryJSON) == 0 {
		return s.backfillSummary(ctx, run.ID)
	}
	var sum StoredSummary
	if err := json.Unmarshal(run.SummaryJSON, &sum); err != nil {
		return nil, fmt.Errorf("decode stored summary of run %s: %w", run.ID, err)
	}
	if len(sum.LegacyTTFTsMS) > 0 {
		// Stored before the histogram: the same counts, from the TTFTs it kept. The summary is
		// stored again in the current layout, without the TTFTs, so later views read less.
		if sum.TTFTHistogram == nil {
			sum.TTFTHistogram = CountTTFTs(sum.LegacyTTFTsMS)
		}
		sum.LegacyTTFTsMS = nil
		if b, err := json.Marshal(&sum); err == nil {
			if err := s.store.ReplaceSummary(ctx, run.ID, run.SummaryJSON, b); err != nil {
				s.log.Warn("rewriting a run's summary without its TTFTs failed; it is converted again on the next view", "run", run.ID, "err", err)
			}
		}
	}
	return &sum, nil
}

func (s *Reader) backfillSummary(ctx context.Context, id string) (*StoredSummary, error) {
	rep, err := s.LoadReport(ctx, id)
	if err != nil {
		return nil, err
	}
	sum := Summarize(rep)
	b, err := json.Marshal(sum)
	if err != nil {
		return nil, fmt.Errorf("encode summary of run %s: %w", id, err)
	}
	if err := s.store.SetSummary(ctx, id, b); err != nil {
		s.log.Warn("storing the summary of a run failed; it is computed again on the next view", "run", id, "err", err)
	}
	return sum, nil
}

// LoadReport decodes a done run's full report, per-request rows included (trace.json), from
// the stored chunks as they are read: the report's JSON is never held whole.
func (s *Reader) LoadReport(ctx context.Context, id string) (*sim.Report, error) {
	stored, err := s.store.OpenReport(ctx, id)
	if err != nil {
		return nil, err
	}
	rc, err := stored.JSON(ctx)
	if err != nil {
		return nil, err
	}
	defer func() { _ = rc.Close() }()
	var rep sim.Report
	if err := json.NewDecoder(rc).Decode(&rep); err != nil {
		return nil, fmt.Errorf("decode stored report of run %s: %w", id, err)
	}
	return &rep, nil
}
