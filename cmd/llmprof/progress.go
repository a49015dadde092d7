// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/llmops-otel/otelcol-llmops/internal/profiles/signals"
)

// isTerminal reports whether w is a character device (a terminal), the
// only place where ANSI styling and a redrawn progress line make sense.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// progressDelay is how long a file may take before the bar appears: quick
// files print no flicker.
const progressDelay = time.Second

// progress draws "bytes read / total" of the file being imported on a
// terminal. A nil *progress or one for a non-terminal does nothing.
type progress struct {
	w       io.Writer
	enabled bool
	delay   time.Duration
	tick    time.Duration

	// phase, once set, replaces the byte count: after the last byte is
	// read the builder still works (spans, memory), and a bar stuck at
	// 100% would look hung.
	phase atomic.Value // string

	mu    sync.Mutex
	done  chan struct{}
	wg    sync.WaitGroup
	drawn bool
}

func newProgress(w io.Writer) *progress {
	return &progress{w: w, enabled: isTerminal(w), delay: progressDelay, tick: 100 * time.Millisecond}
}

// start begins watching read (bytes consumed of a file of total bytes).
func (p *progress) start(path string, total int64, read *atomic.Int64) {
	if p == nil || !p.enabled {
		return
	}
	p.phase.Store("")
	p.done = make(chan struct{})
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		began := time.Now()
		t := time.NewTicker(p.tick)
		defer t.Stop()
		for {
			select {
			case <-p.done:
				return
			case now := <-t.C:
				if now.Sub(began) < p.delay {
					continue
				}
				p.draw(filepath.Base(path), read.Load(), total, now.Sub(began))
			}
		}
	}()
}

// setPhase names what happens once the file has been read.
func (p *progress) setPhase(s string) {
	if p != nil {
		p.phase.Store(s)
	}
}

// stop ends the bar and erases its line, so that what follows (the table,
// an error) starts on a clean line.
func (p *progress) stop() {
	if p == nil || p.done == nil {
		return
	}
	close(p.done)
	p.wg.Wait()
	p.done = nil
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.drawn {
		// Terminal output (here and below in this file): a write to stdout or
		// stderr that fails has nowhere to be reported, so its error is dropped.
		_, _ = fmt.Fprint(p.w, "\r\x1b[K")
		p.drawn = false
	}
}

const barWidth = 30

func (p *progress) draw(name string, read, total int64, took time.Duration) {
	frac := 1.0
	if total > 0 {
		frac = min(float64(read)/float64(total), 1)
	}
	n := int(frac * barWidth)
	bar := strings.Repeat("█", n) + strings.Repeat("░", barWidth-n)
	what := fmt.Sprintf("%3.0f%% %s / %s", frac*100, signals.FormatBytes(read), signals.FormatBytes(total))
	if ph, _ := p.phase.Load().(string); ph != "" {
		what = ph
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	_, _ = fmt.Fprintf(p.w, "\r\x1b[K%s %s %s  %s", name, bar, what, took.Truncate(100*time.Millisecond))
	p.drawn = true
}
