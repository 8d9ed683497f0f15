//go:build !linux

package kvcache

const hugePages = false

func adviseHuge([]byte) {}
