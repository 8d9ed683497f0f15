package web

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

// DefaultGPUHourPrice is the price of one GPU-hour the pages use unless the server's
// -gpu-hour-price or a page's ?price= says otherwise: a round figure of the order of an
// on-demand data-centre GPU-hour, in whatever currency you think in. Set your own.
const DefaultGPUHourPrice = 2.5

// MaxGPUHourPrice bounds the price a flag or URL may give.
const MaxGPUHourPrice = 1e6

// msPerDay turns a run's cost into the cost of a day of the same load.
const msPerDay = 86_400_000

// pagePrice is the price per GPU-hour a page shows: ?price= when it is a valid number, else the
// server's. field is what the price input shows; problem explains a bad ?price=.
func (s *Server) pagePrice(r *http.Request) (price float64, field, problem string) {
	price = s.cfg.GPUHourPrice
	raw := strings.TrimSpace(r.URL.Query().Get("price"))
	if raw == "" {
		return price, strconv.FormatFloat(price, 'f', -1, 64), ""
	}
	v, ok := validPrice(raw)
	if !ok && raw == invalidPagePrice {
		// A cached page's normal query (normalPageQuery): one page for every invalid spelling.
		return price, "", "price: give a number above 0 and at most 1e6 per GPU-hour; the server's " + strconv.FormatFloat(price, 'f', -1, 64) + " is used"
	}
	if !ok {
		return price, raw, "price: give a number above 0 and at most 1e6 per GPU-hour (got " + strconv.Quote(raw) + "); the server's " + strconv.FormatFloat(price, 'f', -1, 64) + " is used"
	}
	return v, raw, ""
}

// priceSuffix is "&price=…" when the page's URL sets a valid price, so links keep it: the
// shortest decimal of the price, so that every spelling of one price links (and is cached) alike.
func priceSuffix(r *http.Request) string {
	if v, ok := validPrice(strings.TrimSpace(r.URL.Query().Get("price"))); ok {
		return "&price=" + url.QueryEscape(strconv.FormatFloat(v, 'g', -1, 64))
	}
	return ""
}

// perDay scales a run's amount to a day of the same load: the run's duration stands for the
// load it models.
func perDay(amount, durationMS float64) (float64, bool) {
	if !(durationMS > 0) {
		return 0, false
	}
	return amount * msPerDay / durationMS, true
}
