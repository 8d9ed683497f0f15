package sim

// MinRateGBps is the smallest transfer rate a scenario may give (kvcr.bandwidth_gbps, and
// fleet.h2d_gbps and fleet.d2h_gbps unless 0 for "instant"): 1e-6 GB/s, a thousand bytes a
// second. Below it one block takes longer than the simulator's virtual time can reach, and the
// arithmetic in nanoseconds would leave int64 (issue 19 M3: 1e-12 GB/s once simulated as free).
const MinRateGBps = 1e-6

// maxTransferNS bounds one transfer's duration in nanoseconds (about 146 years): a transfer
// longer than that saturates here, far past any virtual-time limit, so a slower link always
// ends later (or at the limit), never sooner through an overflow.
const maxTransferNS = maxTimeNS

// transferNS is the duration of moving bytes at rate (bytes per ns, which is GB/s), rounded
// up and saturated at maxTransferNS.
func transferNS(bytes, rate float64) int64 {
	d := bytes / rate // saturate before converting: int64 of a float past 2^63 is garbage
	switch {
	case !(d > 0): // also NaN
		return 0
	case d >= maxTransferNS:
		return maxTransferNS
	}
	return int64(ceilFloat(d))
}

// checkMinRate refuses a rate above 0 and below MinRateGBps (0 and below are the field's own
// range check's to refuse, or mean "instant" for a copy lane: then zero says so).
func checkMinRate(errs *fieldErrors, path string, gbps float64, zero string) {
	if gbps > 0 && gbps < MinRateGBps {
		errs.add(path, "must be %s≥ %s GB/s (got %s): at a slower rate one block takes longer than the simulator's virtual time", zero, fmtNum(MinRateGBps), fmtNum(gbps))
	}
}
