package main

import (
	"runtime"
	"syscall"
	"unsafe"
)

// prepareHeap makes the next n bytes the heap grows by cheaper to use.
// Each page of memory a process touches for the first time costs a page
// fault, and on some virtual machines a fault costs as much as parsing the
// bytes it holds: a command reading a queue of a few MiB spent more time in
// faults than in its own work. So the memory is taken in one piece and
// marked for huge pages, one fault per 2 MiB instead of per 4 KiB, then
// given back to the heap, which reuses those pages for what the command
// allocates next. Nothing is touched here: memory the command does not use
// costs nothing. Where the kernel gives no huge pages, faults are as they
// would have been.
//
// The garbage collector must be off (the heap's free pages are returned to
// the system otherwise) and the memory limit above n.
func prepareHeap(n int) {
	markHuge(n)
	runtime.GC() // frees what markHuge took; its pages stay with the heap
}

// madvHugepage is madvise's MADV_HUGEPAGE on every Linux architecture.
const madvHugepage = 14

//go:noinline
func markHuge(n int) {
	const huge = 2 << 20
	b := make([]byte, n+huge)
	// Huge pages are aligned: mark the aligned part.
	p := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	off := int((p+huge-1)&^(huge-1) - p)
	_ = syscall.Madvise(b[off:off+n&^(huge-1)], madvHugepage)
}
