package web

import (
	"fmt"
	"net/http"
	"strconv"
)

// maxPerPage bounds ?per_page= of the API's lists.
const maxPerPage = 100

// perPageParam reads ?per_page= (default runsPerPage, at most maxPerPage). A "limit" parameter
// is refused with a pointer to per_page rather than ignored.
func perPageParam(r *http.Request) (int, error) {
	q := r.URL.Query()
	if q.Has("limit") {
		return 0, badRequest("unknown query parameter limit: use per_page (1 to " + strconv.Itoa(maxPerPage) + ") and page")
	}
	v := q.Get("per_page")
	if v == "" {
		return runsPerPage, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || n > maxPerPage {
		return 0, badRequest(fmt.Sprintf("per_page must be a whole number from 1 to %d (got %q)", maxPerPage, clip(v)))
	}
	return n, nil
}
