package format

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestClock(t *testing.T) {
	start := time.Date(2026, 12, 3, 0, 15, 0, 0, time.UTC)
	c := ClockAt(start, true)
	assert.Equal(t, "03:22:12", c.At(3*3600_000+7*60_000+12_000))
	assert.Equal(t, "00:15:00", c.At(0.4))
	assert.Equal(t, "00:14:59", c.At(-1000))
	assert.Equal(t, "At (UTC)", c.Column("At"))
	var none Clock
	assert.Equal(t, "77 ms", none.At(77))
	assert.Equal(t, "12.3 s", none.At(12_345))
	assert.Equal(t, "1:02:05", none.At(3_725_000))
	assert.Equal(t, "0:01:16", none.At(75_537.458038))
	assert.Equal(t, Dash, none.AtOpt(nil))
	assert.Equal(t, "At (from the start)", none.Column("At"))
}
