package calibrate

import (
	"fmt"
	"math"

	"github.com/scalein-planner/scalein/sim"
	"gonum.org/v1/gonum/mat"
)

// Result is the calibration document the CLI prints and the API answers.
type Result struct {
	Timing   sim.Timing `json:"timing"`
	Passes   int        `json:"passes"`
	Classes  Classes    `json:"classes"`
	Warnings []string   `json:"warnings"`
}

// Classes split the passes by what they do: prefill only (no decoding request), decode only
// (no prefill token), and mixed.
type Classes struct {
	Prefill ClassFit `json:"prefill"`
	Decode  ClassFit `json:"decode"`
	Mixed   ClassFit `json:"mixed"`
}

// ClassFit is how well the fitted model predicts one class: R² (1 − residual / total sum of
// squares about the class mean) and the mean absolute percentage error, in percent. Both are
// null when the class has no pass (R² also when all its passes last the same).
type ClassFit struct {
	N    int      `json:"n"`
	R2   *float64 `json:"r2"`
	MAPE *float64 `json:"mape"`
}

// Pass classes.
const (
	ClassPrefill = "prefill"
	ClassDecode  = "decode"
	ClassMixed   = "mixed"
)

// Class names the class of a pass.
func (p Pass) Class() string {
	switch {
	case p.DecodeRequests == 0:
		return ClassPrefill
	case p.PrefillTokens == 0:
		return ClassDecode
	default:
		return ClassMixed
	}
}

// MinPasses is the fewest passes for which the fit does not warn.
const MinPasses = 50

var coefNames = [5]string{"prefill_ms", "prefill_ms_per_1k_tokens", "decode_ms", "decode_ms_per_seq", "decode_ms_per_1k_kv_tokens"}

// features are the regressors of one pass: [P > 0, P/1000, D > 0, D, K/1000].
func features(p Pass) [5]float64 {
	var x [5]float64
	if p.PrefillTokens > 0 {
		x[0] = 1
	}
	x[1] = float64(p.PrefillTokens) / 1000
	if p.DecodeRequests > 0 {
		x[2] = 1
	}
	x[3] = float64(p.DecodeRequests)
	x[4] = float64(p.DecodeKVTokens) / 1000
	return x
}

// Predict is the model's duration of a pass, in milliseconds: the simulator's own
// sim.Timing.PassMS (docs/model.md#precise-rules "Arithmetic") before rounding to whole nanoseconds.
func Predict(t sim.Timing, p Pass) float64 {
	return t.PassMS(int(p.PrefillTokens), int(p.DecodeRequests), int(p.DecodeKVTokens))
}

// Fit fits the five coefficients by non-negative least squares on y = 1000 × wall_time (ms)
// and x = [P > 0, P/1000, D > 0, D, K/1000]. Columns are scaled to unit norm; the data are
// reduced, one row at a time by Givens rotations, to the 6 × 6 triangular factor of [X y], so
// memory does not grow with the number of passes and the solver works on a 5 × 5 problem with
// the same minimiser.
func Fit(r *Read) Result {
	passes := r.Passes
	var norm [5]float64
	for _, p := range passes {
		x := features(p)
		for j, v := range x {
			norm[j] += v * v
		}
	}
	for j := range norm {
		norm[j] = math.Sqrt(norm[j])
	}
	var R [6][6]float64 // upper triangular factor of [X/norm | y]
	for _, p := range passes {
		x := features(p)
		var row [6]float64
		for j, v := range x {
			if norm[j] > 0 {
				row[j] = v / norm[j]
			}
		}
		row[5] = 1000 * p.WallTimeS
		givensAdd(&R, row)
	}
	A := mat.NewDense(5, 5, nil)
	b := make([]float64, 5)
	for i := range 5 {
		for j := range 5 {
			A.Set(i, j, R[i][j])
		}
		b[i] = R[i][5]
	}
	coef := nnls(A, b)
	for j := range coef {
		if norm[j] > 0 {
			coef[j] /= norm[j]
		} else {
			coef[j] = 0
		}
	}
	res := Result{
		Timing: sim.Timing{PrefillMS: coef[0], PrefillMSPer1kTokens: coef[1], DecodeMS: coef[2],
			DecodeMSPerSeq: coef[3], DecodeMSPer1kKVTokens: coef[4]},
		Passes:   len(passes),
		Warnings: []string{},
	}
	res.Classes = classFits(res.Timing, passes)
	res.Warnings = warnings(r, res, norm)
	return res
}

