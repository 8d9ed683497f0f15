package form

import (
	"cmp"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/scalein-planner/scalein/sim"
)

// maxScheduleRows bounds the schedule a form keeps: the most actions a scenario may have. A post
// with more non-empty rows keeps the first ones and reports the rest as an error, so a huge post
// neither renders a huge page nor loses rows without a word.
const maxScheduleRows = sim.MaxScaleInActions

// rowKey matches a schedule field's name. The index may have any number of digits: an index
// too long for an int still sorts after the others instead of being ignored.
var rowKey = regexp.MustCompile(`^scale_in\[(\d+)\]\.([a-z_]+)$`)

// FromValues reads a posted form. Schedule rows are taken in index order, whatever the
// numbering (app.js renumbers, but a hand-made post may skip numbers).
func FromValues(v url.Values) *Form {
	f := &Form{values: map[string]string{}}
	rows := map[string]map[string]string{} // by index, as its digits
	for key, vals := range v {
		if len(vals) == 0 {
			continue
		}
		val := vals[0]
		if policyKey.MatchString(key) {
			continue // read by readPolicies
		}
		if m := rowKey.FindStringSubmatch(key); m != nil {
			i := strings.TrimLeft(m[1], "0")
			if rows[i] == nil {
				rows[i] = map[string]string{}
			}
			rows[i][m[2]] = val
			continue
		}
		f.values[key] = val
	}
	if n, err := strconv.Atoi(v.Get("scale_in_rows")); err == nil {
		f.shown = min(max(n, 0), maxScheduleRows)
	}
	delete(f.values, "scale_in_rows")
	f.readPolicies(v)
	for _, dir := range directions {
		delete(f.values, policyRowsKey(dir))
	}
	delete(f.values, "action")
	delete(f.values, "kind")
	idx := make([]string, 0, len(rows))
	for i := range rows {
		idx = append(idx, i)
	}
	// Digit strings without leading zeros compare as numbers by length, then by text.
	slices.SortFunc(idx, func(a, b string) int {
		return cmp.Or(cmp.Compare(len(a), len(b)), strings.Compare(a, b))
	})
	for _, i := range idx {
		row := rows[i]
		if len(f.rows) >= maxScheduleRows {
			if !rowIsEmpty(row) {
				f.rowsDropped++
			}
			continue
		}
		f.rows = append(f.rows, row)
	}
	return f
}
