// Settings → Secrets: the run secrets kept on this computer (GET /api/secrets), and saving one
// sealed for the runtime's key (PUT /api/secrets/{name}/sealed, spec 002 §8.7.2): the value is
// encrypted in this page, so no request carries it in the clear, from this computer or a phone
// through the relay. Shapes from runtime/secrets/secrets.go and runtime/api/sealed.go.

import { request } from './api';
import { fromB64url, keyId, randomId, sealFor, type SealKey } from './seal';

export interface RunSecret {
  name: string;
  kind: 'run' | 'provider';
  allow: string[];
  createdAt: string;
  updatedAt: string;
}

/** The name as typed, without the spaces a paste brings; the runtime says what else is wrong with it. */
export function cleanName(s: string): string {
  return s.trim();
}

/** Allowed origins typed one per line or separated by commas or spaces; duplicates dropped. */
export function parseOrigins(s: string): string[] {
  const out: string[] = [];
  for (const o of s.split(/[\s,]+/)) {
    const t = o.trim().replace(/\/+$/, '');
    if (t && !out.includes(t)) out.push(t);
  }
  return out;
}

/** Where a secret may go, in words. */
export function allowText(allow: readonly string[] | null | undefined): string {
  if (!allow?.length) return 'Given to runs in their environment';
  return `Sent only to ${allow.join(', ')}`;
}

const enc = encodeURIComponent;

/** Run secrets, by name; provider keys are Settings → Model providers'. */
export function runSecrets(list: readonly RunSecret[] | null | undefined): RunSecret[] {
  return (list ?? []).filter((s) => s.kind === 'run');
}

/** The runtime's key with the fingerprint worked out here, from the key itself (never trusted as sent). */
export async function checkedKey(key: SealKey): Promise<SealKey & { fingerprint: string }> {
  const { kid, fingerprint } = await keyId(fromB64url(key.spki));
  if (kid !== key.kid) throw new Error('The key this computer gave is not the one its id names; reload the page.');
  return { ...key, fingerprint };
}

export const secretsApi = {
  list: () => request<{ secrets: RunSecret[] | null }>('GET', '/api/secrets').then((r) => runSecrets(r.secrets)),
  sealKey: () => request<SealKey>('GET', '/api/secrets/seal-key').then(checkedKey),
  remove: (name: string) => request<unknown>('DELETE', `/api/secrets/${enc(name)}`),
  /** Seals value (and allow) for key in this page, then sends only the box. */
  saveSealed: async (key: SealKey, name: string, value: string, allow: string[], origin = location.origin) => {
    const decisionId = `settings-${randomId()}`;
    const sealed = await sealFor(key, { deviceId: key.kid, decisionId, name, origin }, { value, allow });
    return request<unknown>('PUT', `/api/secrets/${enc(name)}/sealed`, { sealed, decisionId });
  },
};
