// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package kineto

import (
	"bytes"
	"errors"
	"io"
	"sync"
	"sync/atomic"
)

// Parallel parsing of traceEvents (Options.Workers > 1).
//
// Why: parsing is most of an import's time (about 1.3 µs per Kineto event
// on one core) and a trace's events are independent objects, so the events
// array is split between goroutines while the caller's goroutine hands the
// events to the Handler, in file order.
//
// How: the input after the '[' is read in blocks into a stream that every
// goroutine reads through. In each block a likely event start is guessed
// (a '{' whose preceding non-space bytes in the block are ',' and '}'). A
// job parses events from one guess up to the first event start at or past
// the next guess, on a worker goroutine with a parser of its own. A guess
// can be wrong (the same bytes may sit inside a string or in an array of
// objects), so results are taken strictly in file order and a job's result
// is used only if the job started exactly where the previous used job
// stopped, the first job starting where the sequential parser stands. A
// job that does not is parsed again from there. Every used job therefore
// started at a position the sequential parser reaches, and parsed what the
// sequential parser would have parsed: the same events, the same
// Metadata, the same SyntaxError (offset and line) where the input is
// malformed. At the closing ']' the top-level parser takes over the stream
// where the last job stopped.
//
// Memory stays bounded: at most Workers+2 jobs are in flight, each holding
// about a block of events; a job may read at most 4 MB (the overrun) past
// its stop position: one event larger than that, or a stretch with no
// guess at all, sends the rest of the array to the sequential parser.

const (
	// defaultBlock is the unit of reading and of work (about 500 Kineto
	// events); Options.blockSize overrides it in tests. 256 KB was
	// chosen over 64 when the builder's tables were on the Go heap: a
	// quarter of the jobs, hand-overs and goroutine wake-ups made the
	// import of the 541 MB generated trace 0.97-1.05 → 0.83-0.87 s and of
	// hta-df_index_resolver 0.14 → 0.12 s (kinetoparse -import, 3 runs
	// each); 512 KB and 1 MB were no faster and took 23-39 MB. With the
	// tables off the heap, the blocks and job slots in flight are most of
	// the parse's live heap, and 128 KB took the 54 MB trace's import
	// from 29.4 to 26.2 MB peak RSS (median of 20 alternating cold runs,
	// wall time 0.220 s either way); the 541 MB trace's imports were as
	// fast within the noise (fastest of 5 cold runs 1.02 against 1.04 s,
	// its .gz 1.11 against 1.06 s).
	defaultBlock = 128 << 10
	// defaultOverrun bounds what a job reads past its stop position (or
	// its start when it has none); Options.overrun overrides it in tests.
	defaultOverrun = 4 << 20
	// readAheadBlocks is how many blocks the read-ahead goroutine reads
	// before they are asked for: 1 MB, enough to ride out the scheduler
	// leaving it unscheduled while both parse workers run. 16 (4 MB) was
	// measured faster than 2 on the 541 MB .gz (0.93-0.94 against
	// 0.96-1.01 s, kinetoparse -import, 3 runs each); 4 is as fast as 16
	// there (median of 5 cold imports 1.44 against 1.48 s) and, with the
	// builder's tables off the Go heap, it is a visible part of the
	// parse's live heap: the 54 MB trace's import peaked at 35.0 against
	// 36.8 MB RSS (median of 20 alternating cold runs, wall time equal).
	readAheadBlocks = 4
	// ParallelMinBytes is the (estimated decompressed) file size below
	// which ParseFile parses on one goroutine whatever Options.Workers
	// says: the whole parse takes a few milliseconds there, and the
	// blocks and job results in flight would outweigh the file.
	ParallelMinBytes = 4 << 20
)

// WorkersFor returns how many workers to parse a file of size bytes on disk
// with: want, or 1 when its decompressed size (estimated: 8× a gzipped
// file) is below ParallelMinBytes.
func WorkersFor(size int64, gzipped bool, want int) int {
	if gzipped {
		size *= 8
	}
	if size < ParallelMinBytes {
		return 1
	}
	return want
}

