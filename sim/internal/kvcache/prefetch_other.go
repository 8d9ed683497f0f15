//go:build !amd64

package kvcache

import "unsafe"

// hasPrefetch is false where no prefetch instruction is wired up: Index.touch loads instead.
const hasPrefetch = false

func prefetch(unsafe.Pointer) {}
