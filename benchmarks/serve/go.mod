module github.com/semroute/semroute/benchmarks/serve

go 1.19

require github.com/semroute/semroute/bindings/go v0.0.0

replace github.com/semroute/semroute/bindings/go => ../../bindings/go
