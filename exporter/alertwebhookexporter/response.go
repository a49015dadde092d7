// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package alertwebhookexporter

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"go.opentelemetry.io/collector/consumer/consumererror"
)

// What of a response is read and kept. The body is the receiver's, which
// may be a proxy's HTML page, a binary or an endless stream: at most
// maxErrorBody bytes of it go into the error (which is logged and counted),
// and at most maxDrain more are read so that the connection can be reused;
// past that the connection is closed. The reason phrase (the status line's
// text after the code) is the receiver's too, and as long as the header
// limit allows: at most maxReason bytes of it are kept.
const (
	maxErrorBody = 512
	maxDrain     = 1 << 20
	maxReason    = 64
)

// defaultMaxRetryAfter caps Retry-After when retry_on_failure.max_interval
// is not set; it is configretry's default max_interval.
const defaultMaxRetryAfter = 30 * time.Second

// judgeResponse says what an answer to a POST of n incidents to url means:
// nil for 2xx; a retryable error for 408, 429 and 5xx (and any code from
// 600 up, which no standard defines: alerts are kept rather than dropped on
// a broken proxy's word), with wait > 0 when the receiver asked for a delay
// in Retry-After (honoured up to maxWait); a permanent error for anything
// else (3xx that the client did not follow, 4xx, codes below 200). body is
// the start of the response body: at most maxErrorBody bytes of it, made
// printable, go into the error, as do at most maxReason of the reason.
func judgeResponse(url string, n, code int, status, retryAfterHeader string, body []byte, maxWait time.Duration, now time.Time) (wait time.Duration, err error) {
	if code >= 200 && code < 300 {
		return 0, nil
	}
	// "503 Service Unavailable: <body>", leaving out what is empty.
	answer := strconv.Itoa(code)
	if reason := printable([]byte(strings.TrimPrefix(status, answer)), maxReason); reason != "" {
		answer += " " + reason
	}
	if text := printable(body, maxErrorBody); text != "" {
		answer += ": " + text
	}
	if code == http.StatusTooManyRequests || code == http.StatusRequestTimeout || code >= 500 {
		return retryAfter(retryAfterHeader, now, maxWait), fmt.Errorf("POST %s: %s", url, answer)
	}
	// The receiver will not accept this however often it is sent.
	return 0, consumererror.NewPermanent(fmt.Errorf("POST %s refused %d incident(s): %s", url, n, answer))
}

// retryAfter reads a Retry-After header (delay-seconds or an HTTP date) as a
// wait in (0, maxWait]: a longer one is cut to maxWait, so that a receiver
// cannot park the sending queue for hours — nor make exporterhelper drop the
// batch at once because the wait passes max_elapsed_time. 0 (use the
// backoff) for an absent, unparsable, zero or past value.
func retryAfter(h string, now time.Time, maxWait time.Duration) time.Duration {
	h = strings.TrimSpace(h)
	if h == "" || maxWait <= 0 {
		return 0
	}
	var d time.Duration
	if strings.Trim(h, "0123456789") == "" {
		s, err := strconv.ParseUint(h, 10, 64)
		if err != nil || s > uint64(maxWait/time.Second) {
			// More seconds than maxWait holds (or than a uint64 does).
			return maxWait
		}
		d = time.Duration(s) * time.Second
	} else if t, err := http.ParseTime(h); err == nil {
		d = t.Sub(now) // saturates at the int64 range, never wraps
	}
	if d <= 0 {
		return 0
	}
	return min(d, maxWait)
}

// printable turns bytes from the network into text fit for an error
// message and a log line: invalid UTF-8, control and other unprintable
// characters and runs of white space become one space; the result is
// trimmed and cut at a character boundary to at most max bytes, "…" (3
// bytes more) marking a cut. Nothing is ever longer than the input, so the
// result is at most max+3 bytes.
func printable(b []byte, limit int) string {
	var out strings.Builder
	out.Grow(min(len(b), limit+3))
	space := false
	for len(b) > 0 {
		r, size := utf8.DecodeRune(b)
		b = b[size:]
		if (r == utf8.RuneError && size == 1) || unicode.IsSpace(r) || !unicode.IsPrint(r) {
			space = out.Len() > 0
			continue
		}
		need := size
		if space {
			need++
		}
		if out.Len()+need > limit {
			out.WriteString("…")
			return out.String()
		}
		if space {
			out.WriteByte(' ')
			space = false
		}
		out.WriteRune(r)
	}
	return out.String()
}
