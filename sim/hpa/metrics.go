package hpa

import (
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/prometheus/prometheus/promql/parser"

	"github.com/scalein-planner/scalein/sim"
)

// metricNames maps the exact names of vLLM's series (and the spellings a Prometheus Adapter
// gives them, ':' written '_') to the model's metrics. Nothing is matched by substring: a
// queue length is not requests in flight.
var metricNames = map[string]string{
	"vllm:num_requests_waiting":             sim.MetricRequestsWaiting,
	"vllm_num_requests_waiting":             sim.MetricRequestsWaiting,
	"vllm:num_requests_running":             sim.MetricRequestsRunning,
	"vllm_num_requests_running":             sim.MetricRequestsRunning,
	"vllm:gpu_cache_usage_perc":             sim.MetricKVUsage,
	"vllm_gpu_cache_usage_perc":             sim.MetricKVUsage,
	"vllm:kv_cache_usage_perc":              sim.MetricKVUsage,
	"vllm_kv_cache_usage_perc":              sim.MetricKVUsage,
	MetricRequests:                          sim.MetricRequestsPerWorker,
	"vllm:num_requests_running_and_waiting": sim.MetricRequestsPerWorker,
	"vllm_num_requests_waiting_and_running": sim.MetricRequestsPerWorker,
	"vllm:num_requests_waiting_and_running": sim.MetricRequestsPerWorker,
}

// exportNames is the name Export gives each metric when no import named it.
var exportNames = map[string]string{
	sim.MetricRequestsPerWorker: MetricRequests,
	sim.MetricRequestsWaiting:   "vllm_num_requests_waiting",
	sim.MetricRequestsRunning:   "vllm_num_requests_running",
	sim.MetricKVUsage:           MetricKVUsage,
	sim.MetricOfferedRate:       "offered_request_rate",
}

// knownNames lists the names the model knows, for messages.
func knownNames() string {
	names := make([]string, 0, len(metricNames))
	for n := range metricNames {
		names = append(names, n)
	}
	slices.Sort(names)
	return strings.Join(names, ", ") + ", or sum(running + waiting) in a query"
}

// metricOfName is the model's metric for an exact metric name; a {label=…} selector written
// into the name (as some adapters' rules do) is allowed and ignored, and so is GKE's
// prometheus.googleapis.com|…|gauge wrapping.
func metricOfName(name string) (string, error) {
	bare := name
	if i := strings.IndexByte(bare, '{'); i >= 0 && strings.HasSuffix(bare, "}") {
		bare = bare[:i]
	}
	// GKE's Custom Metrics Stackdriver Adapter names a Managed Prometheus series
	// prometheus.googleapis.com|NAME|KIND.
	if rest, ok := strings.CutPrefix(bare, "prometheus.googleapis.com|"); ok {
		if i := strings.LastIndexByte(rest, '|'); i > 0 {
			bare = rest[:i]
		}
	}
	if m, ok := metricNames[strings.TrimSpace(bare)]; ok {
		return m, nil
	}
	return "", fmt.Errorf("%q is not a metric the model knows; it knows %s (CPU, GPU utilisation or latency cannot be simulated)", name, knownNames())
}

// query is what a PromQL query says: the model's metric, the outer aggregation and notes.
type query struct {
	metric    string
	aggregate string
	notes     []string
}

// readQuery parses a KEDA Prometheus trigger's query with Prometheus' own parser: an outer
// sum, avg or max (optionally "by (…)", and "or vector(0)" for an empty result) of one vLLM
// series or of running + waiting.
func readQuery(q string) (query, error) {
	if err := checkQuery(q); err != nil {
		return query{}, err
	}
	expr, err := parser.NewParser(parser.Options{}).ParseExpr(q)
	if err != nil {
		return query{}, fmt.Errorf("the query is not PromQL: %v", err)
	}
	var out query
	expr = unwrap(expr)
	if b, ok := expr.(*parser.BinaryExpr); ok && b.Op == parser.LOR && isVectorZero(unwrap(b.RHS)) {
		expr = unwrap(b.LHS)
	}
	switch e := expr.(type) {
	case *parser.AggregateExpr:
		switch e.Op {
		case parser.SUM:
			out.aggregate = sim.AggregateSum
		case parser.AVG:
			out.aggregate = sim.AggregateAvg
		case parser.MAX:
			out.aggregate = sim.AggregateMax
		default:
			return query{}, fmt.Errorf("the outer aggregation is %s: the model aggregates the workers' values with sum, avg or max", e.Op)
		}
		if len(e.Grouping) > 0 || e.Without {
			out.notes = append(out.notes, fmt.Sprintf("%s by/without (%s) is read as one %s over all workers: KEDA refuses a query that returns more than one series", e.Op, strings.Join(e.Grouping, ", "), e.Op))
		}
		out.metric, err = innerMetric(unwrap(e.Expr))
		return out, err
	case *parser.BinaryExpr:
		// sum(running) + sum(waiting)
		if m, ok := runningPlusWaiting(e, true); ok {
			out.metric, out.aggregate = m, sim.AggregateSum
			return out, nil
		}
	case *parser.VectorSelector:
		m, err := innerMetric(e)
		if err != nil {
			return query{}, err
		}
		out.metric, out.aggregate = m, sim.AggregateSum
		out.notes = append(out.notes, fmt.Sprintf("the query is the bare series %s, one per pod: KEDA refuses it once there are several pods; read as sum(%s), write it so", e.Name, e.Name))
		return out, nil
	}
	return query{}, fmt.Errorf("the query %s is not sum, avg or max of a vLLM series the model knows (%s)", clipQuery(q), knownNames())
}

