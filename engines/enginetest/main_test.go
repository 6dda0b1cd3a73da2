package enginetest

import (
	"os"
	"testing"
)

func TestMain(m *testing.M) {
	MainHook()
	os.Exit(m.Run())
}
