package main

import (
	"runtime"
	"syscall"
	"unsafe"
)

// prepareHeap makes the next n bytes the heap grows by cheap to use. Each
// page of memory a process touches for the first time costs a page fault,
// and on some virtual machines a fault costs as much as parsing the bytes
// it holds: a command reading a queue of a few MiB spends more time in
// faults than in its own work. So the memory is taken in one piece, asked
// for as huge pages (one fault per 2 MiB) and filled in by the kernel in
// one call, then given back to the heap, which reuses those pages, already
// there, for what the command allocates next. Where the kernel does not do
// either, the memory is faulted in as it would have been anyway.
//
// The garbage collector must be off (the heap's free pages are returned to
// the system otherwise) and the memory limit above n.
func prepareHeap(n int) {
	grow(n)
	runtime.GC() // frees what grow took; its pages stay with the heap
}

// Values of madvise's advice on every Linux architecture; the syscall
// package lacks the second.
const (
	madvHugepage      = 14
	madvPopulateWrite = 23 // Linux 5.14
)

//go:noinline
func grow(n int) {
	const huge = 2 << 20
	b := make([]byte, n+huge)
	// Huge pages are aligned: advise the aligned part.
	p := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	off := int((p+huge-1)&^(huge-1) - p)
	r := b[off : off+n&^(huge-1)]
	_ = syscall.Madvise(r, madvHugepage)
	if syscall.Madvise(r, madvPopulateWrite) != nil {
		for i := 0; i < len(r); i += huge {
			r[i] = 1 // a huge page each, if the kernel gave them
		}
	}
}
