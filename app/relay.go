package app

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/crypto/acme"
	"golang.org/x/crypto/acme/autocert"

	"github.com/ensemblework/ensemble/relay"
)

// relayConfig turns on phone access: the runtime dials the relay and serves phones at
// https://<id>.<relay name>/.
type relayConfig struct {
	// Relay is the relay's name, with :port when it is not 443.
	Relay string
	// ACMEDirectory is where the runtime gets its certificate (Let's Encrypt when empty).
	ACMEDirectory string
	// RootCAs are extra roots to trust for the relay and the ACME server (a private CA, Pebble).
	RootCAs *x509.CertPool
	// JoinToken is for a private relay.
	JoinToken string
	// TLS replaces ACME with a fixed configuration (tests).
	TLS *tls.Config
	// Dial replaces the address the relay is dialed at (tests); nil dials the relay's name.
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)
}

// deviceKeyPath is where the device key is kept, sealed with the local key.
func deviceKeyPath(dataDir string) string { return filepath.Join(dataDir, "relay", "device.key") }

// relayHost loads (or makes) the device key and returns it with the runtime's relay name.
func relayHost(dataDir string, cfg *relayConfig, seal relay.Sealer) (relay.DeviceKey, string, error) {
	key, err := relay.LoadOrCreateKey(deviceKeyPath(dataDir), seal)
	if err != nil {
		return relay.DeviceKey{}, "", err
	}
	return key, hostFor(key, cfg.Relay), nil
}

// hostFor is the phone address of key on relayName (its port, if any, left out).
func hostFor(key relay.DeviceKey, relayName string) string {
	if h, _, err := net.SplitHostPort(relayName); err == nil {
		relayName = h
	}
	return key.ID() + "." + strings.ToLower(relayName)
}

// loadRoots reads the PEM certificates in path, to trust instead of the system's roots (for a private
// relay's or ACME server's CA, such as Pebble's).
func loadRoots(path string) (*x509.CertPool, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("--relay-ca: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(b) {
		return nil, fmt.Errorf("--relay-ca %s holds no PEM certificate", path)
	}
	return pool, nil
}

