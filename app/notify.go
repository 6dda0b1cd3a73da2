package app

import (
	"context"
	"os/exec"
	"runtime"
	"strconv"
	"time"
)

// notify shows a desktop notification with the OS's own tool, when it has one: notify-send on
// Linux, osascript on macOS, a PowerShell balloon on Windows. It never blocks for long, and a
// computer without the tool simply shows none (the window's title still counts).
func notify(ctx context.Context, title, body string) {
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	var cmd *exec.Cmd
	switch runtime.GOOS {
	case "linux", "freebsd", "openbsd":
		if _, err := exec.LookPath("notify-send"); err != nil {
			cancel()
			return
		}
		cmd = exec.CommandContext(ctx, "notify-send", "--app-name=Ensemble", title, body)
	case "darwin":
		cmd = exec.CommandContext(ctx, "osascript", "-e",
			"display notification "+strconv.Quote(body)+" with title "+strconv.Quote(title))
	case "windows":
		script := `Add-Type -AssemblyName System.Windows.Forms; $n = New-Object System.Windows.Forms.NotifyIcon; ` +
			`$n.Icon = [System.Drawing.SystemIcons]::Information; $n.Visible = $true; ` +
			`$n.ShowBalloonTip(10000, ` + psQuote(title) + `, ` + psQuote(body) + `, 'Info'); Start-Sleep -Seconds 10; $n.Dispose()`
		cmd = exec.CommandContext(ctx, "powershell", "-NoProfile", "-WindowStyle", "Hidden", "-Command", script)
	default:
		cancel()
		return
	}
	if err := cmd.Start(); err != nil {
		cancel()
		return
	}
	go func() {
		cmd.Wait()
		cancel()
	}()
}

func psQuote(s string) string {
	out := "'"
	for _, r := range s {
		if r == '\'' {
			out += "''"
		} else {
			out += string(r)
		}
	}
	return out + "'"
}
