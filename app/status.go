package app

import (
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/ensemblework/ensemble/runtime/api"
)

func newStatusCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "status",
		Short: "Say whether the runtime is running, where, and its version",
		Long: `Say whether an Ensemble runtime is running for the data folder, at which address,
with which process id and version, and how phone access is: its address, whether its tunnel to
the relay is up, and whether another copy of Ensemble with this computer's phone key has taken
the address. Exits 1 when it is not running.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			dir, err := dataDir(g.data)
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			f, err := readAPIFile(dir)
			switch {
			case errors.Is(err, errNotRunning):
				fmt.Fprintf(out, "Ensemble is not running (data folder %s).\n", dir)
				return exitError{1}
			case err != nil:
				return err
			case !healthy(cmd.Context(), f.URL):
				fmt.Fprintf(out, "Ensemble is not answering at %s (pid %d); it may have crashed. Start it again with `ensemble serve`.\n", f.URL, f.PID)
				return exitError{1}
			}
			fmt.Fprintf(out, "Ensemble %s is running at %s (pid %d).\nData folder: %s\n", f.Version, f.URL, f.PID, dir)
			c := &client{f: f, http: httpClient()}
			var res phonesAnswer
			if err := c.do(cmd.Context(), "GET", "/api/pair/devices", nil, &res); err != nil {
				fmt.Fprintf(out, "Phone access: not known (%v).\n", err)
				return nil
			}
			writePhoneAccess(out, res)
			return nil
		},
	}
}

// phonesAnswer is GET /api/pair/devices.
type phonesAnswer struct {
	Devices []api.PairedDevice `json:"devices"`
	Relay   string             `json:"relay"`
	Access  *struct {
		Status api.PhoneStatus `json:"status"`
		Taken  string          `json:"taken"`
	} `json:"access"`
}

// writePhoneAccess says how phone access is, the warning first when the address was taken.
func writePhoneAccess(out io.Writer, res phonesAnswer) {
	if res.Relay == "" {
		fmt.Fprintln(out, "Phone access is off; turn it on with `ensemble pair setup <relay>`.")
		return
	}
	state := ""
	if a := res.Access; a != nil {
		if a.Taken != "" {
			fmt.Fprintf(out, "WARNING: %s\n", a.Taken)
			if a.Status.TakenAt != nil {
				fmt.Fprintf(out, "  (taken %d times, last at %s)\n", a.Status.Taken, a.Status.TakenAt.Local().Format(time.DateTime))
			}
		}
		switch {
		case a.Status.Up:
			state = " (connected to the relay)"
		case a.Status.Error != "":
			state = " (not connected to the relay: " + a.Status.Error + ")"
		default:
			state = " (connecting to the relay)"
		}
	}
	fmt.Fprintf(out, "Phones open https://%s/%s\n", res.Relay, state)
}
