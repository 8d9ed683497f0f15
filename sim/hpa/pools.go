package hpa

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/scalein-planner/scalein/sim"
)

// Prefill and decode pools (docs/manifests.md#prefill-and-decode-pools): a file that scales a
// prefill and a decode pool with one autoscaler each (llm-d's two ScaledObjects, two HPAs on a
// prefill and a decode Deployment, or autoscalers of a DynamoGraphDeployment's prefill and
// decode services) imports as a scenario with disaggregation and {"prefill": A, "decode": A}.

// RoleLabel is llm-d's label naming the role of a workload (prefill or decode).
const RoleLabel = "llm-d.ai/role"

// DynamoAdapterKind is the object Dynamo puts between an HPA or ScaledObject and one service of
// a DynamoGraphDeployment; Dynamo names it <graph>-<service, lower-case>.
const DynamoAdapterKind = "DynamoGraphDeploymentScalingAdapter"

// Pools is what a file gave each pool: the pool's own import (its autoscaler, Scaler, Origin
// and Workers), or, for a pool no autoscaler scales, only its Workers (Scaler empty, Origin nil).
type Pools struct {
	Prefill *Imported `json:"prefill"`
	Decode  *Imported `json:"decode"`
	// Dynamo is set when the prefill workers are a DynamoGraphDeployment's service that does
	// not run SGLang: Dynamo drains a vLLM prefill worker by sleeping a fixed 30 s (docs/model.md#model-5
	// prefill_drain fixed).
	Dynamo bool `json:"dynamo,omitempty"`
}

// Of returns the pool of a role (sim.RolePrefill or sim.RoleDecode).
func (p *Pools) Of(role string) *Imported {
	if role == sim.RolePrefill {
		return p.Prefill
	}
	return p.Decode
}

var roles = []string{sim.RolePrefill, sim.RoleDecode}

// roleOfLabels is the role a llm-d.ai/role label gives, or "".
func roleOfLabels(l map[string]string) string {
	switch strings.ToLower(strings.TrimSpace(l[RoleLabel])) {
	case sim.RolePrefill:
		return sim.RolePrefill
	case sim.RoleDecode:
		return sim.RoleDecode
	}
	return ""
}

// roleOfName is the role a name says ("vllm-prefill", "VllmDecodeWorker"), or "" when it says
// neither or both.
func roleOfName(n string) string {
	l := strings.ToLower(n)
	p, d := strings.Contains(l, sim.RolePrefill), strings.Contains(l, sim.RoleDecode)
	switch {
	case p && !d:
		return sim.RolePrefill
	case d && !p:
		return sim.RoleDecode
	}
	return ""
}

// roleOfService is a Dynamo service's role: its subComponentType, else its name.
func roleOfService(subComponentType, name string) string {
	switch strings.ToLower(strings.TrimSpace(subComponentType)) {
	case sim.RolePrefill:
		return sim.RolePrefill
	case sim.RoleDecode:
		return sim.RoleDecode
	}
	return roleOfName(name)
}

// scales reports whether an autoscaler whose scaleTargetRef is target scales the workload w (a
// Dynamo service through its scaling adapter).
func scales(target, w WorkloadRef) bool {
	if w.Service == "" {
		return w.Name == target.Name && (target.Kind == "" || w.Kind == target.Kind)
	}
	return target.Kind == DynamoAdapterKind && strings.EqualFold(target.Name, w.Name+"-"+w.Service)
}

// setRoles gives each autoscaler its role: its own llm-d.ai/role label, else its target's
// role (labels, a Dynamo service's subComponentType, names), else its target's name, else its
// own name.
func setRoles(ss []scaler, loads []workload) {
	for i := range ss {
		s := &ss[i]
		target := ""
		for _, w := range loads {
			if w.role != "" && scales(s.target, w.ref) {
				target = w.role
				break
			}
		}
		s.role = cmp.Or(roleOfLabels(s.labels), target, roleOfName(s.target.Name), roleOfName(s.name))
	}
}

// ofRole leaves out the workloads of the other role (all are kept for role "").
func ofRole(loads []workload, role string) []workload {
	if role == "" {
		return loads
	}
	var out []workload
	for _, w := range loads {
		if w.role == "" || w.role == role {
			out = append(out, w)
		}
	}
	return out
}

// isPools reports whether a file scales two pools: autoscalers of both roles, or an autoscaler
// of one role beside workloads of both.
func isPools(ss []scaler, loads []workload) bool {
	has := map[string]bool{}
	for _, s := range ss {
		has["s"+s.role] = true
	}
	for _, w := range loads {
		has["w"+w.role] = true
	}
	sp, sd := has["s"+sim.RolePrefill], has["s"+sim.RoleDecode]
	return (sp && sd) || ((sp || sd) && has["w"+sim.RolePrefill] && has["w"+sim.RoleDecode])
}