// testHookParallel, when set (tests only), receives how many jobs a
// parallel parse used, how many stretches it parsed again after a wrong
// guess, and whether it fell back to the sequential parser.
var testHookParallel func(used, reparsed int, fellBack bool)

var (
	errJobOverrun   = errors.New("kineto: a parallel job read too far past its end")
	errJobCancelled = errors.New("kineto: parallel job cancelled")
)

// block is a piece of the stream.
type block struct {
	data []byte
	off  int64 // stream offset of data[0]
	next *block
	// sentinel: data[:len(data)+1] ends with a 0 byte, so a job's parser
	// can parse the block in place (takeBlock).
	sentinel bool
}

// stream reads the underlying reader in blocks, on demand, for all the
// goroutines of one parallel parse; blocks no reader or job refers to any
// more are garbage.
type stream struct {
	mu   sync.Mutex
	r    io.Reader
	tail *block
	err  error // after the last block: io.EOF or the read error
	// left is how many more bytes may be read (-1: no limit): one more
	// than Options.MaxDecompressed allows, so that a parser reading it
	// fails with ErrTooLarge exactly as the sequential one does.
	left      int64
	blockSize int
	cancelled atomic.Bool
	// spare holds the buffers of blocks nothing reads any more (see
	// recycle): reused, the stream allocates a few blocks instead of the
	// whole input. Guarded by spareMu, not mu: the read-ahead goroutine
	// takes buffers while readBlock waits for it holding mu.
	spareMu sync.Mutex
	spare   [][]byte

	// The read-ahead (readAhead): while it runs, readBlock takes the
	// blocks its goroutine has read instead of reading them itself.
	ahead     chan chunk
	quit      chan struct{}
	aheadDone chan struct{}
	leftover  *chunk // read, but not sent when quit came
}

// chunk is one read of the read-ahead goroutine: buf[:n], then err.
type chunk struct {
	buf []byte
	n   int
	err error
}

// recycle takes back the buffers of the blocks from b up to (not
// including) until. The caller guarantees that no job or reader will read
// them: they lie before the position the sequential parser has reached,
// and every job in flight starts after it.
func (s *stream) recycle(b, until *block) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.spareMu.Lock()
	defer s.spareMu.Unlock()
	for ; b != nil && b != until; b = b.next {
		if cap(b.data) == s.blockSize+1 {
			s.spare = append(s.spare, b.data[:s.blockSize])
		}
		b.data = nil
	}
}

// buffer returns a buffer of size bytes, a spare one when it fits.
func (s *stream) buffer(size int) []byte {
	s.spareMu.Lock()
	defer s.spareMu.Unlock()
	if n := len(s.spare); n > 0 && size == s.blockSize {
		buf := s.spare[n-1]
		s.spare = s.spare[:n-1]
		return buf
	}
	return make([]byte, size, size+1) // and the sentinel
}

// readAhead starts a goroutine reading the next depth blocks before they
// are asked for, so that the reading (for a .gz, the inflating, 0.36 s
// of one core for the 541 MB generated trace) runs beside the parse
// instead of on the goroutine that asks for the next block, with mu
// held. stopReadAhead ends it. mu held or not yet shared.
func (s *stream) readAhead(depth int) {
	if s.err != nil {
		return
	}
	s.ahead = make(chan chunk, depth)
	s.quit = make(chan struct{})
	s.aheadDone = make(chan struct{})
	left := s.left
	go func() {
		defer close(s.aheadDone)
		for {
			size := s.blockSize
			if left >= 0 && int64(size) > left {
				size = int(left)
			}
			c := chunk{err: io.EOF}
			if size > 0 {
				c.buf = s.buffer(size)
				c.n, c.err = readBlock(s.r, c.buf)
				if left >= 0 {
					left -= int64(c.n)
				}
			}
			select {
			case s.ahead <- c:
			case <-s.quit:
				s.leftover = &c
				return
			}
			if c.err != nil {
				return
			}
		}
	}()
}

