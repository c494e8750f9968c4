package signature

// Under the rules V2 a line is read twice: by the line rules, which look
// at the line alone, and by the report rules, which look at it after every
// line before it. Sum, on a machine with more than one processor, runs
// them in a pipeline: the reader gathers the output's complete lines into
// batches; workers split batches into lines and apply the line rules to
// several batches at once; the report rules read the batches in their
// order. Every line becomes what stream.line2 makes of it; only the work
// is shared out.

import (
	"bytes"
	"runtime"
	"sync"
)

// batchSize is the number of bytes of output a batch gathers before it
// goes to the workers.
const batchSize = 64 << 10

// maxWorkers bounds the workers of a pipeline, and so its memory.
const maxWorkers = 4

type pipeline struct {
	st        *stream // the report rules' side
	slowTests bool
	cur       *batch      // the batch being gathered
	work      chan *batch // to the workers, in any order
	order     chan *batch // to the report rules, in order
	free      chan *batch // batches read, to be gathered again
	done      chan struct{}
	workers   sync.WaitGroup
}

// A batch holds lines of output and what the line rules made of them.
type batch struct {
	data  []byte // the lines as read, one after another
	segs  []segment
	lines []preLine     // the lines of segs, as the line rules took them
	norm  []byte        // the lines' normalized text
	prep  []byte        // lines as the report rules see them, where not as read
	ready chan struct{} // a token when the line rules are done with it
}

// A segment of a batch's data holds one line, or lines separated by
// newlines (one line, perhaps empty, more than it has newlines).
type segment struct {
	start, end int
	lines      bool
}

// preLine is a line of a batch: its bytes in data (or, inPrep, in prep),
// and how the report rules take it. A batch holds less than a read more
// than batchSize, so its offsets fit in 32 bits; a worker writes one for
// every line, which the report rules read on another processor, so it is
// kept small.
type preLine struct {
	how    uint8
	inPrep bool
	act    uint8    // for preQuick, what quick does with the line
	raw    [2]int32 // the line as the report rules see it
	// For preNorm, the end of its normalized text in norm, which starts
	// where the last preNorm line's ends; for preQuick, its indentation.
	end int32
}

// How the report rules take a line of a batch.
const (
	preNorm  = iota // normalized already: norm, and raw as the report rules see it
	preQuick        // perhaps quick's way (see report.quick): act, or line2 reads it
	preFull         // perhaps a go test -json event: line2 reads it
)

// pipelineWorkers is the number of workers Sum's pipeline has, or 0 for
// no pipeline: one processor does the work best alone.
func pipelineWorkers() int {
	if n := runtime.GOMAXPROCS(0); n > 1 {
		return min(n, maxWorkers)
	}
	return 0
}

// startPipeline sends st's lines through a pipeline with the given number
// of workers (at least 1) until close.
func (st *stream) startPipeline(workers int, slowTests bool) {
	// Batches in flight: four for each worker, and some for the reader
	// and the report rules, so that a worker or the report rules that
	// fall behind a moment do not stop the others. With two workers they
	// hold about 2 MiB; with five for each worker, signing real output
	// took about 2% longer (median of 11 runs).
	n := 4*workers + 4
	p := &pipeline{
		st:        st,
		slowTests: slowTests,
		work:      make(chan *batch, n),
		order:     make(chan *batch, n),
		free:      make(chan *batch, n),
		done:      make(chan struct{}),
	}
	for range n - 1 {
		p.free <- newBatch()
	}
	p.cur = newBatch()
	p.workers.Add(workers)
	for range workers {
		go p.normalize(&lineBufs{sc: st.sc})
	}
	go p.report()
	st.pipe = p
}

// newBatch makes a batch with room for a batch's usual lines and their
// normalized text (about as long), so that they seldom grow.
func newBatch() *batch {
	return &batch{
		data:  make([]byte, 0, batchSize+4<<10),
		lines: make([]preLine, 0, batchSize/32),
		norm:  make([]byte, 0, batchSize+4<<10),
		ready: make(chan struct{}, 1),
	}
}

// add adds a line, given without its newline, to the batch being gathered.
func (p *pipeline) add(b []byte) { p.addSegment(b, false) }

