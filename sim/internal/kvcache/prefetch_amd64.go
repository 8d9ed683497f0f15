package kvcache

// prefetch asks the processor to load the cache line at p without waiting for it.
//
//go:noescape
func prefetch(p uintptr)