// stopReadAhead ends the read-ahead goroutine and appends what it read to
// the stream: reads go on directly from the underlying reader.
func (s *stream) stopReadAhead() {
	if s.ahead == nil {
		return
	}
	close(s.quit)
	<-s.aheadDone
	s.mu.Lock()
	defer s.mu.Unlock()
	for s.err == nil {
		var c chunk
		select {
		case c = <-s.ahead:
		default:
			if s.leftover == nil {
				s.ahead = nil
				return
			}
			c, s.leftover = *s.leftover, nil
		}
		s.appendChunk(c)
	}
	s.ahead, s.leftover = nil, nil
}

// next returns the block after b, reading it when b is the last one read,
// or nil and the stream's terminal error (io.EOF at the end).
func (s *stream) next(b *block) (*block, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if b.next == nil && s.err == nil {
		s.readBlock()
	}
	if b.next != nil {
		return b.next, nil
	}
	return nil, s.err
}

// readBlock appends one block to the tail (mu held).
func (s *stream) readBlock() {
	if s.ahead != nil {
		s.appendChunk(<-s.ahead)
		return
	}
	size := s.blockSize
	if s.left >= 0 && int64(size) > s.left {
		size = int(s.left)
	}
	if size == 0 {
		s.err = io.EOF
		return
	}
	c := chunk{buf: s.buffer(size)}
	c.n, c.err = readBlock(s.r, c.buf)
	s.appendChunk(c)
}

