//go:build linux && !nohugepages

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
// would have been. What it buys is measured by bench/tuning.sh, which
// builds the tool with -tags nohugepages to compare.
//
// The garbage collector must be off (the heap's free pages are returned to
// the system otherwise) and the memory limit above n.
func prepareHeap(n int) {
	markHuge(n)
	runtime.GC() // frees what markHuge took; its pages stay with the heap
}

// hugePages reports whether prepareHeap marks memory for huge pages.
const hugePages = true

// madvHugepage is madvise's MADV_HUGEPAGE on every Linux architecture.
const madvHugepage = 14

// heapPad holds the memory markHuge puts before the prepared block, for
// the life of the process; it is never touched, nor read: it only keeps
// the pad from being freed, and the block's start from moving to it.
//
//lint:ignore U1000 written to keep the pad alive, never read
var heapPad []byte

// markHuge takes n bytes from the heap and marks them for huge pages.
//
// Huge pages are aligned to 2 MiB, and only whole ones can be had: an
// unaligned head of the block would be faulted in 4 KiB at a time, and the
// first large object the command allocates (the queue it reads) would
// start there, up to 512 faults of the dearest kind. So the block is made
// to start on a boundary: the heap places a large object at the lowest
// free address that fits, so a probe shows where the next one goes, and a
// pad, kept, fills the space up to the boundary. Where that does not come
// out aligned (the probe fell into a gap), the aligned part is marked as
// it is.
//
//go:noinline
func markHuge(n int) {
	const huge = 2 << 20
	probe := make([]byte, 128<<10) // a large object, too large for the stack: placed by the page heap
	next := uintptr(unsafe.Pointer(unsafe.SliceData(probe))) + uintptr(len(probe))
	if pad := int((next+huge-1)&^(huge-1) - next); pad > 0 {
		heapPad = make([]byte, pad)
	}
	b := make([]byte, n+huge)
	p := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	off := int((p+huge-1)&^(huge-1) - p)
	_ = syscall.Madvise(b[off:off+n&^(huge-1)], madvHugepage)
}
