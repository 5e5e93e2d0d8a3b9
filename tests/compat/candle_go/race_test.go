//go:build race

package candlecompat

const raceDetector = true