// addLines adds lines separated by newlines, the last given without its
// newline, in segments of about batchSize bytes: the batches' size bounds
// the pipeline's memory.
func (p *pipeline) addLines(b []byte) {
	for len(b) > batchSize {
		k := bytes.LastIndexByte(b[:batchSize], '\n')
		if k < 0 {
			if k = bytes.IndexByte(b[batchSize:], '\n'); k < 0 {
				break
			}
			k += batchSize
		}
		p.addSegment(b[:k], true)
		b = b[k+1:]
	}
	p.addSegment(b, true)
}

func (p *pipeline) addSegment(b []byte, lines bool) {
	bt := p.cur
	start := len(bt.data)
	bt.data = append(bt.data, b...)
	bt.segs = append(bt.segs, segment{start, len(bt.data), lines})
	if len(bt.data) >= batchSize {
		p.send()
	}
}

func (p *pipeline) send() {
	p.work <- p.cur
	p.order <- p.cur
	p.cur = <-p.free
	p.cur.data, p.cur.segs = p.cur.data[:0], p.cur.segs[:0]
}

// wait sends the last batch and returns once the report rules have read
// every line.
func (p *pipeline) wait() {
	if len(p.cur.segs) > 0 {
		p.send()
	}
	close(p.work)
	close(p.order)
	<-p.done
	p.workers.Wait()
}

// normalize applies the line rules to batches, with its own buffers.
func (p *pipeline) normalize(lb *lineBufs) {
	defer p.workers.Done()
	for bt := range p.work {
		bt.lines, bt.norm, bt.prep = bt.lines[:0], bt.norm[:0], bt.prep[:0]
		for _, sg := range bt.segs {
			if !sg.lines {
				p.normalizeLine(lb, bt, sg.start, sg.end)
				continue
			}
			for start := sg.start; ; {
				nl := bytes.IndexByte(bt.data[start:sg.end], '\n')
				if nl < 0 {
					p.normalizeLine(lb, bt, start, sg.end)
					break
				}
				p.normalizeLine(lb, bt, start, start+nl)
				start += nl + 1
			}
		}
		bt.ready <- struct{}{}
	}
}

// normalizeLine applies the line rules to the line bt.data[start:end] and
// adds it to bt.lines.
func (p *pipeline) normalizeLine(lb *lineBufs, bt *batch, start, end int) {
	b := bt.data[start:end]
	// The line's record is written in place, field by field: built aside
	// and copied in whole, it was read back from the stack before its
	// narrow fields' stores had landed, a stall on every line.
	bt.lines = append(bt.lines, preLine{})
	l := &bt.lines[len(bt.lines)-1]
	l.raw = [2]int32{int32(start), int32(end)}
	switch {
	case len(b) > 12 && b[0] == '{' && b[1] == '"':
		// As in line2: an event of go test -json first, then quick.
		l.how = preFull
		return
	case len(b) <= maxLine && len(lb.sc.extra) == 0:
		if act, _, indent := quickAct(b, p.slowTests); act != aSeq {
			l.how, l.act, l.end = preQuick, uint8(act), int32(indent)
			return
		}
	}
	var raw []byte
	bt.norm, raw = lb.appendLine2(bt.norm, b)
	l.end = int32(len(bt.norm))
	if len(raw) != len(b) || len(raw) > 0 && &raw[0] != &b[0] {
		s := len(bt.prep)
		bt.prep = append(bt.prep, raw...)
		l.raw, l.inPrep = [2]int32{int32(s), int32(len(bt.prep))}, true
	}
}

// report hands the batches' lines to the report rules, in order.
func (p *pipeline) report() {
	defer close(p.done)
	st := p.st
	for bt := range p.order {
		<-bt.ready
		norm := int32(0) // where the next preNorm line's text starts
		for i := range bt.lines {
			l := &bt.lines[i]
			switch l.how {
			case preFull:
				st.line2(bt.data[l.raw[0]:l.raw[1]])
			case preQuick:
				st.lineQuick(bt.data[l.raw[0]:l.raw[1]], int(l.act), int(l.end))
			default:
				raw := bt.data
				if l.inPrep {
					raw = bt.prep
				}
				st.reportNormalized(bt.norm[norm:l.end], raw[l.raw[0]:l.raw[1]])
				norm = l.end
			}
			if len(st.out) >= flushAt {
				st.flush()
			}
		}
		p.free <- bt
	}
}
