//go:build !race

package main

// raceEnabled skips the slowest tests under the race detector.
const raceEnabled = false
