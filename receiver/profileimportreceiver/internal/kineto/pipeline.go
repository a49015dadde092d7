package kineto

import "sync/atomic"

// Pipeline is a Handler that hands events to another Handler running on its
// own goroutine, so that parsing and what is done with the events (building
// spans, attributing memory) overlap on two cores instead of taking turns.
//
// Events are copied into a few fixed chunks that are recycled, so memory
// stays bounded whatever the file's size: when the consumer falls behind the
// parser waits for a free chunk. The consumer sees every event in file
// order, each valid (as with Parse) only during its call.
//
// Always call Close, also when the parse fails: it delivers the events still
// buffered, stops the goroutine and returns the consumer's first error.
type Pipeline struct {
	full chan *chunk
	free chan *chunk
	cur  *chunk
	done chan struct{}
	// err is written by the consumer before failed is set; the producer
	// reads it only after seeing failed (or after done is closed).
	err    error
	failed atomic.Bool
	closed bool
}

type chunk struct {
	events []Event
	n      int
	// kvs backs the copied events' Args.Other: one arena per chunk rather
	// than a slice per event.
	kvs []KV
}

const (
	pipelineChunkEvents = 1024
	pipelineChunks      = 4
)

// NewPipeline starts the consumer goroutine around h.
func NewPipeline(h Handler) *Pipeline {
	p := &Pipeline{
		full: make(chan *chunk, pipelineChunks),
		free: make(chan *chunk, pipelineChunks),
		done: make(chan struct{}),
	}
	for range pipelineChunks {
		p.free <- &chunk{events: make([]Event, pipelineChunkEvents), kvs: make([]KV, 0, pipelineChunkEvents)}
	}
	go p.consume(h)
	return p
}

func (p *Pipeline) consume(h Handler) {
	defer close(p.done)
	for c := range p.full {
		// After a failure keep draining (without handling) so the producer
		// never blocks on a full channel.
		if p.err == nil {
			for i := range c.n {
				if err := h.Event(&c.events[i]); err != nil {
					p.err = err
					p.failed.Store(true)
					break
				}
			}
		}
		c.n, c.kvs = 0, c.kvs[:0]
		p.free <- c
	}
}

// Event copies e into the current chunk and passes the chunk on when full.
// It returns the consumer's error once the consumer has failed, which stops
// the parse.
func (p *Pipeline) Event(e *Event) error {
	if p.failed.Load() {
		return p.err
	}
	c := p.cur
	if c == nil {
		c = <-p.free
		p.cur = c
	}
	dst := &c.events[c.n]
	*dst = *e
	if len(e.Args.Other) > 0 {
		start := len(c.kvs)
		c.kvs = append(c.kvs, e.Args.Other...)
		dst.Args.Other = c.kvs[start:len(c.kvs):len(c.kvs)]
	} else {
		dst.Args.Other = nil
	}
	c.n++
	if c.n == len(c.events) {
		p.full <- c
		p.cur = nil
	}
	return nil
}

// Close delivers the buffered events, waits for the consumer and returns its
// first error. It is safe to call more than once.
func (p *Pipeline) Close() error {
	if !p.closed {
		p.closed = true
		if p.cur != nil && p.cur.n > 0 {
			p.full <- p.cur
		}
		p.cur = nil
		close(p.full)
	}
	<-p.done
	return p.err
}
