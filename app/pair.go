package app

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"rsc.io/qr"

	"github.com/ensemblework/ensemble/runtime/api"
	"github.com/ensemblework/ensemble/runtime/secrets"
)

func newPairCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "pair",
		Short: "Pair a phone: show a code to scan that opens Ensemble on it",
		Long: `Pair a phone with the running runtime, through its relay.

It shows a QR code for https://<id>.<relay>/pair#s=<code>. The code works once, within five
minutes; it is in the part of the link browsers never send, and the page removes it from the
phone's history. The phone then keeps a sign-in of its own (a cookie only that address can use);
'ensemble pair list' shows the paired phones and 'ensemble pair revoke' signs one out.

Phone access must be on first: 'ensemble pair setup <relay>', then start Ensemble again.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := connect(cmd.Context(), g)
			if err != nil {
				return err
			}
			var l api.PairLink
			if err := c.do(cmd.Context(), "POST", "/api/pair/links", nil, &l); err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			fmt.Fprintln(out, "Scan this with your phone's camera:")
			fmt.Fprintln(out)
			if err := writeQR(out, l.URL, isTerminal(out)); err != nil {
				return err
			}
			fmt.Fprintf(out, "\nOr open this link on the phone (it works once, until %s):\n  %s\n",
				l.ExpiresAt.Local().Format("15:04"), l.URL)
			return nil
		},
	}
	cmd.AddCommand(newPairListCmd(g), newPairRevokeCmd(g), newPairRotateCmd(g), newPairSetupCmd(g), newPairOffCmd(g))
	return cmd
}

func newPairListCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "list",
		Short: "List the paired phones",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := connect(cmd.Context(), g)
			if err != nil {
				return err
			}
			var res phonesAnswer
			if err := c.do(cmd.Context(), "GET", "/api/pair/devices", nil, &res); err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			writePhoneAccess(out, res)
			if len(res.Devices) == 0 {
				fmt.Fprintln(out, "No phone is paired.")
				return nil
			}
			tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "ID\tNAME\tPAIRED\tLAST SEEN")
			for _, d := range res.Devices {
				seen := "never"
				if d.LastSeenAt != nil {
					seen = d.LastSeenAt.Local().Format(time.DateTime)
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", d.ID, d.Name, d.CreatedAt.Local().Format(time.DateTime), seen)
			}
			return tw.Flush()
		},
	}
}

func newPairRevokeCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "revoke ID",
		Short: "Sign a paired phone out (its next request is refused)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := connect(cmd.Context(), g)
			if err != nil {
				return err
			}
			if err := c.do(cmd.Context(), "DELETE", "/api/pair/devices/"+args[0], nil, nil); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "Signed out %s.\n", args[0])
			return nil
		},
	}
}

func newPairRotateCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "rotate",
		Short: "Give this computer a new phone address and key, signing every phone out",
		Long: `Give the running runtime a new phone key, and with it a new phone address and certificate.
Every paired phone is signed out first (what they have open ends), so a sign-in a copy of the old
key collected opens nothing; the old address leads nowhere near this computer any more. Pair the
phones again with 'ensemble pair'.

Do this when 'ensemble status' says another copy of Ensemble took the phone address and you did
not start one: someone has a copy of the key.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := connect(cmd.Context(), g)
			if err != nil {
				return err
			}
			var res struct {
				URL       string `json:"url"`
				SignedOut int    `json:"signedOut"`
			}
			if err := c.do(cmd.Context(), "POST", "/api/pair/rotate", nil, &res); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "Phones now open %s\nSigned out %d phone(s); pair them again with `ensemble pair`.\n", res.URL, res.SignedOut)
			return nil
		},
	}
}