// readBlock fills buf from r, as io.ReadFull does, but returns io.EOF
// only when r itself ended: io.ReadFull also reports a short read ended
// by io.EOF as io.ErrUnexpectedEOF, the same error a truncated gzip
// stream returns, and the two must not be confused (a .gz cut in its
// trailer would otherwise parse as whole here and fail sequentially).
func readBlock(r io.Reader, buf []byte) (int, error) {
	n := 0
	for n < len(buf) {
		m, err := r.Read(buf[n:])
		n += m
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// appendChunk appends the bytes read to the tail and records the error
// that ended the read, if any (mu held).
func (s *stream) appendChunk(c chunk) {
	if c.n > 0 {
		t := s.tail
		nb := &block{data: c.buf[:c.n], off: t.off + int64(len(t.data)), sentinel: cap(c.buf) > c.n}
		if nb.sentinel {
			c.buf[:c.n+1][c.n] = 0
		}
		t.next, s.tail = nb, nb
		if s.left >= 0 {
			s.left -= int64(c.n)
		}
	}
	s.err = c.err
}

// locate returns the block holding stream offset off (>= b.off, already
// read) and the index in it.
func (s *stream) locate(b *block, off int64) (*block, int) {
	for off > b.off+int64(len(b.data)) {
		nb, _ := s.next(b)
		if nb == nil {
			break
		}
		b = nb
	}
	return b, int(off - b.off)
}

// streamReader reads the stream from a position.
type streamReader struct {
	s   *stream
	b   *block
	idx int
	// maxOff, when >= 0, fails reads at or past it with errJobOverrun;
	// job readers (job set) fail once the parse is cancelled.
	maxOff int64
	job    bool
}

// span returns the rest of the current block (moving to the next block
// when this one is read to its end) with its 0 sentinel after it, and
// consumes it; false, consuming nothing, where Read would fail or reach
// the end, when the rest is longer than maxLen (>= 0), or when the block
// has no sentinel.
func (r *streamReader) span(maxLen int64) ([]byte, bool) {
	if r.job && r.s.cancelled.Load() {
		return nil, false
	}
	for r.idx >= len(r.b.data) {
		nb, _ := r.s.next(r.b)
		if nb == nil {
			return nil, false
		}
		r.b, r.idx = nb, 0
	}
	if r.maxOff >= 0 && r.b.off+int64(r.idx) >= r.maxOff {
		return nil, false
	}
	d := r.b.data[r.idx:]
	if !r.b.sentinel || (maxLen >= 0 && int64(len(d)) > maxLen) {
		return nil, false
	}
	r.idx = len(r.b.data)
	return d[:len(d)+1], true
}

func (r *streamReader) Read(p []byte) (int, error) {
	if r.job && r.s.cancelled.Load() {
		return 0, errJobCancelled
	}
	for r.idx >= len(r.b.data) {
		nb, err := r.s.next(r.b)
		if nb == nil {
			return 0, err
		}
		r.b, r.idx = nb, 0
	}
	if r.maxOff >= 0 && r.b.off+int64(r.idx) >= r.maxOff {
		return 0, errJobOverrun
	}
	n := copy(p, r.b.data[r.idx:])
	r.idx += n
	return n, nil
}

// guess returns the index of the first likely event start in d (see the
// comment at the top), or -1.
func guess(d []byte) int {
	for i := 0; ; {
		k := bytes.IndexByte(d[i:], '{')
		if k < 0 {
			return -1
		}
		k += i
		j := k - 1
		for j >= 0 && isSpace(d[j]) {
			j--
		}
		if j >= 0 && d[j] == ',' {
			j--
			for j >= 0 && isSpace(d[j]) {
				j--
			}
			if j >= 0 && d[j] == '}' {
				return k
			}
		}
		i = k + 1
	}
}

// job is one stretch of the events array.
type job struct {
	b      *block
	idx    int
	start  int64 // stream offset of the first byte parsed (b.off+idx)
	stopAt int64 // the next job's guess: stop at the first event start at or past it; -1: none

	events []Event
	kvs    []KV
	// other is the parsing worker's buffer for Args.Other, lent to each
	// event while it is parsed (Event copies what it holds into kvs).
	other []KV

	// Outcome.
	end        int64 // where the job stopped: an event start at or past stopAt, or just past ']'
	lines      int   // newlines from start to end; a SyntaxError's Line counts from start too
	arrayEnded bool
	err        error
	numErrs    int64
	done       chan struct{}
}

// minEventBytes is about the shortest a Kineto event is written (a flow
// event with its indentation, ~120 bytes): a block holds at most about
// blockSize/minEventBytes events; a job that holds more grows its array.
const minEventBytes = 128

// slot returns the place of the job's next event, which the job's parser
// parses there and then hands to Event. Parsing in place rather than into
// the parser's own event and copying it here (330 bytes an event), with
// Event.Reset's single assignment, took ten 2-worker parses of
// hta-df_index_resolver from 1.38-1.49 to 1.30-1.33 CPU-seconds (0.76-0.80
// to 0.70-0.73 s).
func (j *job) slot() *Event {
	n := len(j.events)
	if n == cap(j.events) {
		j.events = append(j.events, Event{})[:n]
	}
	e := &j.events[:n+1][n]
	e.Args.Other = j.other[:0] // not what a reused slot held: that is another event's kvs
	return e
}

// Event keeps e, the event parsed at slot() (the job is the Handler of
// its parser): its Args.Other moves from the worker's buffer to the job's.
func (j *job) Event(e *Event) error {
	j.events = j.events[:len(j.events)+1]
	if len(e.Args.Other) > 0 {
		start := len(j.kvs)
		j.kvs = append(j.kvs, e.Args.Other...)
		e.Args.Other = j.kvs[start:len(j.kvs):len(j.kvs)]
	} else {
		e.Args.Other = nil
	}
	return nil
}

// worker holds what one goroutine's job parsers reuse.
type worker struct {
	buf   []byte
	tab   *strTab
	other []KV
}

func newWorker() *worker {
	return &worker{buf: make([]byte, initialBuf), tab: newStrTab(), other: make([]KV, 0, MaxOtherArgs)}
}

// run parses j with a parser positioned at j.start, configured like the
// top-level parser top.
func (w *worker) run(j *job, top *parser, s *stream) {
	maxOff := max(j.stopAt, j.start) + top.overrun
	sr := &streamReader{s: s, b: j.b, idx: j.idx, maxOff: maxOff, job: true}
	q := &parser{
		r:       sr,
		sr:      sr,
		buf:     w.buf,
		mark:    -1,
		tok:     -1,
		limit:   top.limit,
		h:       j,
		job:     j,
		tab:     w.tab,
		stopAt:  j.stopAt,
		noOther: top.noOther,
		base:    j.start,
		read:    j.start,
		// lines counts from the job's start: the line there is known
		// only once the job is used (verifiedLines in eventsParallel).
	}
	q.buf[0] = 0
	j.other = w.other[:0]
	j.err = q.runEvents()
	if q.shared {
		w.buf = q.own
	} else {
		w.buf = q.buf
	}
	j.end = q.base + int64(q.pos)
	j.lines = q.lines + bytes.Count(q.buf[:q.pos], nl)
	j.arrayEnded = q.arrayEnded
	j.numErrs = q.md.NumberErrors
}

// runEvents runs eventLoop and returns the error it stopped on.
func (p *parser) runEvents() (err error) {
	defer func() {
		if r := recover(); r != nil {
			pe, ok := r.(parseError)
			if !ok {
				panic(r)
			}
			err = pe.err
		}
	}()
	p.eventLoop()
	return nil
}

// reseat points the top-level parser at stream offset b.off+idx, where
// the stream has had lines newlines: it reads on from there through the
// stream, sequentially.
func (p *parser) reseat(s *stream, b *block, idx int, lines int) {
	p.r = &streamReader{s: s, b: b, idx: idx, maxOff: -1}
	p.base = b.off + int64(idx)
	p.lines = lines
	p.read = p.base
	p.pos, p.end, p.eof = 0, 0, false
	p.mark, p.tok = -1, -1
	p.buf[0] = 0
}

// eventsParallel parses the events array from the first event (at pos) to
// the closing ']' with p.workers goroutines; see the top of this file.
func (p *parser) eventsParallel() {
	// The bytes already buffered become the first blocks.
	buffered := append([]byte(nil), p.buf[p.pos:p.end]...)
	first := &block{off: p.base + int64(p.pos)}
	first.data, buffered = buffered[:min(len(buffered), p.blockSize):min(len(buffered), p.blockSize)], buffered[min(len(buffered), p.blockSize):]
	s := &stream{r: p.r, tail: first, left: -1, blockSize: p.blockSize}
	for len(buffered) > 0 {
		t := s.tail
		n := min(len(buffered), p.blockSize)
		nb := &block{data: buffered[:n:n], off: t.off + int64(len(t.data))}
		t.next, s.tail, buffered = nb, nb, buffered[n:]
	}
	if p.limit > 0 {
		s.left = max(p.limit+1-p.read, 0)
	}
	if p.eof {
		s.err = io.EOF
	}
	// From here on every read goes through the stream; the top-level
	// parser reads again only once reseated (holding the first block
	// meanwhile would keep every block read since alive).
	p.r = nil

	queued := make(chan *job, p.workers+2)
	var wg sync.WaitGroup
	for range p.workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w := newWorker()
			for j := range queued {
				w.run(j, p, s)
				close(j.done)
			}
		}()
	}
	stopped := false
	s.readAhead(readAheadBlocks)
	stop := func() {
		if !stopped {
			stopped = true
			s.cancelled.Store(true)
			close(queued)
			wg.Wait()
			s.stopReadAhead()
			// Reads go on from the stream (reseat), but no block is
			// read into a spare buffer any more: let them go with the
			// rest of the parallel parse's working set.
			s.spareMu.Lock()
			s.spare = nil
			s.spareMu.Unlock()
		}
	}
	defer stop()

	var (
		inflight []*job
		free     []*job
		inline   *worker // re-parses stretches whose guess was wrong
		// The sequential parser stands at offset verified, in block vb
		// or a later one.
		verified = first.off
		vb       = first
		// Newlines before verified. Only the used jobs count lines (each
		// from its start), not the blocks: counting every block's
		// newlines as it was read was a second pass over the input, ~3%
		// of the 541 MB generated trace's import CPU.
		verifiedLines = p.lines + bytes.Count(p.buf[:p.pos], nl)
		oldest        = first // the first block not recycled
		used          int
		reparsed      int
		fellBack      bool
	)
	if testHookParallel != nil {
		defer func() { testHookParallel(used, reparsed, fellBack) }()
	}
	newJob := func(b *block, idx int) *job {
		var j *job
		if n := len(free); n > 0 {
			j, free = free[n-1], free[:n-1]
			*j = job{events: j.events[:0], kvs: j.kvs[:0]}
		} else {
			// Room for a block of short events from the start: grown
			// by append from nothing, each job's events moved through
			// ten ever larger arrays (0.14 s of CPU in growslice over
			// 15 cold imports of hta-df_index_resolver). A slot no
			// event reaches is not written, and memory fresh from the
			// OS is not touched until it is.
			j = &job{events: make([]Event, 0, p.blockSize/minEventBytes)}
		}
		j.b, j.idx, j.start, j.stopAt = b, idx, b.off+int64(idx), -1
		j.done = make(chan struct{})
		return j
	}
	next := newJob(first, 0)
	for {
		// Keep Workers+2 jobs queued or running: find where the pending
		// job stops (the first guess in the blocks after its first one,
		// within the overrun of its start) and queue it.
		for next != nil && len(inflight) < cap(queued) {
			cur := next
			next = nil
			for b := cur.b; b.off+int64(len(b.data)) < cur.start+p.overrun; {
				if b, _ = s.next(b); b == nil {
					break
				}
				if i := guess(b.data); i >= 0 {
					next = newJob(b, i)
					cur.stopAt = next.start
					break
				}
			}
			queued <- cur
			inflight = append(inflight, cur)
		}
		if len(inflight) == 0 {
			// Cannot happen: the last job (no stopAt) ends the array or
			// fails. Refuse rather than loop.
			p.fail("internal error in the parallel parser")
		}
		j := inflight[0]
		inflight = inflight[1:]
		<-j.done
		if j.start != verified {
			// A wrong guess: parse this stretch again from where the
			// sequential parser stands.
			if inline == nil {
				inline = newWorker()
			}
			stopAt := j.stopAt
			j.b = nil
			free = append(free, j) // reused by newJob below
			b, idx := s.locate(vb, verified)
			r := newJob(b, idx)
			r.stopAt = stopAt
			inline.run(r, p, s)
			j = r
			reparsed++
		}
		used++
		if errors.Is(j.err, errJobOverrun) {
			// One event (or a stretch without a guess) longer than a job
			// may read: the rest of the array is parsed sequentially.
			fellBack = true
			stop()
			p.reseat(s, j.b, j.idx, verifiedLines)
			p.eventLoop()
			return
		}
		for i := range j.events {
			p.md.Events++
			if err := p.h.Event(&j.events[i]); err != nil {
				panic(parseError{err})
			}
		}
		p.md.NumberErrors += j.numErrs
		if j.err != nil {
			var se *SyntaxError
			if errors.As(j.err, &se) {
				se.Line += verifiedLines
			}
			panic(parseError{j.err})
		}
		verifiedLines += j.lines
		if j.arrayEnded {
			stop()
			b, idx := s.locate(j.b, j.end)
			p.reseat(s, b, idx, verifiedLines)
			return
		}
		// Blocks before this job's and every queued job's first block
		// are read by nobody any more.
		keep := j.b
		if len(inflight) > 0 && inflight[0].b.off < keep.off {
			keep = inflight[0].b
		}
		if keep.off > oldest.off {
			s.recycle(oldest, keep)
			oldest = keep
		}
		verified, vb = j.end, j.b
		j.b = nil
		free = append(free, j)
	}
}
