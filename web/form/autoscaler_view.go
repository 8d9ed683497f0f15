package form

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/a-h/templ"
	"github.com/scalein-planner/scalein/sim"
	"github.com/scalein-planner/scalein/templates"
	"github.com/scalein-planner/scalein/web/format"
)

// model3View adds the scale-in choice, the autoscaler's fieldset, the day helper and the
// preview of the rate stages to the page model.
func (v *formView) model3View() {
	v.page.ScaleInMode = v.field(scaleInModeField, ScaleInModePath, "", v.form.values[ScaleInModePath])
	// app.js shows the schedule or the autoscaler as this select chooses.
	v.page.ScaleInMode.Attrs = templ.Attributes{"data-scale-in-mode": true}
	v.page.Autoscaler = v.fieldset(autoscalerGroup, "")
	v.behaviorView()
	helper := []struct{ name, label, unit, def, help string }{
		{DayTroughField, "Trough rate", "sessions/s", "1", "Session arrival rate at 04:00."},
		{DayPeakField, "Peak rate", "sessions/s", "10", "Session arrival rate at 16:00."},
		{DayStageMSField, "Stage length", "ms", strconv.Itoa(DayStageMS), "One stage per hour of the day: 3600000 (1 h) is a day in real time. A shorter stage squeezes the day while the autoscaler's windows, intervals and cold starts stay in real seconds."},
		{DayStagesField, "Stages", "stages", "24", "How many stages the day has."},
	}
	for _, h := range helper {
		val := v.form.values[h.name]
		if val == "" {
			val = h.def
		}
		v.page.DayHelper = append(v.page.DayHelper, templates.Field{Name: h.name, Label: h.label, Unit: h.unit,
			Kind: "number", Value: val, Help: h.help})
	}
	v.page.RatePreview = ratePreview(v.form.values[RateStagesPath], v.form.values[SessionsCountPath])
}

// ratePreview draws the rate stages as a step line in a 300 × 60 box, and warns when the
// session count (countText) ends the load before the stages do; nil without stages (or with
// stages that do not read).
func ratePreview(text, countText string) *templates.RatePreview {
	val, msg := convertStages(text)
	stages, _ := val.([]map[string]float64)
	if msg != "" || len(stages) == 0 {
		return nil
	}
	total, peak := 0.0, 0.0
	for _, st := range stages {
		total += st["duration_ms"]
		peak = max(peak, st["rate_per_s"])
	}
	if total <= 0 {
		return nil
	}
	const w, h = 300.0, 60.0
	y := func(r float64) float64 {
		if peak <= 0 {
			return h
		}
		return h - r/peak*(h-4)
	}
	var pts strings.Builder
	t := 0.0
	for _, st := range stages {
		x0, x1 := t/total*w, (t+st["duration_ms"])/total*w
		fmt.Fprintf(&pts, "%.1f,%.1f %.1f,%.1f ", x0, y(st["rate_per_s"]), x1, y(st["rate_per_s"]))
		t += st["duration_ms"]
	}
	rs := make([]sim.RateStage, len(stages))
	for i, st := range stages {
		rs[i] = sim.RateStage{DurationMS: st["duration_ms"], RatePerS: st["rate_per_s"]}
	}
	p := &templates.RatePreview{Points: strings.TrimSpace(pts.String()),
		Caption: fmt.Sprintf("%d stages over %s, peak %s sessions/s, about %s sessions", len(stages), format.Duration(total),
			format.TwoDecimals(peak), format.Sig3(ExpectedSessions(rs)))}
	if count, err := strconv.Atoi(strings.TrimSpace(countText)); err == nil && count > 0 {
		if at, cut := CountEndsAtMS(rs, count); cut {
			p.Warning = fmt.Sprintf("The session count (%s) ends the load at about %s of %s: no session starts after the count is used up. Set Sessions to %s to last the whole load (Fill the rate stages with a day does).",
				format.Number(float64(count)), format.Duration(at), format.Duration(total), format.Number(float64(SessionsForStages(rs))))
		}
	}
	return p
}
