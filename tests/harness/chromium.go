// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package harness

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// CheckReportInChromium opens a self-contained HTML report in headless
// Chromium (the Debian package; skipped when missing outside CI, failed
// under CI where .ci/run installs it) with the flags the demo issue
// prescribes and a fresh profile: the screenshot must be a real, non-blank
// 1280x2400 image; every chart in charts (svg.chart with that data-chart)
// must have been laid out with a non-zero size (the report's script writes
// data-rendered="WxH"); and the network log must show no request started by
// the page and no http(s) URL other than Chromium's own background hosts.
func CheckReportInChromium(t testing.TB, report string, charts []string) {
	t.Helper()
	if _, err := os.Stat(chromiumPath); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("%s is missing: install the Debian package chromium (.ci/run does)", chromiumPath)
		}
		t.Skipf("%s is missing; install the chromium package to run this check", chromiumPath)
	}
	abs, err := filepath.Abs(report)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	url := "file://" + abs
	shot := filepath.Join(dir, "shot.png")
	netShot := filepath.Join(dir, "netlog-shot.json")
	runChromium(t, dir, netShot, url, "--screenshot="+shot)
	checkScreenshot(t, shot)
	netDOM := filepath.Join(dir, "netlog-dom.json")
	dom := runChromium(t, dir, netDOM, url, "--dump-dom")
	checkRenderedCharts(t, string(dom), charts)
	for _, nl := range []string{netShot, netDOM} {
		checkNetlog(t, nl)
	}
}

const chromiumPath = "/usr/bin/chromium"

// chromiumTimeout allows for Chromium's slow start on 2 cores.
const chromiumTimeout = 60 * time.Second

// runChromium runs headless Chromium on url with a fresh profile and a net
// log, and returns its stdout. The whole process group is killed when it
// times out or fails, so no renderer or zygote outlives the test.
func runChromium(t testing.TB, dir, netlog string, url string, extra ...string) []byte {
	t.Helper()
	profile, err := os.MkdirTemp(dir, "profile-")
	if err != nil {
		t.Fatal(err)
	}
	args := append([]string{
		"--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--user-data-dir=" + profile, "--log-net-log=" + netlog, "--window-size=1280,2400",
	}, extra...)
	args = append(args, url)
	ctx, cancel := context.WithTimeout(context.Background(), chromiumTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, chromiumPath, args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	killGroup := func() error {
		if cmd.Process == nil {
			return nil
		}
		err := syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		if errors.Is(err, syscall.ESRCH) {
			return nil
		}
		return err
	}
	cmd.Cancel = killGroup
	cmd.WaitDelay = 5 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err = cmd.Run()
	if err != nil {
		_ = killGroup()
		t.Fatalf("chromium %s after %v: %v (ctx: %v)\nstderr:\n%s", strings.Join(extra, " "), time.Since(start).Round(time.Millisecond), err, ctx.Err(), tail(stderr.String(), 4000))
	}
	// Chromium has exited; a helper left in its group would keep the profile
	// directory busy, so clear the group either way.
	_ = killGroup()
	t.Logf("chromium %s: %v", strings.Join(extra, " "), time.Since(start).Round(time.Millisecond))
	return stdout.Bytes()
}

func checkScreenshot(t testing.TB, path string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatalf("no screenshot: %v", err)
	}
	defer func() { _ = f.Close() }() // read only: a failed close loses nothing
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("screenshot is not a PNG: %v", err)
	}
	b := img.Bounds()
	if b.Dx() != 1280 || b.Dy() != 2400 {
		t.Fatalf("screenshot is %dx%d, want 1280x2400", b.Dx(), b.Dy())
	}
	colors := map[[3]uint32]bool{}
	for y := b.Min.Y; y < b.Max.Y; y += 3 {
		for x := b.Min.X; x < b.Max.X; x += 3 {
			r, g, bl, _ := img.At(x, y).RGBA()
			colors[[3]uint32{r >> 8, g >> 8, bl >> 8}] = true
		}
	}
	// A blank or error page has a handful of colours; the charts' lines,
	// palette and text give hundreds with antialiasing.
	if len(colors) < 20 {
		t.Fatalf("screenshot looks blank: %d distinct colours", len(colors))
	}
	t.Logf("screenshot %dx%d, %d distinct colours", b.Dx(), b.Dy(), len(colors))
}