// innerMetric is the model's metric for what an aggregation aggregates.
func innerMetric(e parser.Expr) (string, error) {
	switch x := e.(type) {
	case *parser.VectorSelector:
		return metricOfName(x.Name)
	case *parser.BinaryExpr:
		if m, ok := runningPlusWaiting(x, false); ok {
			return m, nil
		}
	}
	return "", fmt.Errorf("%s is not a vLLM series the model knows (a rate, a quantile or a ratio cannot be simulated); it knows %s", e, knownNames())
}

// runningPlusWaiting reports whether e is running + waiting (each side an aggregation when
// aggregated is set).
func runningPlusWaiting(e *parser.BinaryExpr, aggregated bool) (string, bool) {
	if e.Op != parser.ADD {
		return "", false
	}
	side := func(x parser.Expr) string {
		x = unwrap(x)
		if aggregated {
			a, ok := x.(*parser.AggregateExpr)
			if !ok || a.Op != parser.SUM {
				return ""
			}
			x = unwrap(a.Expr)
		}
		v, ok := x.(*parser.VectorSelector)
		if !ok {
			return ""
		}
		m, _ := metricOfName(v.Name)
		return m
	}
	l, r := side(e.LHS), side(e.RHS)
	if (l == sim.MetricRequestsRunning && r == sim.MetricRequestsWaiting) || (l == sim.MetricRequestsWaiting && r == sim.MetricRequestsRunning) {
		return sim.MetricRequestsPerWorker, true
	}
	return "", false
}

func unwrap(e parser.Expr) parser.Expr {
	for {
		p, ok := e.(*parser.ParenExpr)
		if !ok {
			return e
		}
		e = p.Expr
	}
}

func isVectorZero(e parser.Expr) bool {
	c, ok := e.(*parser.Call)
	if !ok || c.Func.Name != "vector" || len(c.Args) != 1 {
		return false
	}
	n, ok := unwrap(c.Args[0]).(*parser.NumberLiteral)
	return ok && n.Val == 0
}

// exportQuery writes the query for a metric and aggregate when none was imported.
func exportQuery(metric, aggregate string) string {
	if aggregate == "" {
		aggregate = sim.AggregateSum
	}
	switch metric {
	case sim.MetricRequestsPerWorker:
		return fmt.Sprintf("%s(vllm:num_requests_running + vllm:num_requests_waiting)", aggregate)
	case sim.MetricRequestsWaiting:
		return aggregate + "(vllm:num_requests_waiting)"
	case sim.MetricRequestsRunning:
		return aggregate + "(vllm:num_requests_running)"
	case sim.MetricOfferedRate:
		// The requests offered per second: a gateway's request counter (or a load forecast).
		return "sum(rate(http_requests_total[1m]))"
	}
	return aggregate + "(vllm:kv_cache_usage_perc)"
}

// Bounds on a query, checked before Prometheus' parser sees it (finding M1 of the 2026-12c
// probe: the parser's cost grows faster than the query, 74 s of a core for 200 KB of nested
// parentheses). A query the model reads is one aggregation of one or two series: well under
// both.
const (
	// MaxQueryBytes is the longest query read.
	MaxQueryBytes = 4 << 10
	// MaxQueryDepth is the deepest nesting read: brackets, and unary signs in a row.
	MaxQueryDepth = 64
	// maxTriggers is the most triggers a ScaledObject may list (each one's query is parsed).
	maxTriggers = 16
)

// checkQuery refuses a query longer than MaxQueryBytes or nested deeper than MaxQueryDepth.
// Brackets inside string literals ("…", '…', `…`) do not count.
func checkQuery(q string) error {
	if len(q) > MaxQueryBytes {
		return fmt.Errorf("the query is %d bytes; at most %d are read (a query the model reads is sum, avg or max of one or two vLLM series); shorten it", len(q), MaxQueryBytes)
	}
	depth, signs := 0, 0
	var quote rune
	escaped := false
	prev := rune(0) // the last character outside strings and spaces
	for _, c := range q {
		if quote != 0 {
			switch {
			case escaped:
				escaped = false
			case c == '\\' && quote != '`':
				escaped = true
			case c == quote:
				quote = 0
			}
			continue
		}
		switch c {
		case ' ', '\t', '\n', '\r':
			continue
		case '"', '\'', '`':
			quote = c
		case '(', '[', '{':
			depth++
			signs = 0
		case ')', ']', '}':
			depth--
			signs = 0
		case '+', '-':
			if prev == 0 || strings.ContainsRune("([{,+-*/%^=<>!", prev) {
				signs++ // a unary sign: one more level of nesting
			} else {
				signs = 0
			}
		default:
			if !strings.ContainsRune("*/%^=<>!", c) {
				signs = 0
			}
		}
		prev = c
		if depth+signs > MaxQueryDepth {
			return fmt.Errorf("the query nests deeper than %d levels (brackets and unary signs); a query the model reads is sum, avg or max of one or two vLLM series; write it flatter", MaxQueryDepth)
		}
	}
	return nil
}

// clipQuery is a query as an error message quotes it: its first 200 bytes.
func clipQuery(q string) string {
	const most = 200
	if len(q) <= most {
		return fmt.Sprintf("%q", q)
	}
	cut := most
	for cut > 0 && !utf8.RuneStart(q[cut]) {
		cut--
	}
	return fmt.Sprintf("%q… (%d bytes)", q[:cut], len(q))
}
