// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package llmnormalizeprocessor // import "github.com/llmops-otel/otelcol-llmops/processor/llmnormalizeprocessor"

import (
	"context"
	"strconv"
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/llmops-otel/otelcol-llmops/internal/spec"
)

// spanRenames moves deprecated and application-specific GenAI attributes to
// current semantic conventions. An attribute already present under its new
// name wins; the old one is removed either way. A prompt chain's template
// id is semconv's gen_ai.prompt.name; whether it fell back has no semconv
// counterpart, so it gets one llm.app.* name (chainAttrs below).
var spanRenames = []labelRename{
	{"gen_ai.usage.prompt_tokens", spec.AttrGenAIUsageInputTokens},
	{"gen_ai.usage.completion_tokens", spec.AttrGenAIUsageOutputTokens},
	{"gen_ai.system", spec.AttrGenAIProviderName},
	{"llm.model", spec.AttrGenAIRequestModel},
	{"llm.input_tokens", spec.AttrGenAIUsageInputTokens},
	{"llm.output_tokens", spec.AttrGenAIUsageOutputTokens},
	{"llm.prompt_template_id", spec.AttrGenAIPromptName},
	{"prompt_template_id", spec.AttrGenAIPromptName},
	{"prompt.template_id", spec.AttrGenAIPromptName},
	{"llm.fallback_triggered", spec.AttrAppFallbackTriggered},
	{"fallback_triggered", spec.AttrAppFallbackTriggered},
}

// retrievalDurations are the spellings of a prompt chain's retrieval time,
// with the factor to seconds; they become llm.app.retrieval.duration (s).
var retrievalDurations = []struct {
	key    string
	factor float64
}{
	{"retrieval_latency_ms", 1e-3},
	{"llm.retrieval_latency_ms", 1e-3},
	{"rag.retrieval_latency_ms", 1e-3},
	{"retrieval.latency_ms", 1e-3},
	{"retrieval_latency_s", 1},
	{"retrieval.duration", 1},
}

// chainAttrs normalises a prompt chain's own attributes: the retrieval
// time in seconds as a double, and the fallback flag as a boolean (it is
// often written as the string "true").
func chainAttrs(attrs pcommon.Map) {
	for _, rd := range retrievalDurations {
		v, ok := attrs.Get(rd.key)
		if !ok {
			continue
		}
		if _, exists := attrs.Get(spec.AttrAppRetrievalDuration); !exists {
			var f float64
			switch v.Type() {
			case pcommon.ValueTypeDouble:
				f, ok = v.Double(), true
			case pcommon.ValueTypeInt:
				f, ok = float64(v.Int()), true
			case pcommon.ValueTypeStr:
				var err error
				f, err = strconv.ParseFloat(strings.TrimSpace(v.Str()), 64)
				ok = err == nil
			default:
				ok = false
			}
			if !ok {
				continue // not a number: leave it as it came, under its own name
			}
			attrs.PutDouble(spec.AttrAppRetrievalDuration, f*rd.factor)
		}
		attrs.Remove(rd.key)
	}
	if v, ok := attrs.Get(spec.AttrAppFallbackTriggered); ok && v.Type() == pcommon.ValueTypeStr {
		if b, err := strconv.ParseBool(strings.TrimSpace(v.Str())); err == nil {
			attrs.PutBool(spec.AttrAppFallbackTriggered, b)
		}
	}
}

// linkTraceIDAttr holds the normalised, joinable form of a trace id found
// in another attribute.
const linkTraceIDAttr = spec.AttrLinkTraceID

func (n *normalizer) processTraces(_ context.Context, td ptrace.Traces) (ptrace.Traces, error) {
	rss := td.ResourceSpans()
	for i := 0; i < rss.Len(); i++ {
		n.normalizeAttrs(rss.At(i).Resource().Attributes())
		sss := rss.At(i).ScopeSpans()
		for j := 0; j < sss.Len(); j++ {
			spans := sss.At(j).Spans()
			for k := 0; k < spans.Len(); k++ {
				n.normalizeAttrs(spans.At(k).Attributes())
			}
		}
	}
	return td, nil
}

func (n *normalizer) normalizeAttrs(attrs pcommon.Map) {
	renameAttrs(attrs, spanRenames)
	chainAttrs(attrs)
	for _, key := range n.traceIDs {
		v, ok := attrs.Get(key)
		if !ok || v.Type() != pcommon.ValueTypeStr {
			continue
		}
		if id, ok := normalizeTraceID(v.Str()); ok {
			if key == linkTraceIDAttr && v.Str() == id {
				break
			}
			attrs.PutStr(linkTraceIDAttr, id)
			break
		}
	}
}

// normalizeTraceID turns a trace id written as AWS X-Ray
// (1-5e273f9a-1b2c3d4e5f6a7b8c9d0e1f2a), as hex in any case, or as a
// dashed UUID into W3C's lower-case 32 hex digits. An all-zero id is
// invalid.
func normalizeTraceID(s string) (string, bool) {
	s = strings.TrimSpace(s)
	switch {
	case strings.HasPrefix(s, "1-") && len(s) == 35 && s[10] == '-':
		s = s[2:10] + s[11:]
	case len(s) == 36 && s[8] == '-' && s[13] == '-' && s[18] == '-' && s[23] == '-':
		s = s[:8] + s[9:13] + s[14:18] + s[19:23] + s[24:]
	case strings.HasPrefix(s, "0x") || strings.HasPrefix(s, "0X"):
		s = s[2:]
	}
	if len(s) != 32 {
		return "", false
	}
	var b [32]byte
	zero := true
	for i := 0; i < 32; i++ {
		c := s[i]
		switch {
		case c >= '0' && c <= '9':
		case c >= 'a' && c <= 'f':
		case c >= 'A' && c <= 'F':
			c += 'a' - 'A'
		default:
			return "", false
		}
		if c != '0' {
			zero = false
		}
		b[i] = c
	}
	if zero {
		return "", false
	}
	return string(b[:]), true
}