var (
	svgTagRE   = regexp.MustCompile(`<svg [^>]*class="chart"[^>]*>`)
	attrRE     = regexp.MustCompile(`\s([a-z-]+)="([^"]*)"`)
	renderedRE = regexp.MustCompile(`^(\d+)x(\d+)$`)
)

func checkRenderedCharts(t testing.TB, dom string, charts []string) {
	t.Helper()
	seen := map[string]string{}
	for _, tag := range svgTagRE.FindAllString(dom, -1) {
		attrs := map[string]string{}
		for _, m := range attrRE.FindAllStringSubmatch(tag, -1) {
			attrs[m[1]] = m[2]
		}
		seen[attrs["data-chart"]] = attrs["data-rendered"]
	}
	for _, key := range charts {
		r, ok := seen[key]
		if !ok {
			t.Errorf("chart %s not in the rendered DOM", key)
			continue
		}
		m := renderedRE.FindStringSubmatch(r)
		if m == nil {
			t.Errorf("chart %s: data-rendered=%q, the page's script did not measure it", key, r)
			continue
		}
		w, _ := strconv.Atoi(m[1])
		h, _ := strconv.Atoi(m[2])
		if w <= 0 || h <= 0 {
			t.Errorf("chart %s rendered %dx%d", key, w, h)
		}
		t.Logf("chart %s rendered %s", key, r)
	}
}

// chromiumOwnHosts are the Google service hosts Chromium itself contacts in
// the background (account sign-in, search-box prefetch), whatever page is
// open and despite --disable-background-networking: they show up in the net
// log of an empty page too. Nothing in a report names them, so a request
// to any other host is the report's.
var chromiumOwnHosts = []string{"google.com", "googleapis.com", "gstatic.com", "gvt1.com", "googleusercontent.com"}

var (
	urlRE  = regexp.MustCompile(`(?i)https?://[^\s"<>]+`)
	hostRE = regexp.MustCompile(`^[A-Za-z0-9.-]*`)
)

func chromiumOwn(host string) bool {
	host = strings.ToLower(host)
	for _, h := range chromiumOwnHosts {
		if host == h || strings.HasSuffix(host, "."+h) {
			return true
		}
	}
	return false
}

// checkNetlog asserts that loading the report made no network request: no
// net-log event references an http(s) URL other than Chromium's own
// background traffic, and no request at all was initiated by the page (the
// renderer always names its document as initiator; the browser's own
// requests have "not an origin").
func checkNetlog(t testing.TB, path string) {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("net log: %v", err)
	}
	var nl struct {
		Events []json.RawMessage `json:"events"`
	}
	if err := json.Unmarshal(raw, &nl); err != nil {
		// Chromium may end the file without closing the events array when it
		// exits quickly; close it ourselves before giving up.
		fixed := strings.TrimRight(strings.TrimSpace(string(raw)), ",") + "]}"
		if err2 := json.Unmarshal([]byte(fixed), &nl); err2 != nil {
			t.Fatalf("net log %s is not JSON: %v", path, err)
		}
	}
	if len(nl.Events) == 0 {
		t.Fatalf("net log %s has no events: was --log-net-log honoured?", path)
	}
	ignored := map[string]int{}
	for _, ev := range nl.Events {
		var v struct {
			Params map[string]any `json:"params"`
		}
		if err := json.Unmarshal(ev, &v); err != nil {
			t.Fatalf("net log event: %v", err)
		}
		if ini, ok := v.Params["initiator"].(string); ok && ini != "not an origin" {
			t.Errorf("the page initiated a request: %s", tail(string(ev), 400))
		}
		for _, u := range urlRE.FindAllString(string(ev), -1) {
			host := hostRE.FindString(u[strings.Index(u, "://")+3:])
			if chromiumOwn(host) {
				ignored[host]++
				continue
			}
			t.Errorf("net log event references %q: %s", u, tail(string(ev), 400))
		}
	}
	t.Logf("net log %s: %d events; Chromium's own background hosts ignored: %v", filepath.Base(path), len(nl.Events), ignored)
}

func tail(s string, n int) string {
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}
