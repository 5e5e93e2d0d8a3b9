//go:build !cgo

package semroute

import (
	"errors"
	"testing"
)

func TestWithoutCgoEverythingIsUnavailable(t *testing.T) {
	m, err := Load("anything", nil)
	if !errors.Is(err, ErrUnavailable) || m != nil {
		t.Fatalf("Load = %v, %v; want nil, ErrUnavailable", m, err)
	}
	var none Model
	if _, err := none.Classify("x"); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("Classify: %v", err)
	}
}

func TestWithoutCgoAnswersAreUnavailable(t *testing.T) {
	if _, err := NewCompressor(nil); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("NewCompressor: %v", err)
	}
	if _, err := LoadHallucinationDetector("x", nil); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("LoadHallucinationDetector: %v", err)
	}
}
