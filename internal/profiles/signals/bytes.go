// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package signals

import "strconv"

var byteUnits = [...]string{"B", "KiB", "MiB", "GiB", "TiB"}

// FormatBytes renders a byte count for people, in binary units with one
// decimal at most: "512 B", "1.8 GiB", "100 MiB", "-3 KiB".
func FormatBytes(n int64) string {
	f := float64(n)
	u := 0
	for (f >= 1024 || f <= -1024) && u < len(byteUnits)-1 {
		f /= 1024
		u++
	}
	if u == 0 {
		return strconv.FormatInt(n, 10) + " B"
	}
	s := strconv.FormatFloat(f, 'f', 1, 64)
	if len(s) > 2 && s[len(s)-2:] == ".0" {
		s = s[:len(s)-2]
	}
	return s + " " + byteUnits[u]
}
