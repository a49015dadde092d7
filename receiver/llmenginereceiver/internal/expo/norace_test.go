//go:build !race

package expo

const raceEnabled = false
