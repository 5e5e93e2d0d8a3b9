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
