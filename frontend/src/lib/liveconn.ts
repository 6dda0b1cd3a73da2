// A live view's WebSocket (runtime/api/takeovers.go): the page seals a fresh secret for this
// computer's key and sends it first; everything after is encrypted both ways (e2e.ts). Frames are
// said seen once drawn, so at most two are on their way; a ping every 20 seconds keeps the view
// from ending for a minute without the page. A browser's frames are pictures (browserframe.ts),
// handed over as the header and the JPEG's bytes.

import { decodeBrowserFrame, type BrowserEvent, type JpegFrame } from './browserframe';
import { PageChannel, newSecret } from './e2e';
import type { TerminalFrame } from './liveview';
import { b64url, sealFor } from './seal';
import { secretsApi } from './secrets';
import { apiURL } from './session';

export type ViewEvent =
  | { t: 'tty'; text: string }
  | { t: 'tty-key'; key: string }
  | { t: 'tty-size'; cols: number; rows: number }
  | { t: 'ping' }
  | { t: 'seen'; seq: number }
  | BrowserEvent;

export interface LiveHandlers {
  onframe?: (f: TerminalFrame) => void;
  /** A browser's picture; its JPEG's bytes are the handler's to keep. */
  onpicture?: (f: JpegFrame) => void;
  /** The view ended: the runtime's reason (stopped, closed, …) or the connection's sentence. */
  onend: (reason: string) => void;
}

const PING_MS = 20_000;
const td = new TextDecoder();

export function takeoverSocketURL(loc: Pick<Location, 'protocol' | 'host'>, id: string): string {
  const scheme = loc.protocol === 'https:' ? 'wss:' : 'ws:';
  return `${scheme}//${loc.host}${apiURL(`/api/node/takeovers/${encodeURIComponent(id)}/ws`)}`;
}

export class LiveConnection {
  private ws: WebSocket | null = null;
  private ch: PageChannel | null = null;
  private ping: ReturnType<typeof setInterval> | null = null;
  private ended = false;
  // Sealing is async: messages go out in the order they were numbered.
  private queue: Promise<void> = Promise.resolve();

  constructor(private readonly h: LiveHandlers) {}

  /** Starts the view; name is what its start is sealed with: a terminal's session, a browser's tab. */
  async start(takeoverId: string, session: string): Promise<void> {
    const key = await secretsApi.sealKey();
    const secret = newSecret();
    const sealed = await sealFor(
      key,
      { purpose: 'takeover', deviceId: key.kid, decisionId: takeoverId, name: session, origin: location.origin, expiresAt: new Date(Date.now() + 2 * 60_000).toISOString() },
      { value: b64url(secret) },
    );
    this.ch = await PageChannel.create(secret, takeoverId);
    const ws = new WebSocket(takeoverSocketURL(location, takeoverId));
    ws.binaryType = 'arraybuffer';
    this.ws = ws;
    ws.onopen = () => {
      ws.send(JSON.stringify({ sealed }));
      this.ping = setInterval(() => this.send({ t: 'ping' }), PING_MS);
    };
    // Frames are opened one after another: their numbers must rise in the order they came.
    let opening: Promise<void> = Promise.resolve();
    ws.onmessage = (ev) => {
      if (!(ev.data instanceof ArrayBuffer)) return;
      const data = new Uint8Array(ev.data);
      opening = opening.then(async () => {
        if (!this.ch || this.ended) return;
        let msg: { t: string; seq?: number; reason?: string };
        try {
          const plain = await this.ch.openBytes(data);
          const pic = decodeBrowserFrame(plain);
          if (pic) {
            this.h.onpicture?.(pic);
            this.send({ t: 'seen', seq: pic.header.seq });
            return;
          }
          msg = JSON.parse(td.decode(plain));
        } catch {
          this.finish('A message from this computer did not open; the view was closed.');
          return;
        }
        if (msg.t === 'frame') {
          this.h.onframe?.(msg as TerminalFrame);
          this.send({ t: 'seen', seq: msg.seq ?? 0 });
        } else if (msg.t === 'end') {
          this.finish(msg.reason || 'closed');
        }
      });
    };
    ws.onclose = (ev) => this.finish(ev.reason || (ev.code === 1000 ? 'closed' : 'The connection to Ensemble was lost.'));
  }

  /** Sends events, encrypted with the next number. */
  send(...events: ViewEvent[]): void {
    const ws = this.ws;
    const ch = this.ch;
    if (!ws || !ch || this.ended) return;
    this.queue = this.queue.then(async () => {
      const msg = await ch.seal(JSON.stringify({ events }));
      if (ws.readyState === WebSocket.OPEN) ws.send(msg);
    });
  }

  close(): void {
    this.ended = true;
    if (this.ping) clearInterval(this.ping);
    this.ws?.close(1000);
  }

  private finish(reason: string): void {
    if (this.ended) return;
    this.ended = true;
    if (this.ping) clearInterval(this.ping);
    this.ws?.close(1000);
    this.h.onend(reason);
  }
}