// importPools reads one autoscaler per role (the first usable one of that role, as Import does
// for one fleet) and each pool's starting replicas. The pools' problems and filled fields are
// named by pool.
func (im *Imported) importPools(data []byte, ss []scaler, loads []workload, base sim.Autoscaler, opt ImportOptions) (*Imported, error) {
	out := &Imported{Autoscaler: base, Filled: []string{}, Problems: slices.Clone(im.Problems), Pools: &Pools{}}
	for _, s := range ss {
		if s.role == "" {
			out.problem(s.path, "%s %q: not read: it scales neither the prefill nor the decode pool; label it %s: prefill or decode (or name its target …-prefill or …-decode)", s.kind, s.name, RoleLabel)
		}
	}
	var errs []string
	for _, role := range roles {
		b := base
		if r := opt.Prefill; role == sim.RolePrefill && r != nil {
			b = *r
		}
		if r := opt.Decode; role == sim.RoleDecode && r != nil {
			b = *r
		}
		var mine []scaler
		for _, s := range ss {
			if s.role == role {
				mine = append(mine, s)
			}
		}
		pool := &Imported{Autoscaler: b, Filled: []string{}, Problems: []Problem{}}
		var unusable error
		if len(mine) > 0 {
			p, used, err := (&Imported{}).pick(mine, b)
			if err == nil {
				p.finish(used, data, loads, opt)
				pool = p
			}
			unusable = err
		}
		if pool.Scaler == "" {
			for _, w := range loads {
				if w.role == role && w.replicas != nil {
					n := int(*w.replicas)
					pool.Workers, pool.WorkersFrom = &n, w.path+" replicas"
					break
				}
			}
			if unusable != nil {
				errs = append(errs, fmt.Sprintf("the %s pool's autoscaler: %v", role, unusable))
				out.problem(role, "the %s pool's autoscaler cannot be used (%v): the pool keeps its size, without an autoscaler", role, unusable)
			} else {
				out.problem(role, "no autoscaler scales the %s pool: it keeps its size (Dynamo's Planner is not simulated; add an HPA or ScaledObject for it to simulate one)", role)
			}
		}
		for _, p := range pool.Problems {
			out.Problems = append(out.Problems, Problem{Path: role + " pool: " + p.Path, Message: p.Message})
		}
		for _, f := range pool.Filled {
			out.fill(poolField(role, f))
		}
		switch {
		case pool.MigrationLimit == nil:
		case out.MigrationLimit == nil:
			out.MigrationLimit = pool.MigrationLimit
		case *out.MigrationLimit != *pool.MigrationLimit:
			out.problem(role+" pool: "+MigrationLimitEnv, "%d, but the prefill pool's workloads set %d; the first is used", *pool.MigrationLimit, *out.MigrationLimit)
		}
		if role == sim.RolePrefill {
			out.Pools.Prefill = pool
		} else {
			out.Pools.Decode = pool
		}
	}
	for _, w := range loads {
		if w.role == sim.RolePrefill && w.ref.Service != "" && !w.sglang {
			out.Pools.Dynamo = true
		}
	}
	if out.Pools.Prefill.Scaler == "" && out.Pools.Decode.Scaler == "" {
		return nil, fmt.Errorf("no autoscaler in the manifest the model can use: %s", strings.Join(errs, "; "))
	}
	return out, nil
}

// poolField is the scenario field of a pool for a field an import of one fleet fills.
func poolField(role, f string) string {
	if rest, ok := strings.CutPrefix(f, "autoscaler."); ok {
		return "autoscaler." + role + "." + rest
	}
	if f == "fleet.workers" {
		return "disaggregation." + role + ".workers"
	}
	return f
}

