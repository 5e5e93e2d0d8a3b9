// Package semroute runs the classifiers and embedding models of an LLM
// semantic router in-process: intent and jailbreak classification with full
// probabilities (or independent multi-label scores), PII entity spans with
// byte offsets, long documents window by window, sentence embeddings,
// similarity and top-k search, cross-encoder pair scoring and reranking
// (TaskPairScoring), task heads bound at run time to one shared encoder
// (TaskEncoder, BindHead); the router's decisions (Router); long
// prompts reduced to a skeleton within a token budget (Compressor); and an
// LLM's answer checked for unsupported spans against its context, whole or
// as its SSE stream arrives (HallucinationDetector, Stream).
//
// It links libsemroute through cgo, found with pkg-config:
//
//	PKG_CONFIG_PATH=/opt/semroute/lib/pkgconfig go build
//
// To use a build tree instead of an installation, put its pkgconfig
// directory on the path: PKG_CONFIG_PATH=$SEMROUTE/build/pkgconfig (it holds
// semroute-uninstalled.pc, which pkg-config prefers and which also sets an
// rpath to the build). Without cgo the package still compiles; every call
// then returns ErrUnavailable.
//
// A *Model (like a *Router, *Compressor or *HallucinationDetector) is safe
// for concurrent use by many goroutines; a *Stream is fed by one goroutine
// at a time. Close waits for
// calls in flight; calls after Close return ErrClosed. Results are Go values
// copied out of C memory, which is released before each call returns.
package semroute
