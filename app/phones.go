package app

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"github.com/ensemblework/ensemble/runtime/events"
	"log/slog"
	"net/http"
	"path/filepath"
	"sync"
	"time"

	"golang.org/x/crypto/acme"
	"golang.org/x/crypto/acme/autocert"

	"github.com/ensemblework/ensemble/relay"
	"github.com/ensemblework/ensemble/runtime/api"
	"github.com/ensemblework/ensemble/runtime/ledger"
)

// Event kinds of phone access.
const (
	// phoneTakenEvent: another runtime with this computer's phone key took its address on the relay
	// (data: phoneTaken).
	phoneTakenEvent events.Kind = "phone.taken"
	// phoneRotatedEvent: the runtime has a new phone key and address; every phone was signed out
	// (data: {host}).
	phoneRotatedEvent events.Kind = "phone.rotated"
)

// phoneTaken is the data of a phone.taken event.
type phoneTaken struct {
	Status   api.PhoneStatus `json:"status"`
	Sentence string          `json:"sentence"`
}

// phoneRotated is the data of a phone.rotated event.
type phoneRotated struct {
	Host string `json:"host"`
}

// phoneEvents lists the kinds of phone access event, for the catalog.
func phoneEvents() []events.Spec {
	return []events.Spec{{Kind: phoneTakenEvent, Payload: phoneTaken{}}, {Kind: phoneRotatedEvent, Payload: phoneRotated{}}}
}

// phoneAccess is the runtime's tunnel to its relay and the TLS that ends only here. It is the
// API's [api.PhoneAccess].
type phoneAccess struct {
	dataDir string
	relay   string // the relay's name, with its port when not 443
	seal    relay.Sealer
	client  *relay.Client
	tls     *tls.Config
	acme    *autocert.Manager // nil with a fixed TLS configuration (tests)
	ledger  *ledger.Writer
	log     *slog.Logger
	notify  func(ctx context.Context, title, body string)
	srv     *http.Server // the phone path's server, once started
	done    chan error

	mu         sync.Mutex // guards the following fields
	host       string
	notifiedAt time.Time
}

var _ api.PhoneAccess = (*phoneAccess)(nil)

// newPhoneAccess prepares the tunnel for key; start dials it.
func newPhoneAccess(dataDir string, cfg *relayConfig, key relay.DeviceKey, seal relay.Sealer, w *ledger.Writer,
	log *slog.Logger, notify func(context.Context, string, string)) *phoneAccess {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.TLSClientConfig = &tls.Config{RootCAs: cfg.RootCAs} // nil: the system's roots
	if cfg.Dial != nil {
		tr.DialContext = cfg.Dial
	}
	hc := &http.Client{Transport: tr}
	p := &phoneAccess{dataDir: dataDir, relay: cfg.Relay, seal: seal, ledger: w, log: log, notify: notify,
		host: hostFor(key, cfg.Relay), done: make(chan error, 1), tls: cfg.TLS}
	if p.tls == nil {
		p.acme = &autocert.Manager{
			Prompt: autocert.AcceptTOS,
			// The phone address is whatever the key is now: a rotation changes it.
			HostPolicy: func(_ context.Context, host string) error {
				if host != p.Host() {
					return fmt.Errorf("%s is not this runtime's phone address", host)
				}
				return nil
			},
			Cache:  autocert.DirCache(filepath.Join(dataDir, "relay", "certs")),
			Client: &acme.Client{DirectoryURL: cfg.ACMEDirectory, HTTPClient: hc},
		}
		p.tls = p.acme.TLSConfig() // h2, http/1.1 and acme-tls/1: tls-alpn-01 arrives through the relay
	}
	p.client = relay.NewClient(relay.ClientConfig{Relay: cfg.Relay, Key: key, JoinToken: cfg.JoinToken, HTTPClient: hc, Log: log,
		OnTaken: p.taken})
	return p
}