func newPairSetupCmd(g *globals) *cobra.Command {
	var f relayFile
	cmd := &cobra.Command{
		Use:   "setup RELAY",
		Short: "Turn phone access on through a relay (takes effect when Ensemble starts again)",
		Long: `Turn phone access on: the runtime dials RELAY (a name, with :port when not 443) and phones
reach it at https://<id>.<RELAY>/. Its certificate comes from Let's Encrypt (or --acme-directory)
through the relay; the relay sees only encrypted bytes. The id comes from a key kept in the data
folder: moving that key away gives a new address, and every phone must pair again.`,
		Example: `  ensemble pair setup relay.example.com
  ensemble pair setup relay.test:8443 --acme-directory https://pebble.test:14000/dir --ca pebble-roots.pem`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			dir, err := dataDir(g.data)
			if err != nil {
				return err
			}
			f.Relay = strings.TrimSpace(args[0])
			if h, _, err := net.SplitHostPort(f.Relay); (err == nil && h == "") || strings.ContainsAny(f.Relay, "/ ") {
				return fmt.Errorf("%q is not a relay name; give a name such as relay.example.com", f.Relay)
			}
			if f.CAFile != "" {
				if f.CAFile, err = filepath.Abs(f.CAFile); err != nil {
					return err
				}
				if _, err := loadRoots(f.CAFile); err != nil {
					return err
				}
			}
			if err := os.MkdirAll(dir, 0o700); err != nil {
				return err
			}
			b, _ := json.MarshalIndent(f, "", "  ")
			if err := os.WriteFile(relayFilePath(dir), append(b, '\n'), 0o600); err != nil {
				return fmt.Errorf("save phone access settings: %w", err)
			}
			cfg, _ := loadRelayConfig(dir)
			seal, err := secrets.OpenLocalSealer(dir)
			if err != nil {
				return err
			}
			_, host, err := relayHost(dir, cfg, seal)
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "Phone access is on through %s. Phones will open https://%s/\n"+
				"Start Ensemble again for it to take effect, then run `ensemble pair`.\n", f.Relay, host)
			return nil
		},
	}
	cmd.Flags().StringVar(&f.ACMEDirectory, "acme-directory", "", "ACME directory for the phone address's certificate (default Let's Encrypt)")
	cmd.Flags().StringVar(&f.CAFile, "ca", "", "PEM file of roots to trust for the relay and the ACME server, instead of the system's")
	cmd.Flags().StringVar(&f.JoinToken, "join-token", "", "the join token of a private relay")
	return cmd
}

func newPairOffCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "off",
		Short: "Turn phone access off (takes effect when Ensemble starts again)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			dir, err := dataDir(g.data)
			if err != nil {
				return err
			}
			if err := os.Remove(relayFilePath(dir)); err != nil && !os.IsNotExist(err) {
				return err
			}
			fmt.Fprintln(cmd.OutOrStdout(), "Phone access is off from the next start; paired phones stay paired (`ensemble pair revoke` signs one out).")
			return nil
		},
	}
}

// writeQR draws text as a QR code with half blocks, two modules a character row, with a quiet zone.
// On a terminal it sets the colours itself, so the code scans on dark and light themes alike.
func writeQR(w io.Writer, text string, color bool) error {
	code, err := qr.Encode(text, qr.M)
	if err != nil {
		return fmt.Errorf("make QR code: %w", err)
	}
	const quiet = 2
	n := code.Size
	black := func(x, y int) bool {
		return x >= 0 && y >= 0 && x < n && y < n && code.Black(x, y)
	}
	var b strings.Builder
	for y := -quiet; y < n+quiet; y += 2 {
		if color {
			b.WriteString("\x1b[30;47m") // black on white
		}
		for x := -quiet; x < n+quiet; x++ {
			top, bottom := black(x, y), black(x, y+1)
			switch {
			case color && top && bottom:
				b.WriteString("█")
			case color && top:
				b.WriteString("▀")
			case color && bottom:
				b.WriteString("▄")
			case color:
				b.WriteString(" ")
			// Without colours, draw the light modules, as a dark terminal shows them.
			case !top && !bottom:
				b.WriteString("█")
			case !top:
				b.WriteString("▀")
			case !bottom:
				b.WriteString("▄")
			default:
				b.WriteString(" ")
			}
		}
		if color {
			b.WriteString("\x1b[0m")
		}
		b.WriteString("\n")
	}
	_, err = io.WriteString(w, b.String())
	return err
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
