//go:build !desktop

package app

import "context"

// hasWindow: the headless build has no window; `ensemble desktop` says how to get one.
const hasWindow = false

func runWindow(context.Context, *desktopSession) error { return errNoWindow }
