package whatif

// Shapley3 attributes v(all) − v(none) among three players from the values of all 8 coalitions
// (v[mask], bit i set when player i is in): each player's Shapley value is its marginal effect
// v(S ∪ i) − v(S) averaged over the 3! orders in which the players can join, which weighs a
// coalition S without i by |S|! (2 − |S|)! / 3!: 1/3 for the empty set and for the pair, 1/6
// for each single. The values sum to v(7) − v(0) (efficiency).
func Shapley3(v [8]float64) [3]float64 {
	var out [3]float64
	weight := [3]float64{1.0 / 3, 1.0 / 6, 1.0 / 3} // by |S|
	for i := range 3 {
		bit := 1 << i
		for s := range 8 {
			if s&bit != 0 {
				continue
			}
			size := 0
			for j := range 3 {
				if s&(1<<j) != 0 {
					size++
				}
			}
			out[i] += weight[size] * (v[s|bit] - v[s])
		}
	}
	return out
}
