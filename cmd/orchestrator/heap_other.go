//go:build !linux || nohugepages

package main

// hugePages reports whether prepareHeap marks memory for huge pages.
const hugePages = false

// prepareHeap does nothing here (see heap_linux.go).
func prepareHeap(n int) {}
