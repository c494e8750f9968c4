//go:build !linux

package main

// prepareHeap does nothing here (see heap_linux.go).
func prepareHeap(n int) {}