// intoPools writes a P/D import into a scenario document: disaggregation with each pool's
// workers (from the file, else the scenario's pool, else the autoscaler's minimum), the
// autoscaler per pool, fleet.workers and kvcr.enabled removed (model 5 refuses them).
func (im *Imported) intoPools(doc map[string]any) {
	if fleet, _ := doc["fleet"].(map[string]any); fleet != nil {
		if _, ok := fleet["workers"]; ok {
			delete(fleet, "workers")
			im.problem("fleet.workers", "removed: with prefill and decode pools their sizes are disaggregation.prefill.workers and disaggregation.decode.workers")
		}
	}
	if kv, _ := doc["kvcr"].(map[string]any); kv != nil && kv["enabled"] == true {
		kv["enabled"] = false
		im.problem("kvcr.enabled", "set to false: peer prefix pulls between prefill workers are not part of the prefill/decode model")
	}
	d, _ := doc["disaggregation"].(map[string]any)
	if d == nil {
		d = map[string]any{}
	}
	auto := map[string]any{}
	for _, role := range roles {
		p := im.Pools.Of(role)
		pm, _ := d[role].(map[string]any)
		if pm == nil {
			pm = map[string]any{}
		}
		path := "disaggregation." + role + ".workers"
		scaled := p.Scaler != ""
		a := p.Autoscaler
		switch cur, had := pm["workers"]; {
		case p.Workers != nil:
			n := *p.Workers
			im.fill(path)
			if scaled && (n < a.MinWorkers || n > a.MaxWorkers) {
				im.problem(path, "%d from %s lies outside the %s autoscaler's bounds [%d, %d]: its first decision brings it to %d", n, p.WorkersFrom, role, a.MinWorkers, a.MaxWorkers, min(max(n, a.MinWorkers), a.MaxWorkers))
			}
			if n < 1 {
				m := 1
				if scaled {
					m = max(1, a.MinWorkers)
				}
				im.problem(path, "%d from %s: a pool starts with at least 1 worker; the night starts at %d", n, p.WorkersFrom, m)
				n = m
			}
			pm["workers"] = n
		case had:
			im.problem(path, "the manifest does not say how many %s replicas run: the night starts at the scenario's %v; set %s to the replicas you run", role, cur, path)
		default:
			n := 1
			if scaled {
				n = max(1, a.MinWorkers)
			}
			pm["workers"] = n
			im.problem(path, "the manifest does not say how many %s replicas run: the night starts at %d; set %s to the replicas you run", role, n, path)
		}
		d[role] = pm
		if scaled {
			auto[role] = a
		}
	}
	if im.Pools.Dynamo {
		pd, _ := d["prefill_drain"].(map[string]any)
		switch {
		case pd == nil:
			d["prefill_drain"] = map[string]any{"mode": sim.DrainFixed, "fixed_ms": sim.DefaultPrefillDrainFixedMS}
			im.fill("disaggregation.prefill_drain")
			im.problem("disaggregation.prefill_drain", "set to fixed 30 s: Dynamo drains a vLLM prefill worker by sleeping a fixed 30 s (handoffs not landed by then fail); with SGLang workers, which free nothing until the pod restarts, choose wait")
		case pd["mode"] != sim.DrainFixed:
			im.problem("disaggregation.prefill_drain", "the scenario's mode %v is kept; Dynamo drains a vLLM prefill worker by sleeping a fixed 30 s (mode fixed, fixed_ms 30000)", pd["mode"])
		}
	}
	doc["disaggregation"] = d
	doc["autoscaler"] = auto
}

// PoolSettings are what a P/D export writes: each pool's settings (nil: the pool has no
// autoscaler in the scenario and its object is left as it is).
type PoolSettings struct {
	Prefill, Decode *Settings
}

// ExportPoolsOnto writes each pool's autoscaler into its own object of the user's file (each
// Settings' Origin, imported with the pools; both carry the same Manifest): the prefill pool's
// edits first, then the decode pool's onto that result, each changing only its own object's
// differing fields and its own workload's grace (the migration limit is shared). One header
// names every change, by pool.
func ExportPoolsOnto(ps PoolSettings) (*Exported, error) {
	var data []byte
	var changed, notes []string
	source, json := "", false
	for _, role := range roles {
		s := ps.Prefill
		if role == sim.RoleDecode {
			s = ps.Decode
		}
		if s == nil {
			continue
		}
		if s.Origin == nil || s.Origin.Manifest == "" {
			return nil, fmt.Errorf("hpa: the %s pool's autoscaler has no object in the file to write into", role)
		}
		one := *s
		o := *s.Origin
		if data != nil {
			o.Manifest = string(data)
		}
		one.Origin = &o
		json = isJSON([]byte(o.Manifest))
		ex, err := ExportOnto(one)
		if err != nil {
			return nil, fmt.Errorf("the %s pool: %w", role, err)
		}
		data = ex.Data
		source = cmp.Or(source, s.Source)
		for _, c := range ex.Changed {
			changed = append(changed, role+": "+c)
		}
		for _, n := range ex.Notes {
			if !slices.Contains(notes, n) {
				notes = append(notes, n)
			}
		}
	}
	if data == nil {
		return nil, fmt.Errorf("hpa: the scenario has no autoscaler for either pool")
	}
	if !json {
		data = withHeader(data, header(source, changed))
	}
	return &Exported{Data: data, Changed: changed, Notes: notes}, nil
}
