package sim

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestModel5WorkedExamples checks the figures E11–E13 of docs/model.md#model-5
// state, beside the conformance checks of the same files.
func TestModel5WorkedExamples(t *testing.T) {
	type fig struct {
		path string
		want any
	}
	cases := []struct {
		name, file string
		figs       []fig
	}{
		{"E11 one request through P and D", "pd_one_request.json", []fig{
			{"requests[id=r].handoff_wait_ms", 0.0}, {"requests[id=r].transfer_ms", 5.0},
			{"requests[id=r].first_token_ms", 8.0}, {"requests[id=r].done_ms", 10.0},
			{"workers[0].removed_at_ms", 7.0}, {"workers[0].drain_ms", 6.0}, {"workers[0].pin_wait_ms", 5.0},
			{"workers[0].held_block_seconds", 0.02}, {"workers[0].held_block_seconds_draining", 0.02},
			{"workers[1].held_block_seconds", 0.0}, {"workers[2].held_block_seconds", nil},
			{"summary.disaggregation.handoffs", 1.0}, {"summary.disaggregation.landed", 1.0},
			{"summary.disaggregation.transfer_ms.max", 5.0}, {"summary.worker_seconds", 0.027},
		}},
		{"E12 wait", "pd_drain_wait.json", []fig{
			{"workers[0].removed_at_ms", 7.0}, {"workers[0].drain_ms", 6.0},
			{"workers[0].held_block_seconds", 0.02}, {"requests[id=r].first_token_ms", 8.0}, {"requests[id=r].done_ms", 9.0},
		}},
		{"E12 fixed, fail", "pd_drain_fixed.json", []fig{
			{"workers[0].removed_at_ms", 5.0}, {"workers[0].drain_ms", 4.0}, {"workers[0].pin_wait_ms", 3.0},
			{"workers[0].held_block_seconds", 0.012}, {"workers[0].held_block_seconds_draining", 0.012},
			{"summary.disaggregation.failed.source_removed", 1.0},
			{"requests[id=r].status", "failed"}, {"requests[id=r].done_ms", 5.0}, {"summary.requests.failed", 1.0},
		}},
		{"E12 fixed, recompute", "pd_drain_fixed_recompute.json", []fig{
			{"requests[id=r].first_token_ms", 8.0}, {"requests[id=r].done_ms", 9.0}, {"summary.disaggregation.recomputed", 1.0},
		}},
		{"E12 skip, fail", "pd_drain_skip.json", []fig{
			{"workers[0].removed_at_ms", 2.0}, {"workers[0].drain_ms", 1.0}, {"workers[0].pin_wait_ms", 0.0},
			{"workers[0].held_block_seconds", 0.0}, {"summary.disaggregation.failed.source_skipped", 1.0},
			{"requests[id=r].status", "failed"}, {"requests[id=r].done_ms", 2.0},
		}},
		{"E12 skip, recompute", "pd_drain_skip_recompute.json", []fig{
			{"requests[id=r].first_token_ms", 5.0}, {"requests[id=r].done_ms", 6.0},
		}},
		{"E12 grace forced", "pd_drain_grace_forced.json", []fig{
			{"workers[0].forced", true}, {"workers[0].drain_ms", 3.0}, {"workers[0].held_block_seconds", 0.008},
			{"summary.disaggregation.failed.forced", 1.0},
		}},
		{"E13 the decode pool is too small", "pd_decode_queue.json", []fig{
			{"requests[id=r0].transfer_ms", 3.0}, {"requests[id=r1].transfer_ms", 3.0},
			{"requests[id=r0].done_ms", 10.0}, {"requests[id=r1].done_ms", 12.0},
			{"workers[1].drain_ms", 4.0}, {"workers[1].pin_wait_ms", 3.0},
			{"workers[0].held_block_seconds", 0.006}, {"workers[1].held_block_seconds", 0.006},
			{"workers[0].held_block_seconds_draining", 0.0}, {"workers[1].held_block_seconds_draining", 0.006},
			{"summary.disaggregation.held_block_seconds", 0.012}, {"summary.disaggregation.held_block_seconds_draining", 0.006},
		}},
		{"E13 fixed lease, fail", "pd_lease_fail.json", []fig{
			{"summary.disaggregation.failed.lease_expired", 1.0}, {"workers[1].removed_at_ms", 7.0},
			{"workers[1].drain_ms", 6.0}, {"workers[1].pin_wait_ms", 5.0}, {"workers[1].held_block_seconds", 0.01},
			{"requests[id=r1].status", "failed"}, {"requests[id=r1].done_ms", 7.0}, {"requests[id=r1].handoff_wait_ms", 5.0},
			{"summary.duration_ms", 10.0},
		}},
		{"E13 fixed lease, recompute", "pd_lease_recompute.json", []fig{
			{"requests[id=r1].first_token_ms", 13.0}, {"requests[id=r1].done_ms", 14.0},
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, tree := runFile(t, examplesPath(t, c.file))
			for _, f := range c.figs {
				assert.Equal(t, f.want, lookup(t, tree, f.path), f.path)
			}
		})
	}
}
