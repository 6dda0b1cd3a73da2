package node

import (
	"os"
	"strconv"
)

// envInt reads a positive whole number from the environment, else def.
func envInt(name string, def int) int {
	if n, err := strconv.Atoi(os.Getenv(name)); err == nil && n > 0 {
		return n
	}
	return def
}
