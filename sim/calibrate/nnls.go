package calibrate

import (
	"math"

	"gonum.org/v1/gonum/mat"
)

// nnls solves min ‖A x − b‖ subject to x ≥ 0 with the active-set method of Lawson and Hanson
// ("Solving Least Squares Problems", 1974, ch. 23). A is small here (at most a few columns, and
// the fit passes the triangular factor of its data, not the data), so each step solves its
// passive-set least-squares problem afresh through an SVD, which also copes with columns the
// passive set makes dependent.
func nnls(A *mat.Dense, b []float64) []float64 {
	m, n := A.Dims()
	x := make([]float64, n)
	passive := make([]bool, n)
	excluded := make([]bool, n) // entered and found dependent; retried once the set changes
	w := make([]float64, n)
	bv := mat.NewVecDense(m, append([]float64(nil), b...))

	// tol follows Lawson–Hanson's suggestion: a multiple of machine epsilon, scaled to the data.
	tol := 10 * 2.220446049250313e-16 * mat.Norm(A, 1) * float64(max(m, n))
	gradient := func() {
		r := mat.NewVecDense(m, nil)
		r.MulVec(A, mat.NewVecDense(n, x))
		r.SubVec(bv, r)
		g := mat.NewVecDense(n, nil)
		g.MulVec(A.T(), r)
		for j := range w {
			w[j] = g.AtVec(j)
		}
	}
	for outer := 0; outer < 3*n+3; outer++ {
		gradient()
		t, best := -1, tol
		for j := range n {
			if !passive[j] && !excluded[j] && w[j] > best {
				t, best = j, w[j]
			}
		}
		if t < 0 {
			break
		}
		passive[t] = true
		for inner := 0; inner < 3*n+3; inner++ {
			z := solvePassive(A, b, passive)
			if z[t] <= 0 && inner == 0 {
				// The entering column does not help once solved with the others (it is
				// dependent on them): leave it out, or the method would cycle.
				passive[t] = false
				excluded[t] = true
				break
			}
			feasible := true
			for j := range n {
				if passive[j] && z[j] <= 0 {
					feasible = false
				}
			}
			if feasible {
				copy(x, z)
				clear(excluded)
				break
			}
			alpha := math.Inf(1)
			for j := range n {
				if passive[j] && z[j] <= 0 {
					if a := x[j] / (x[j] - z[j]); a < alpha {
						alpha = a
					}
				}
			}
			for j := range n {
				x[j] += alpha * (z[j] - x[j])
				if passive[j] && x[j] <= tol {
					passive[j] = false
					x[j] = 0
				}
			}
		}
	}
	for j := range x {
		if !passive[j] || x[j] < 0 {
			x[j] = 0
		}
	}
	return x
}

// solvePassive is the least-squares solution over the passive columns (others 0), the
// minimum-norm one when those columns are dependent.
func solvePassive(A *mat.Dense, b []float64, passive []bool) []float64 {
	m, n := A.Dims()
	var cols []int
	for j := range n {
		if passive[j] {
			cols = append(cols, j)
		}
	}
	z := make([]float64, n)
	if len(cols) == 0 {
		return z
	}
	sub := mat.NewDense(m, len(cols), nil)
	for k, j := range cols {
		for i := range m {
			sub.Set(i, k, A.At(i, j))
		}
	}
	var svd mat.SVD
	if !svd.Factorize(sub, mat.SVDThin) {
		return z
	}
	vals := svd.Values(nil)
	rank := 0
	for _, s := range vals {
		if s > vals[0]*1e-12 {
			rank++
		}
	}
	if rank == 0 {
		return z
	}
	var sol mat.Dense
	svd.SolveTo(&sol, mat.NewDense(m, 1, append([]float64(nil), b...)), rank)
	for k, j := range cols {
		z[j] = sol.At(k, 0)
	}
	return z
}
