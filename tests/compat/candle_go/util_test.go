package candlecompat

import "fmt"

func fmtSscan(s string, a ...interface{}) (int, error) { return fmt.Sscan(s, a...) }
