package app

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/cobra"

	"github.com/ensemblework/ensemble/bridge"
)

// bridgeKey is the key from the flag or the environment. ENSEMBLE_BRIDGE_TOKEN is the name the
// hosted bridge's guides use.
func bridgeKey(flag string) string {
	if flag != "" {
		return flag
	}
	if k := os.Getenv("ENSEMBLE_KEY"); k != "" {
		return k
	}
	return os.Getenv("ENSEMBLE_BRIDGE_TOKEN")
}

func newMCPCmd(g *globals) *cobra.Command {
	var useHTTP bool
	var key string
	cmd := &cobra.Command{
		Use:   "mcp",
		Short: "Serve the context bridge (MCP) to editors and agents",
		Long: `Serve Ensemble's context bridge, the MCP server editors and coding agents use to read
your tasks, projects, people, repositories, pages and files, and (with a key that allows
changes) to create and update them.

Editors launch 'ensemble mcp' themselves and speak MCP over its stdin and stdout. With --http it
serves Streamable HTTP at http://127.0.0.1:4010/mcp instead (CONTEXT_BRIDGE_PORT changes the
port; CONTEXT_BRIDGE_HOST must be 127.0.0.1, localhost or ::1). Any program on this computer can
reach that port, so --http refuses to start without a token: set CONTEXT_BRIDGE_HTTP_TOKEN to a
random secret of at least 16 characters, and every request must carry it as
Authorization: Bearer <token>; nothing reads or writes through the HTTP bridge without it.

The bridge uses the ens_ key in ENSEMBLE_KEY (make one with 'ensemble keys create NAME') and
finds the running runtime through api.json in the data folder.`,
		Example: `  ensemble mcp
  ENSEMBLE_KEY=ens_… CONTEXT_BRIDGE_HTTP_TOKEN=$(openssl rand -hex 32) ensemble mcp --http
  ensemble mcp setup claude`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			dir, err := dataDir(g.data)
			if err != nil {
				return err
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			cwd, _ := os.Getwd()
			cfg := bridge.Config{DataDir: dir, Key: bridgeKey(key), Dir: cwd, Local: true, Version: Version, Log: g.log}
			if !useHTTP {
				srv := bridge.New(ctx, cfg).Server()
				err := srv.Run(ctx, &mcp.StdioTransport{})
				if ctx.Err() != nil {
					return nil
				}
				return err
			}
			host := os.Getenv("CONTEXT_BRIDGE_HOST")
			if host == "" {
				host = "127.0.0.1"
			}
			if err := bridge.CheckHost(host); err != nil {
				return err
			}
			port := os.Getenv("CONTEXT_BRIDGE_PORT")
			if port == "" {
				port = "4010"
			}
			token := os.Getenv("CONTEXT_BRIDGE_HTTP_TOKEN")
			if err := bridge.CheckHTTPToken(token); err != nil {
				return err
			}
			ln, err := net.Listen("tcp", net.JoinHostPort(host, port))
			if err != nil {
				return fmt.Errorf("the context bridge cannot listen on %s: %w", net.JoinHostPort(host, port), err)
			}
			b := bridge.New(ctx, cfg)
			hs := &http.Server{Handler: bridge.HTTPHandler(b.Server(), token), ReadHeaderTimeout: 10 * time.Second}
			fmt.Fprintf(cmd.ErrOrStderr(), "Ensemble context bridge at http://%s/mcp\n", ln.Addr())
			go func() {
				<-ctx.Done()
				sctx, cancel := contextWithTimeout(5 * time.Second)
				defer cancel()
				hs.Shutdown(sctx)
			}()
			if err := hs.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
				return err
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&useHTTP, "http", false, "serve Streamable HTTP on 127.0.0.1:4010/mcp instead of stdio; needs CONTEXT_BRIDGE_HTTP_TOKEN")
	cmd.Flags().StringVar(&key, "key", "", "the ens_ key (default $ENSEMBLE_KEY); prefer the environment, which other users cannot read")
	cmd.AddCommand(newMCPSetupCmd(g))
	return cmd
}

func contextWithTimeout(d time.Duration) (ctx context.Context, cancel context.CancelFunc) {
	return context.WithTimeout(context.Background(), d)
}
