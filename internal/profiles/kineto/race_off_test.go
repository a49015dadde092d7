//go:build !race

package kineto

const raceEnabled = false
