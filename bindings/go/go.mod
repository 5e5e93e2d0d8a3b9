module github.com/semroute/semroute/bindings/go

go 1.19
