//go:build race

package kineto

// raceEnabled lets the slowest tests (the 53 MB fixture) stay out of -race
// runs: the parser is single-goroutine, and the race detector slows it 20×.
const raceEnabled = true
