//go:build desktop

package app

// This is the one file that imports Wails. Build it with `make desktop`
// (-tags desktop,production and, on Linux, webkit2_41).

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"net/http"

	"github.com/wailsapp/wails/v2"
	"github.com/wailsapp/wails/v2/pkg/menu"
	"github.com/wailsapp/wails/v2/pkg/menu/keys"
	"github.com/wailsapp/wails/v2/pkg/options"
	"github.com/wailsapp/wails/v2/pkg/options/assetserver"
	wruntime "github.com/wailsapp/wails/v2/pkg/runtime"

	"github.com/ensemblework/ensemble/runtime/needs"
)

const hasWindow = true

func runWindow(ctx context.Context, s *desktopSession) error {
	state := loadWindowState(s.dir)
	var wctx context.Context
	appMenu, needsItem := windowMenu(&wctx, s)
	id := sha256.Sum256([]byte(s.dir))
	return wails.Run(&options.App{
		Title:     "Ensemble",
		Width:     state.Width,
		Height:    state.Height,
		MinWidth:  380,
		MinHeight: 480,
		AssetServer: &assetserver.Options{
			Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				link, err := s.signin(r.Context())
				if err != nil {
					http.Error(w, err.Error(), http.StatusServiceUnavailable)
					return
				}
				w.Header().Set("Content-Type", "text/html; charset=utf-8")
				w.Write([]byte(startPage(link)))
			}),
		},
		BackgroundColour: &options.RGBA{R: 246, G: 247, B: 249, A: 255},
		// A second launch for the same data folder brings this window forward and exits.
		SingleInstanceLock: &options.SingleInstanceLock{
			UniqueId: "work.ensemble.desktop." + hex.EncodeToString(id[:8]),
			OnSecondInstanceLaunch: func(options.SecondInstanceData) {
				wruntime.WindowUnminimise(wctx)
				wruntime.WindowShow(wctx)
			},
		},
		Menu: appMenu,
		OnStartup: func(c context.Context) {
			wctx = c
			go func() {
				<-ctx.Done()
				wruntime.Quit(c)
			}()
			if s.rt != nil {
				go followNeeds(ctx, c, s.rt, needsItem)
			}
			if state.Placed {
				wruntime.WindowSetPosition(c, state.X, state.Y)
			}
		},
		OnBeforeClose: func(c context.Context) bool {
			st := windowState{Placed: true}
			st.Width, st.Height = wruntime.WindowGetSize(c)
			st.X, st.Y = wruntime.WindowGetPosition(c)
			saveWindowState(s.dir, st)
			return false
		},
	})
}

func windowMenu(wctx *context.Context, s *desktopSession) (*menu.Menu, *menu.MenuItem) {
	m := menu.NewMenu()
	app := m.AddSubmenu("Ensemble")
	needs := app.AddText("Nothing needs you", nil, nil)
	needs.Disabled = true
	app.AddSeparator()
	app.AddText("Open in Browser", keys.CmdOrCtrl("b"), func(*menu.CallbackData) {
		if link, err := s.signinPage(*wctx); err == nil {
			openBrowser(*wctx, link)
		}
	})
	app.AddText("Reload", keys.CmdOrCtrl("r"), func(*menu.CallbackData) { wruntime.WindowReloadApp(*wctx) })
	app.AddSeparator()
	app.AddText("Quit", keys.CmdOrCtrl("q"), func(*menu.CallbackData) { wruntime.Quit(*wctx) })
	return m, needs
}

// followNeeds keeps the window's title and menu counting what waits on the person, and notifies
// them of each new decision.
func followNeeds(ctx, wctx context.Context, rt *Runtime, item *menu.MenuItem) {
	seen := map[string]bool{}
	first := true
	rt.watchNeeds(ctx, func(open []needs.Decision) {
		wruntime.WindowSetTitle(wctx, needsTitle(len(open)))
		item.Label = needsMenuLabel(len(open))
		wruntime.MenuUpdateApplicationMenu(wctx)
		for _, d := range open {
			if !seen[d.ID] && !first {
				notify(ctx, "Ensemble needs you", needsLine(d))
			}
			seen[d.ID] = true
		}
		first = false
	})
}
