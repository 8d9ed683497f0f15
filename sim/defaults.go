package sim

// defaultDocument is the smallest scenario Parse accepts: a workload type and nothing else.
const defaultDocument = `{"workload": {"type": "sessions"}}`

// DefaultScenario is the scenario Parse makes of a document that names only a sessions workload:
// every default of the fleet, its timing, KVCR, the router, the synthetic sessions and the report
// options, and no scale-in. It is built by Parse itself, so it cannot disagree with it; a form
// or a tool that shows defaults takes them from here.
func DefaultScenario() *Scenario {
	s, err := Parse([]byte(defaultDocument), ParseEnv{})
	if err != nil {
		// Only a change that breaks Parse's own defaults gets here, and TestDefaultScenario
		// fails on it first.
		panic("sim: the default scenario does not parse: " + err.Error())
	}
	return s
}

// DefaultTrace holds the options Parse fills in for a trace workload that gives none (block
// size, speedup, offset, no limit). It names no trace: a trace workload must name one.
func DefaultTrace() TraceSpec {
	return *decodeTraceSpec(&fieldErrors{}, nil)
}