// start dials the relay and serves phone connections with srv (the API's phone server: the
// runtime's routes and UI under the phone rules).
func (p *phoneAccess) start(srv *http.Server) {
	p.srv = srv
	go srv.Serve(tls.NewListener(p.client, p.tls))
	go func() { p.done <- p.client.Run(context.Background()) }()
	go p.warm(p.Host())
	p.log.Info("phone access on", "url", "https://"+p.Host()+"/")
}

// warm gets host's certificate as soon as the tunnel is up, so the first phone does not wait for it.
func (p *phoneAccess) warm(host string) {
	if p.acme == nil {
		return
	}
	for deadline := time.Now().Add(time.Minute); host == p.Host(); {
		select {
		case <-p.client.Connected():
		case <-time.After(time.Until(deadline)):
			return
		}
		if p.client.Host() == host {
			break
		}
		time.Sleep(50 * time.Millisecond) // the tunnel up is still the old name's
	}
	if _, err := p.acme.GetCertificate(&tls.ClientHelloInfo{ServerName: host, CipherSuites: []uint16{tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256}}); err != nil {
		p.log.Warn("relay: no certificate yet for the phone address", "host", host, "err", err)
	}
}

// Host is the phone address: <id>.<relay name>.
func (p *phoneAccess) Host() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.host
}

// Status is the tunnel as the API shows it.
func (p *phoneAccess) Status() api.PhoneStatus {
	return phoneStatus(p.client.Status())
}

func phoneStatus(st relay.TunnelStatus) api.PhoneStatus {
	out := api.PhoneStatus{Host: st.Host, Up: st.Up, Taken: st.Taken, TakenFrom: st.TakenFrom, Error: st.Err}
	if !st.TakenAt.IsZero() {
		at := st.TakenAt.UTC()
		out.TakenAt = &at
	}
	return out
}

// taken is told when another runtime with this key took the phone address: it says so on the
// event stream (the window's UI and every client follow it) and, the first time and then at
// most every ten minutes, in a desktop notification.
func (p *phoneAccess) taken(st relay.TunnelStatus) {
	ps := phoneStatus(st)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := p.ledger.Exec(ctx, func(tx *ledger.Tx) error {
		return tx.Emit(phoneTakenEvent, ps.Host, phoneTaken{Status: ps, Sentence: ps.TakenSentence()})
	}); err != nil {
		p.log.Warn("relay: the phone address was taken, and the event saying so was not saved", "err", err)
	}
	p.mu.Lock()
	tell := time.Since(p.notifiedAt) > 10*time.Minute
	if tell {
		p.notifiedAt = time.Now()
	}
	p.mu.Unlock()
	if tell && p.notify != nil {
		p.notify(ctx, "Ensemble's phone address is in use elsewhere", ps.TakenSentence())
	}
}

// Rotate gives the runtime a new phone key, and with it a new address and certificate. The key
// is saved before the tunnel changes, so a restart keeps the new one. The API has signed every
// phone out before it asks.
func (p *phoneAccess) Rotate(ctx context.Context) (string, error) {
	k := relay.NewDeviceKey()
	if err := relay.SaveKey(deviceKeyPath(p.dataDir), k, p.seal); err != nil {
		return "", err
	}
	host := hostFor(k, p.relay)
	p.mu.Lock()
	p.host = host
	p.notifiedAt = time.Time{}
	p.mu.Unlock()
	p.client.SetKey(k)
	go p.warm(host)
	if err := p.ledger.Exec(ctx, func(tx *ledger.Tx) error {
		return tx.Emit(phoneRotatedEvent, host, phoneRotated{Host: host})
	}); err != nil {
		p.log.Warn("relay: the event of a new phone address was not saved", "err", err)
	}
	p.log.Info("phone access on a new address", "url", "https://"+host+"/")
	return host, nil
}

// Close stops the tunnel and the phone path's server.
func (p *phoneAccess) Close() error {
	err := p.client.Close()
	if p.srv != nil {
		err = errors.Join(err, p.srv.Close())
	}
	return err
}
