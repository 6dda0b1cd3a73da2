// The node's cards that take something typed, sealed in this page for this computer: a sudo card's
// password and a secret card's value (runtime/api/sudo.go, nodesecrets.go).
//
// A sudo card (spec 002 §8.13, as the administrator): the page reads the
// exact command and this computer's seal key, seals the typed password for that key (purpose
// "sudo", the card as the decision, the command's SHA-256 as the name) and sends only the box. The
// runtime opens it once, for that command, and hands it to sudo through its askpass helper.
import { request } from './api';
import { sealFor, type SealKey } from './seal';
import type { Message } from './node';

/** GET /api/node/sudo/{messageId}. */
export interface SudoView {
  messageId: string;
  status: string;
  command: string;
  reason: string;
  folder: string;
  computer: string;
  hash: string;
  tries: number;
  expiresAt?: string;
  purpose: string;
  sealKey: SealKey;
}

const enc = encodeURIComponent;

export const sudoApi = {
  view: (messageId: string) => request<SudoView>('GET', `/api/node/sudo/${enc(messageId)}`),
  /** Runs the command: with the password sealed for this computer, or without one when it is empty. */
  async run(messageId: string, password: string): Promise<Message> {
    if (!password) return request<Message>('POST', `/api/node/sudo/${enc(messageId)}`, { action: 'run' });
    const v = await sudoApi.view(messageId);
    const sealed = await sealFor(
      v.sealKey,
      { purpose: 'sudo', deviceId: v.sealKey.kid, decisionId: messageId, name: v.hash, origin: location.origin },
      { value: password },
    );
    return request<Message>('POST', `/api/node/sudo/${enc(messageId)}`, { action: 'run', sealed });
  },
  deny: (messageId: string) => request<Message>('POST', `/api/node/sudo/${enc(messageId)}`, { action: 'deny' }),
};

/** GET /api/node/secrets/{messageId}: a node's request for a secret. */
export interface SecretCardView {
  messageId: string;
  status: string;
  name: string;
  why: string;
  allow: string[];
  route: { mode: string };
  sealKey: SealKey;
}

/** A node's secret card: the value is sealed in this page for this computer (the card, the name). */
export const secretCardApi = {
  view: (messageId: string) => request<SecretCardView>('GET', `/api/node/secrets/${enc(messageId)}`),
  async save(messageId: string, value: string, allow: string[]): Promise<Message> {
    const v = await secretCardApi.view(messageId);
    const sealed = await sealFor(v.sealKey, { deviceId: v.sealKey.kid, decisionId: messageId, name: v.name, origin: location.origin }, { value });
    return request<Message>('POST', `/api/node/secrets/${enc(messageId)}`, { sealed, allow });
  },
};

/** GET /api/node/logins/{messageId}: a login card's state and what it offers. */
export interface LoginView {
  message: Message;
  card: import('./node').Card;
  offers: ('local' | 'takeover' | 'done' | 'decline' | string)[];
}

/** A node's login card (spec 002 §8.16.1): the owner signs in on this computer, says they are done, or declines. */
export const loginApi = {
  view: (messageId: string) => request<LoginView>('GET', `/api/node/logins/${enc(messageId)}`),
  answer: (messageId: string, action: 'local' | 'done' | 'check' | 'decline') =>
    request<Message>('POST', `/api/node/logins/${enc(messageId)}`, { action }),
};

/** The sites whose captures wait for the owner's preview (every node's): GET/PUT /api/node/preview-sites. */
/** The owner's rules for capturing a site: its captures wait for them first, or it is never captured. */
export type SiteRule = 'preview' | 'never';

/** The sites with a capture rule, for every node and run (one rule per site). */
export function captureSitesApi(rule: SiteRule) {
  const path = `/api/node/${rule}-sites`;
  return {
    list: () => request<{ sites: string[] }>('GET', path).then((r) => r.sites ?? []),
    set: (sites: string[]) => request<{ sites: string[] }>('PUT', path, { sites }).then((r) => r.sites ?? []),
  };
}
