// Command classify routes texts with semroute models from Go:
//
//	classify -intent MODEL_DIR [-pii MODEL_DIR] TEXT...
//
// It prints each text's intent with its probability and, with -pii, the
// personal data found in it.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"

	semroute "github.com/semroute/semroute/bindings/go"
)

func main() {
	intentDir := flag.String("intent", "", "sequence classification model directory")
	piiDir := flag.String("pii", "", "token classification (PII) model directory")
	flag.Parse()
	if *intentDir == "" || flag.NArg() == 0 {
		log.Fatal("usage: classify -intent MODEL_DIR [-pii MODEL_DIR] TEXT...")
	}
	intent, err := semroute.Load(*intentDir, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer intent.Close()

	texts := flag.Args()
	results, err := intent.ClassifyBatch(context.Background(), texts)
	if err != nil {
		log.Fatal(err)
	}
	var pii []semroute.TokenResult
	if *piiDir != "" {
		model, err := semroute.Load(*piiDir, nil)
		if err != nil {
			log.Fatal(err)
		}
		defer model.Close()
		if pii, err = model.ClassifyTokensBatch(context.Background(), texts); err != nil {
			log.Fatal(err)
		}
	}
	for i, text := range texts {
		fmt.Printf("%-10s %.4f  %s\n", results[i].Label, results[i].Confidence, text)
		if pii != nil {
			for _, e := range pii[i].Entities {
				fmt.Printf("    %-8s [%d, %d) %.4f  %q\n", e.Type, e.Begin, e.End, e.Score, e.Text)
			}
		}
	}
}
