// Package load turns last night's traffic into the scenario's load: the answer of Prometheus'
// GET /api/v1/query_range (a matrix with one series of request rates, such as
// sum(rate(vllm:request_success_total[1m]))) becomes workload.sessions.rate_stages (docs/model.md#rate-stages).
//
// Each sample holds for one step: sample i, taken at t_i, becomes a stage of step ms at its rate,
// in order, so N samples make N stages lasting N × step (the range's last sample counts a whole
// step). The rate is read as requests per second by default and divided by the scenario's turns
// per session, because a session's first turn arrives at the stage's rate and its later turns
// follow it: sessions/s × turns = requests/s on average. A series that already counts sessions
// (first turns) is read as it is (Reading sessions).
//
// Adjacent steps merge into one stage while every rate in it is within Tolerance (a fraction) of
// the stage's mean; the stage keeps the mean, so the expected number of sessions is unchanged.
// More than MaxStages stages after that are resampled: k = ceil(N / MaxStages) consecutive steps
// per stage, each the mean of its steps (the total again unchanged), then merged as above.
//
// What Prometheus writes that is not a load is refused with the sample's index and time: an
// instant (vector) or scalar answer, several series (sum them in the query, or SumSeries), NaN,
// ±Inf and negative rates, unsorted or duplicate timestamps, and gaps (steps with no sample).
package load
