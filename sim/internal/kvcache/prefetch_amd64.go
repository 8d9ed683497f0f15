package kvcache

import "unsafe"

// hasPrefetch says whether prefetch is the processor's prefetch instruction.
const hasPrefetch = true

// prefetch asks the processor to bring p's cache line in, without waiting for it (PREFETCHT0):
// Index.touch's loads, which stall once enough of them miss at once, in a form that does not.
//
//go:noescape
func prefetch(p unsafe.Pointer)
