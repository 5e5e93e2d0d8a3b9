//go:build cgo

package semroute_test

import (
	"fmt"
	"os"
	"path/filepath"

	semroute "github.com/semroute/semroute/bindings/go"
)

func Example() {
	model, err := semroute.Load(filepath.Join(os.Getenv("SEMROUTE_TEST_MODELS"), "intent"), nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer model.Close()

	result, err := model.Classify("What is the derivative of x^2?")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("labels:", model.Info().Labels)
	fmt.Println("probabilities:", len(result.Probabilities))
	// Output:
	// labels: [math law biology other]
	// probabilities: 4
}