// newRelayCmd is `ensemble relay`: the self-hostable relay.
func newRelayCmd(g *globals) *cobra.Command {
	var (
		domain, addr, httpAddr, certDir, acmeDir, email, joinFile, certFile, keyFile, statusFile string
		debug                                                                                    bool
	)
	cmd := &cobra.Command{
		Use:   "relay",
		Short: "Run a relay that phones reach their owners' runtimes through",
		Long: `Run an Ensemble relay: phones open https://<id>.<domain>/ and the relay forwards each
encrypted connection to the runtime with that id, which dialed out to it. TLS ends only in the
runtime, so the relay never sees pages, cookies or pairing codes; it keeps nothing but the
certificate for its own name, and its table of runtimes in memory.

DNS: point <domain> and *.<domain> at this machine. The relay gets its own certificate by
ACME (tls-alpn-01 on :443); each runtime gets its own through the relay. /status serves counters
to this machine only, or to whoever sends the --status-token.

Each source (an IPv4 address, or an IPv6 /64) has a fair share of the relay: connections at once,
phone connections to one runtime, and tunnels.`,
		Example: `  ensemble relay --domain relay.example.com
  ensemble relay --domain relay.test --addr :8443 --cert relay.pem --key relay-key.pem`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if domain == "" {
				return errors.New("--domain is required: the relay's own name (runtimes are <id>.<domain>)")
			}
			cfg := relay.ServerConfig{Domain: domain, Log: g.log, Debug: debug}
			var httpHandler http.Handler = http.HandlerFunc(redirectHTTPS)
			switch {
			case certFile != "" || keyFile != "":
				cert, err := tls.LoadX509KeyPair(certFile, keyFile)
				if err != nil {
					return fmt.Errorf("--cert/--key: %w", err)
				}
				cfg.TLS = &tls.Config{Certificates: []tls.Certificate{cert}, NextProtos: []string{"h2", "http/1.1"}}
			default:
				if certDir == "" {
					dir, err := dataDir(g.data)
					if err != nil {
						return err
					}
					certDir = filepath.Join(dir, "relay-server", "certs")
				}
				m := &autocert.Manager{Prompt: autocert.AcceptTOS, HostPolicy: autocert.HostWhitelist(domain),
					Cache: autocert.DirCache(certDir), Email: email, Client: &acme.Client{DirectoryURL: acmeDir}}
				cfg.TLS = m.TLSConfig()
				httpHandler = m.HTTPHandler(httpHandler)
			}
			if statusFile != "" {
				b, err := os.ReadFile(statusFile)
				if err != nil {
					return fmt.Errorf("--status-token: %w", err)
				}
				if cfg.StatusToken = strings.TrimSpace(string(b)); len(cfg.StatusToken) < 16 {
					return fmt.Errorf("--status-token %s holds fewer than 16 characters; put a long random token in it", statusFile)
				}
			}
			if joinFile != "" {
				b, err := os.ReadFile(joinFile)
				if err != nil {
					return fmt.Errorf("--join-secret: %w", err)
				}
				cfg.JoinSecret = []byte(strings.TrimSpace(string(b)))
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			ln, err := net.Listen("tcp", addr)
			if err != nil {
				return fmt.Errorf("listen on %s: %w", addr, err)
			}
			srv := relay.NewServer(cfg)
			served := make(chan error, 1)
			go func() { served <- srv.Serve(ln) }()
			var hs *http.Server
			if httpAddr != "" {
				hs = &http.Server{Addr: httpAddr, Handler: httpHandler, ReadHeaderTimeout: 10 * time.Second}
				go func() {
					if err := hs.ListenAndServe(); err != nil && !errors.Is(err, http.ErrServerClosed) {
						g.log.Warn("relay: port 80", "err", err)
					}
				}()
			}
			fmt.Fprintf(cmd.OutOrStdout(), "Ensemble relay for %s on %s\n", domain, ln.Addr())
			select {
			case <-ctx.Done():
			case err := <-served:
				return fmt.Errorf("relay stopped: %w", err)
			}
			fmt.Fprintln(cmd.OutOrStdout(), "Stopping: telling runtimes to come back…")
			srv.Close()
			ln.Close()
			if hs != nil {
				hs.Close()
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&domain, "domain", "", "the relay's own name; runtimes are <id>.<domain>")
	f.StringVar(&addr, "addr", ":443", "address for TLS (phones and runtimes)")
	f.StringVar(&httpAddr, "http", ":80", "address that redirects to HTTPS (and answers ACME http-01); empty for none")
	f.StringVar(&certDir, "cert-dir", "", "where the relay keeps its own certificate (default <data>/relay-server/certs)")
	f.StringVar(&acmeDir, "acme-directory", "", "ACME directory URL (default Let's Encrypt)")
	f.StringVar(&email, "email", "", "contact address for the ACME account")
	f.StringVar(&certFile, "cert", "", "a certificate file for the relay's name, instead of ACME")
	f.StringVar(&keyFile, "key", "", "the key file for --cert")
	f.StringVar(&joinFile, "join-secret", "", "a `file` holding a secret that makes this relay private (each runtime then needs the token 'ensemble relay join-token' prints for it)")
	f.StringVar(&statusFile, "status-token", "", "file with a token that lets /status answer from elsewhere (Authorization: Bearer <token>)")
	f.BoolVar(&debug, "debug", false, "log server names of connections")
	cmd.AddCommand(&cobra.Command{
		Use:   "join-token SECRET-FILE ID",
		Short: "Print the join token a runtime with ID needs for a private relay",
		Args:  cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			b, err := os.ReadFile(args[0])
			if err != nil {
				return err
			}
			fmt.Fprintln(cmd.OutOrStdout(), relay.JoinToken([]byte(strings.TrimSpace(string(b))), args[1]))
			return nil
		},
	})
	return cmd
}

func redirectHTTPS(w http.ResponseWriter, r *http.Request) {
	host := r.Host
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	http.Redirect(w, r, "https://"+host+r.URL.RequestURI(), http.StatusMovedPermanently)
}

// relayFile is phone access as `ensemble pair setup` saves it in the data folder: read at each start
// of the runtime (serve or the desktop window).
type relayFile struct {
	Relay         string `json:"relay"`
	ACMEDirectory string `json:"acmeDirectory,omitempty"`
	CAFile        string `json:"caFile,omitempty"`
	JoinToken     string `json:"joinToken,omitempty"`
}

func relayFilePath(dataDir string) string { return filepath.Join(dataDir, "relay.json") }

// loadRelayConfig reads relay.json; nil when phone access is off.
func loadRelayConfig(dataDir string) (*relayConfig, error) {
	b, err := os.ReadFile(relayFilePath(dataDir))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read phone access settings: %w", err)
	}
	var f relayFile
	if err := json.Unmarshal(b, &f); err != nil || f.Relay == "" {
		return nil, fmt.Errorf("%s is damaged; run `ensemble pair setup` again or `ensemble pair off`", relayFilePath(dataDir))
	}
	cfg := &relayConfig{Relay: f.Relay, ACMEDirectory: f.ACMEDirectory, JoinToken: f.JoinToken}
	if f.CAFile != "" {
		if cfg.RootCAs, err = loadRoots(f.CAFile); err != nil {
			return nil, err
		}
	}
	return cfg, nil
}
