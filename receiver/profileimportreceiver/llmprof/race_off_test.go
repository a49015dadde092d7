//go:build !race

package llmprof

// raceEnabled skips the slowest tests under the race detector.
const raceEnabled = false
