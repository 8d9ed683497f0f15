package hpa

import (
	"strings"
	"testing"
)

// BenchmarkReadQueryAtTheBounds parses the costliest query shapes the bounds let through (4 KiB,
// nesting at most 64): what a KEDA import can cost at worst per query.
func BenchmarkReadQueryAtTheBounds(b *testing.B) {
	const w = "vllm:num_requests_waiting"
	for name, q := range map[string]string{
		"plus-chain": strings.Repeat(w+"+", (MaxQueryBytes-len(w))/(len(w)+1)) + w,
		"short-plus": strings.Repeat("W+", MaxQueryBytes/2-1) + "W",
		"mul-minus":  strings.Repeat("W*-", MaxQueryBytes/3-1) + "W",
		"parens-64":  strings.Repeat("(", 63) + "sum(" + w + ")" + strings.Repeat(")", 63),
		"unary-63":   "sum(" + strings.Repeat("-", 62) + w + ")",
		"abs-63":     strings.Repeat("abs(", 63) + w + strings.Repeat(")", 63),
	} {
		if len(q) > MaxQueryBytes {
			b.Fatalf("%s: %d bytes", name, len(q))
		}
		if err := checkQuery(q); err != nil {
			b.Fatalf("%s: %v", name, err)
		}
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				_, _ = readQuery(q)
			}
		})
	}
}