// givensAdd folds one row into the upper triangular R by Givens rotations.
func givensAdd(R *[6][6]float64, row [6]float64) {
	for i := range 6 {
		if row[i] == 0 {
			continue
		}
		a, b := R[i][i], row[i]
		h := math.Hypot(a, b)
		c, s := a/h, b/h
		for j := i; j < 6; j++ {
			rij, xj := R[i][j], row[j]
			R[i][j] = c*rij + s*xj
			row[j] = -s*rij + c*xj
		}
	}
}

func classFits(t sim.Timing, passes []Pass) Classes {
	type acc struct {
		n                    int
		sum, sumSq, ssr, ape float64
	}
	var a [3]acc
	idx := map[string]int{ClassPrefill: 0, ClassDecode: 1, ClassMixed: 2}
	for _, p := range passes {
		c := &a[idx[p.Class()]]
		y := 1000 * p.WallTimeS
		e := Predict(t, p) - y
		c.n++
		c.sum += y
		c.sumSq += y * y
		c.ssr += e * e
		c.ape += math.Abs(e) / y
	}
	out := [3]ClassFit{}
	for i, c := range a {
		out[i].N = c.n
		if c.n == 0 {
			continue
		}
		mape := 100 * c.ape / float64(c.n)
		out[i].MAPE = &mape
		mean := c.sum / float64(c.n)
		sst := c.sumSq - float64(c.n)*mean*mean
		if sst > 1e-12*c.sumSq {
			r2 := 1 - c.ssr/sst
			out[i].R2 = &r2
		}
	}
	return Classes{Prefill: out[0], Decode: out[1], Mixed: out[2]}
}

func warnings(r *Read, res Result, norm [5]float64) []string {
	w := []string{}
	c := res.Classes
	if res.Passes < MinPasses {
		w = append(w, fmt.Sprintf("only %d passes: a fit of five coefficients wants at least %d, with prefill-only, decode-only and mixed passes at several sizes", res.Passes, MinPasses))
	}
	if c.Prefill.N == 0 {
		w = append(w, "no prefill-only pass (every pass that prefills also decodes): prefill_ms and decode_ms cannot be told apart, only their sum in mixed passes is measured")
	}
	if c.Decode.N == 0 {
		w = append(w, "no decode-only pass (every pass that decodes also prefills): prefill_ms and decode_ms cannot be told apart, only their sum in mixed passes is measured")
	}
	coef := [5]float64{res.Timing.PrefillMS, res.Timing.PrefillMSPer1kTokens, res.Timing.DecodeMS, res.Timing.DecodeMSPerSeq, res.Timing.DecodeMSPer1kKVTokens}
	for j, v := range coef {
		switch {
		case norm[j] == 0:
			w = append(w, fmt.Sprintf("%s is 0: no pass has the quantity it multiplies, so the data say nothing about it", coefNames[j]))
		case v == 0:
			w = append(w, fmt.Sprintf("%s is pinned at 0 by the non-negativity constraint: the data give it no positive share (an unconstrained fit would make it zero or negative), and the other coefficients absorb what it would explain", coefNames[j]))
		}
	}
	if r.Workers > 1 {
		w = append(w, fmt.Sprintf("the passes come from %d workers (worker_id, dp_rank); fit one worker with -worker if they differ", r.Workers))
	}
	if r.Empty > 0 {
		w = append(w, fmt.Sprintf("%d passes with wall_time > 0 but no scheduled prefill or decode were dropped", r.Empty))
	}
	return w
}
