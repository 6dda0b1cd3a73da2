package app

import (
	"fmt"
	"net"
	"os"
	"os/signal"
	"strconv"
	"syscall"

	"github.com/spf13/cobra"
)

func newServeCmd(g *globals) *cobra.Command {
	var addr string
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Run the runtime headless: API, web UI and events on 127.0.0.1",
		Long: `Run the Ensemble runtime without a window, as on a home server.

It listens on 127.0.0.1 only (port 4000, or a free port when 4000 is taken), keeps its
database in the data folder, and writes api.json there so that the other commands find it.
It prints the address and a one-time link that signs a browser in. Stop it with Ctrl-C
or SIGTERM; it finishes what it is writing and removes api.json.`,
		Example: `  ensemble serve
  ensemble serve --addr 127.0.0.1:4100 --data ~/ensemble-test`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			dir, err := dataDir(g.data)
			if err != nil {
				return err
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			open := ownCommand(g, dir)
			rt, err := startRuntime(ctx, runtimeConfig{DataDir: dir, Addr: addr, Log: g.log, Command: open})
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			if want, got := portOf(addr), rt.ln.Addr().(*net.TCPAddr).Port; want != 0 && want != got {
				fmt.Fprintf(out, "Port %d is taken, so Ensemble listens on port %d instead.\n", want, got)
			}
			fmt.Fprintf(out, "Ensemble %s is running at %s\n", Version, rt.URL)
			fmt.Fprintf(out, "Open this link to sign in (it works once, within 5 minutes):\n  %s\n", rt.SigninPageURL())
			fmt.Fprintf(out, "For a new link later, run: %s open\n", open)
			fmt.Fprintf(out, "Data folder: %s\n", dir)
			select {
			case <-ctx.Done():
			case err := <-rt.Done():
				rt.Close()
				return fmt.Errorf("server stopped: %w", err)
			}
			stop() // a second Ctrl-C while it stops ends the process at once
			fmt.Fprintln(out, "Stopping…")
			return rt.Close()
		},
	}
	cmd.Flags().StringVar(&addr, "addr", "127.0.0.1:4000", "loopback address to listen on; a taken port falls back to a free one")
	return cmd
}

// portOf is the port of a host:port address; 0 when it has none or asks for any free one.
func portOf(addr string) int {
	_, p, err := net.SplitHostPort(addr)
	if err != nil {
		return 0
	}
	n, _ := strconv.Atoi(p)
	return n
}
