package kineto

import (
	"bytes"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// flatEvent is a deep copy of what a handler sees, for comparing runs.
type flatEvent struct {
	Event
	other string
}

func record(out *[]flatEvent) Handler {
	return HandlerFunc(func(e *Event) error {
		f := flatEvent{Event: *e}
		f.Args.Other = nil
		for _, kv := range e.Args.Other {
			f.other += kv.Key + "=" + kv.Value + ";"
		}
		*out = append(*out, f)
		return nil
	})
}

// TestPipelineSameEventsInOrder: through the pipeline the handler sees
// exactly the events, args included, that it sees when called directly, in
// the same order — across many chunk boundaries and with the parser reusing
// its event and Other slice.
func TestPipelineSameEventsInOrder(t *testing.T) {
	for _, name := range []string{"hta-ns_resolution-rank0.pt.trace.json.gz", "tracelens-sglang_qwen3_decode.json.gz"} {
		t.Run(name, func(t *testing.T) {
			data := readFixture(t, name)
			var direct, piped []flatEvent
			mdDirect, err := Parse(bytes.NewReader(data), Options{}, record(&direct))
			if err != nil {
				t.Fatal(err)
			}
			p := NewPipeline(record(&piped))
			mdPiped, err := Parse(bytes.NewReader(data), Options{}, p)
			if cerr := p.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(direct) < 2*pipelineChunkEvents {
				t.Fatalf("fixture too small to cross chunk boundaries: %d events", len(direct))
			}
			if len(piped) != len(direct) {
				t.Fatalf("piped %d events, direct %d", len(piped), len(direct))
			}
			withOther := 0
			for i := range direct {
				if direct[i].other != "" {
					withOther++
				}
				if !reflect.DeepEqual(direct[i], piped[i]) {
					t.Fatalf("event %d differs:\n direct %+v\n piped  %+v", i, direct[i], piped[i])
				}
			}
			if withOther == 0 {
				t.Fatal("no event with other args: the arena copy is not exercised")
			}
			if !reflect.DeepEqual(mdDirect, mdPiped) {
				t.Fatalf("metadata differs: %+v vs %+v", mdDirect, mdPiped)
			}
		})
	}
}

// TestPipelineConsumerErrorStopsParse: the consumer's first error stops the
// parse (returned by Event and by Close) and later events are not handled.
func TestPipelineConsumerErrorStopsParse(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"traceEvents":[`)
	const total = 20 * pipelineChunkEvents
	for i := range total {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"ph":"X","name":"op%d","pid":1,"tid":1,"ts":%d,"dur":1}`, i, i)
	}
	b.WriteString(`]}`)
	boom := errors.New("boom")
	handled := 0
	p := NewPipeline(HandlerFunc(func(e *Event) error {
		handled++
		if handled == 1500 {
			return boom
		}
		return nil
	}))
	md, err := Parse(strings.NewReader(b.String()), Options{}, p)
	if cerr := p.Close(); !errors.Is(cerr, boom) {
		t.Fatalf("Close = %v, want boom", cerr)
	}
	if !errors.Is(err, boom) {
		t.Fatalf("Parse = %v, want boom", err)
	}
	if handled != 1500 {
		t.Fatalf("handled %d events after the error, want to stop at 1500", handled)
	}
	if md.Events >= total {
		t.Fatalf("parse read all %d events despite the consumer failing", md.Events)
	}
	if err := p.Close(); !errors.Is(err, boom) {
		t.Fatalf("second Close = %v", err)
	}
}

// TestPipelineCloseWithoutEvents: closing an unused pipeline returns at once.
func TestPipelineCloseWithoutEvents(t *testing.T) {
	p := NewPipeline(HandlerFunc(func(*Event) error { t.Fatal("no event expected"); return nil }))
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
}
