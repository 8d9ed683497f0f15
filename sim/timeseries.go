package sim

import (
	"math"
)

type gauges struct {
	active, draining, waiting, running, starting int64
	// pd: prefill active, draining, starting, then decode's (model 5).
	pd [6]int64
}

type seriesBucket struct {
	set    bool
	g      gauges
	c      instantCounters
	lastAt int64
}

// seriesFamily keeps buckets of width base × 10^k ns, coarsening ×10 whenever an instant falls
// past the 200th bucket, so memory stays constant whatever the run's length: the buckets live in
// one array of maxBuckets, allocated once, which coarsening rewrites in place (the memory model
// counts 3 × maxBuckets buckets and no garbage for the series).
type seriesFamily struct {
	width   int64
	buckets []seriesBucket
	end     int64 // end of the last bucket; instants only grow, so most land in it
}

const maxBuckets = 200

func (f *seriesFamily) record(t int64, g gauges, c instantCounters) {
	if t >= f.end || len(f.buckets) == 0 {
		if f.buckets == nil {
			f.buckets = make([]seriesBucket, 0, maxBuckets)
		}
		for t/f.width >= maxBuckets {
			f.coarsen()
		}
		i := int(t / f.width)
		for len(f.buckets) <= i {
			f.buckets = append(f.buckets, seriesBucket{})
		}
		f.end = int64(len(f.buckets)) * f.width
	}
	b := &f.buckets[len(f.buckets)-1]
	b.set, b.g, b.lastAt = true, g, t
	b.c.staged += c.staged
	b.c.landed += c.landed
	b.c.rejected += c.rejected
	b.c.completed += c.completed
	b.c.migrated += c.migrated
	b.c.hoLanded += c.hoLanded
	b.c.hoFailed += c.hoFailed
}

// coarsen merges every ten buckets into one, in place: bucket j is written after buckets 10j …
// 10j+9 are read, and j ≤ 10j, so no bucket is overwritten before it is read.
func (f *seriesFamily) coarsen() {
	n := (len(f.buckets) + 9) / 10
	for j := range n {
		var o seriesBucket
		for _, b := range f.buckets[10*j : min(10*j+10, len(f.buckets))] {
			if b.set {
				o.set, o.g, o.lastAt = true, b.g, b.lastAt
			}
			o.c.staged += b.c.staged
			o.c.landed += b.c.landed
			o.c.rejected += b.c.rejected
			o.c.completed += b.c.completed
			o.c.migrated += b.c.migrated
			o.c.hoLanded += b.c.hoLanded
			o.c.hoFailed += b.c.hoFailed
		}
		f.buckets[j] = o
	}
	f.buckets = f.buckets[:n]
	f.width *= 10
	f.end = int64(len(f.buckets)) * f.width
}

// seriesRecorder records gauges and counters per instant into three families of bucket widths
// (1, 2 and 5 × 10^k µs); the report uses the smallest width that gives at most 200 buckets.
//
// Consecutive instants that fall in the same bucket of every family are first merged into one
// pending record (last gauges, summed counters), so most instants cost one update, not three.
type seriesRecorder struct {
	families [3]seriesFamily
	initial  gauges
	pd       bool // the buckets carry the pools' columns
	pend     seriesBucket
	pendEnd  int64 // instants before this lie in the pending record's bucket of every family
}

func newSeriesRecorder(workers int64) *seriesRecorder {
	return &seriesRecorder{
		families: [3]seriesFamily{{width: 1000}, {width: 2000}, {width: 5000}},
		initial:  gauges{active: workers},
	}
}

func (s *seriesRecorder) record(t int64, g gauges, c instantCounters) {
	p := &s.pend
	if p.set && t >= s.pendEnd {
		s.flush()
	}
	if !p.set {
		*p = seriesBucket{set: true, g: g, c: c, lastAt: t}
		s.pendEnd = int64(math.MaxInt64)
		for i := range s.families {
			w := s.families[i].width
			s.pendEnd = min(s.pendEnd, (t/w+1)*w)
		}
		return
	}
	p.g, p.lastAt = g, t
	p.c.staged += c.staged
	p.c.landed += c.landed
	p.c.rejected += c.rejected
	p.c.completed += c.completed
	p.c.migrated += c.migrated
	p.c.hoLanded += c.hoLanded
	p.c.hoFailed += c.hoFailed
}

// flush records the pending record in every family.
func (s *seriesRecorder) flush() {
	if !s.pend.set {
		return
	}
	for i := range s.families {
		s.families[i].record(s.pend.lastAt, s.pend.g, s.pend.c)
	}
	s.pend.set = false
}

// build produces the report's time series for a run of the given duration. ttftAt and ttft are
// the first-token instants (non-decreasing) and their TTFTs.
func (s *seriesRecorder) build(duration int64, ttftAt, ttft []int64) Timeseries {
	s.flush()
	best := -1
	for i := range s.families {
		f := &s.families[i]
		for duration/f.width >= maxBuckets {
			f.coarsen()
		}
		if best < 0 || f.width < s.families[best].width {
			best = i
		}
	}
	f := &s.families[best]
	n := int(duration/f.width) + 1
	ts := Timeseries{BucketMS: nsToMS(f.width), Buckets: make([]Bucket, n)}
	g := s.initial
	k := 0
	var vals []int64
	for i := 0; i < n; i++ {
		var c instantCounters
		if i < len(f.buckets) {
			b := f.buckets[i]
			if b.set {
				g = b.g
			}
			c = b.c
		}
		out := &ts.Buckets[i]
		*out = Bucket{TMS: nsToMS(int64(i) * f.width), Active: g.active, Draining: g.draining,
			Waiting: g.waiting, Running: g.running, PullsStaged: c.staged, PullsLanded: c.landed,
			PullsRejected: c.rejected, Completed: c.completed, Starting: g.starting, Migrated: c.migrated}
		if s.pd {
			out.PoolColumns = &PoolColumns{PrefillActive: g.pd[0], PrefillDraining: g.pd[1], PrefillStarting: g.pd[2],
				DecodeActive: g.pd[3], DecodeDraining: g.pd[4], DecodeStarting: g.pd[5],
				HandoffsLanded: c.hoLanded, HandoffsFailed: c.hoFailed}
		}
		end := int64(i+1) * f.width
		vals = vals[:0]
		for k < len(ttftAt) && ttftAt[k] < end {
			vals = append(vals, ttft[k])
			k++
		}
		if len(vals) > 0 {
			k := nearestRank(50, len(vals))
			selectRank(vals, k) // vals[k] as sorting would put it (results.go), without the sort
			v := nsToMS(vals[k])
			out.TTFTP50MS = &v
		}
	}
	return ts
}

// nearestRank is the 0-based index of the p-th percentile by nearest rank: ceil(p/100 × n) − 1.
func nearestRank(p, n int) int {
	r := (p*n + 99) / 100
	if r < 1 {
		r = 1
	}
	return r - 1
}
